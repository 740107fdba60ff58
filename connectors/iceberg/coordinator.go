package iceberg

// Exactly-once, and why (the argument, also in README.md "Exactly-once"):
//
//  1. Each table's snapshot summary holds, under kafka.connect.offsets.<group-id>, the next
//     offset per source topic-partition that the table covers; every commit merges by max.
//  2. A commit reloads the branch head, DROPS every record whose offset is below the head's
//     offset for its partition, writes the rest, and commits with AssertRefSnapshotID (a
//     compare-and-swap on the branch head). Rows a task wrote to data files during the interval
//     (icetable/early.go) are decided the same way: a file goes in as it is only when it holds no such
//     row and no row of a partition revoked since, else its other rows are written again.
//     So the check "already in the table?" and the
//     commit are atomic: if anyone (a zombie task after a rebalance, a second process, a
//     restarted worker) committed in between, the CAS fails, nothing is committed, and the
//     round is retried from the table's new offsets. A record can therefore enter a table at
//     most once, whoever commits it and however often it is re-read.
//  3. The Connect group offset is only ever advanced (via PreCommit) to positions that every
//     table of a fully successful round holds. After any crash, restart or rebalance the task
//     resumes at the group offset, which is at or below every table's offsets, so every record
//     not yet in a table is read again: at least once. With (2): exactly once.
//  4. A failed round (catalog down, CAS conflict) gives the records back to their tasks
//     (Task.roundFailed) and the next round plans them again; tables that did commit in that
//     round skip them by (2). No consumer rewind, so no group rebalance per failed round; while
//     rounds keep failing, Put pushes back with a RetriableError once the buffers are full.
//  5. Within one process a connector has one coordinator, which drains all of its tasks and
//     commits one snapshot per table per interval. Across processes (distributed mode) the
//     coordinators run the control-topic protocol of control.go: one committer commits the
//     files all processes prepared, one snapshot per table per round; (2) there is the check
//     that each part was planned on the head being committed on.
//  6. Written-but-uncommitted files are never referenced by table metadata: orphans only.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

var coordinators = struct {
	mu sync.Mutex
	m  map[string]*coordinator
}{m: map[string]*coordinator{}}

// coordinator commits for all tasks of one connector in this process.
type coordinator struct {
	key string
	cfg *SinkConfig
	log *slog.Logger

	mu     sync.Mutex
	tasks  map[*Task]struct{}
	round  uint64
	cond   *sync.Cond
	fatal  error
	closed bool

	trigger chan struct{}
	stop    chan struct{}
	done    chan struct{}

	lastFailed   bool       // the latest round failed (Put's backpressure)
	roundMu      sync.Mutex // one round at a time
	shutdownOnce sync.Once
	orch         orchestrator // runs the rounds: alone, or with other processes through the control topic
	catMu        sync.Mutex
	cat          catalog.Catalog
	writers      map[string]*icetable.Writer

	counts  coordinatorStats // what the metrics report (metrics.go)
	answers answerWait       // apache protocol: answers no COMMIT_COMPLETE has covered yet (stuck.go)
	maint   *maintainer      // table maintenance between rounds (maintain.go); nil: off
	scd     *scdScheduler    // SCD materialization after rounds (scd_schedule.go); nil: off
	hooks   atomic.Pointer[roundHooks]
}

// roundHooks intervene in a round's table commits, the way franz-go's hooks observe a client: in-package
// tests set them to fail a commit or to stop a round mid-way; nil (the default) changes nothing.
type roundHooks struct {
	// beforeTableCommit returning an error stops the round before that table as if the process died
	// there: neither it nor any later table commits, and nothing is rolled back.
	beforeTableCommit func(table string) error
	// afterTableCommit returning an error replaces a successful commit's answer (as if it was lost).
	afterTableCommit func(table string) error
	// failTableCommit returning an error fails that table's commit without making it (a catalog
	// outage, a lost compare-and-swap): the round fails and the other tables commit as usual.
	failTableCommit func(table string) error
}

// coordinatorStats counts commit rounds.
type coordinatorStats struct {
	Rounds, FailedRounds, Snapshots, DataFiles, DeleteFiles, Records, Skipped int64
	// LedRounds and LedFailed count the rounds this process ran as the committer (control.go).
	LedRounds, LedFailed int64
	LastError            string
	LastDurable          time.Time // when a round last made the tasks' positions durable
}

func joinCoordinator(cfg *SinkConfig, wi connect.WorkerInfo) (*coordinator, error) {
	key := cfg.GroupID
	coordinators.mu.Lock()
	defer coordinators.mu.Unlock()
	if c, ok := coordinators.m[key]; ok && !c.isClosed() {
		return c, nil
	}
	c, err := newCoordinator(cfg, wi)
	if err != nil {
		return nil, err
	}
	coordinators.m[key] = c
	return c, nil
}

// newCoordinator starts a coordinator that no registry knows (joinCoordinator registers it).
func newCoordinator(cfg *SinkConfig, wi connect.WorkerInfo) (*coordinator, error) {
	c := &coordinator{
		key: cfg.GroupID, cfg: cfg, tasks: map[*Task]struct{}{},
		trigger: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		writers: map[string]*icetable.Writer{},
		log:     slog.Default().With("connector", cfg.Name, "component", "iceberg-coordinator"),
	}
	c.cond = sync.NewCond(&c.mu)
	c.maint = newMaintainer(cfg)
	c.scd = newSCDScheduler(cfg, c.stop, c.log)
	distributed := cfg.Coordination == "topic" || (cfg.Coordination == "auto" && wi != nil && wi.Distributed())
	if distributed {
		if wi == nil {
			return nil, fmt.Errorf("%s=topic needs the worker's Kafka settings, which this runtime does not provide", KeyCoordination)
		}
		orch, err := startControl(c, wi)
		if err != nil {
			return nil, err
		}
		c.orch = orch
		close(c.done) // no local loop
	} else {
		c.orch = startLocalCommits(c)
	}
	return c, nil
}

// roundEnded records the end of a round this process took part in and wakes Put's waiters.
func (c *coordinator) roundEnded(ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.round++
	c.counts.Rounds++
	c.lastFailed = !ok
	if !ok {
		c.counts.FailedRounds++
	} else {
		c.counts.LastDurable = time.Now()
	}
	c.cond.Broadcast()
}

// lastRoundFailed reports whether the latest round this process took part in failed.
func (c *coordinator) lastRoundFailed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastFailed
}

// taskList is a snapshot of the registered tasks.
func (c *coordinator) taskList() []*Task {
	c.mu.Lock()
	defer c.mu.Unlock()
	tasks := make([]*Task, 0, len(c.tasks))
	for t := range c.tasks {
		tasks = append(tasks, t)
	}
	return tasks
}

// buffered counts the records buffered in the tasks.
func (c *coordinator) buffered() int {
	tasks := c.taskList()
	n := 0
	for _, t := range tasks {
		t.mu.Lock()
		n += t.nbuf
		t.mu.Unlock()
	}
	return n
}

// stats returns a copy of the counters.
func (c *coordinator) stats() coordinatorStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts
}

func (c *coordinator) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *coordinator) register(t *Task) {
	if pr, ok := t.Ctx.(connect.PluginRuntime); ok {
		registerMetrics(pr.PluginMetrics())
	}
	c.mu.Lock()
	c.tasks[t] = struct{}{}
	c.mu.Unlock()
}

func (c *coordinator) unregister(t *Task) {
	c.mu.Lock()
	delete(c.tasks, t)
	last := len(c.tasks) == 0
	c.mu.Unlock()
	if !last {
		return
	}
	// last task out: one final round for what the stopping task still buffers (distributed:
	// nothing, the partitions' next owner re-reads past the group offsets), then stop.
	c.orch.lastTaskStopping(t)
	c.mu.Lock()
	if len(c.tasks) > 0 { // someone joined meanwhile
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	c.shutdown()
}

// shutdown stops the loops (the caller marked the coordinator closed) and closes the clients;
// only the first call does anything.
func (c *coordinator) shutdown() {
	c.shutdownOnce.Do(c.doShutdown)
}

func (c *coordinator) doShutdown() {
	close(c.stop)
	c.orch.close()
	c.scd.wait()
	coordinators.mu.Lock()
	if coordinators.m[c.key] == c {
		delete(coordinators.m, c.key)
	}
	coordinators.mu.Unlock()
	if cl, ok := c.cat.(interface{ Close() error }); ok {
		_ = cl.Close()
	}
}

// fail makes err the coordinator's fatal error: every task's next Put fails with it.
func (c *coordinator) fail(err error) {
	c.mu.Lock()
	if c.fatal == nil {
		c.fatal = err
		c.log.Error("iceberg sink: failing the connector's tasks", "error", err)
	}
	c.cond.Broadcast()
	c.mu.Unlock()
}

func (c *coordinator) fatalErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fatal
}

func (c *coordinator) triggerRound() { c.orch.trigger() }

// waitRound blocks until the round after the current one has finished (backpressure).
func (c *coordinator) waitRound(ctx context.Context) {
	// cond.Wait does not watch ctx: wake the waiters when it is done
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.mu.Lock()
	target := c.round + 1
	for c.round < target && !c.closed && c.fatal == nil && ctx.Err() == nil {
		c.cond.Wait()
	}
	c.mu.Unlock()
}

func (c *coordinator) loop() {
	defer close(c.done)
	next := c.cfg.CommitInterval
	for {
		timer := time.NewTimer(next)
		select {
		case <-c.stop:
			timer.Stop()
			return
		case <-timer.C:
		case <-c.trigger:
			timer.Stop()
		}
		tasks := c.taskList()
		if c.commitRound(context.Background(), tasks) {
			next = c.cfg.CommitInterval
			c.maintainLocal()
			c.scdDue()
		} else {
			next = c.cfg.RetryBackoff
		}
	}
}

// CommitNow runs one round synchronously (tests, benchmarks, dev mode).
func (c *coordinator) CommitNow(ctx context.Context) bool {
	tasks := c.taskList()
	return c.commitRound(ctx, tasks)
}

func (c *coordinator) catalog(ctx context.Context) (catalog.Catalog, error) {
	c.catMu.Lock()
	defer c.catMu.Unlock()
	if c.cat != nil {
		return c.cat, nil
	}
	cat, err := catalogx.Open(ctx, c.cfg.CatalogName, c.cfg.CatalogProps)
	if err != nil {
		return nil, err
	}
	c.cat = cat
	return cat, nil
}

func (c *coordinator) writer(cat catalog.Catalog, name string) *icetable.Writer {
	w, ok := c.writers[name]
	if !ok {
		w = &icetable.Writer{Cat: cat, Ident: catalog.ToIdentifier(name), Opts: c.cfg.TableOptions(name)}
		c.writers[name] = w
	}
	return w
}

// commitRound drains the tasks and commits one snapshot per table. It returns false when
// the round failed (the records go back to the tasks for the next round).
func (c *coordinator) commitRound(ctx context.Context, tasks []*Task) (ok bool) {
	c.roundMu.Lock()
	defer c.roundMu.Unlock()
	defer func() { c.roundEnded(ok) }()

	var ds []drained
	perTable := map[string][]icetable.Rec{}
	offsets := icetable.Offsets{}
	total := 0
	for _, t := range tasks {
		d := t.drain()
		ds = append(ds, d)
		bufs, pos := d.bufs, d.pos
		for name, recs := range bufs {
			perTable[name] = append(perTable[name], recs...)
			total += len(recs)
		}
		for tp, o := range pos {
			if o > offsets[tp] {
				offsets[tp] = o
			}
		}
	}
	if len(offsets) == 0 {
		return true
	}
	fail := func(err error) bool {
		c.mu.Lock()
		c.counts.LastError = err.Error()
		c.mu.Unlock()
		c.log.Warn("iceberg commit round failed; its records are retried in the next round", "err", err)
		for _, d := range ds {
			d.t.roundFailed(d)
		}
		return false
	}
	cat, err := c.catalog(ctx)
	if err != nil {
		return fail(fmt.Errorf("open catalog: %w", err))
	}
	names := make([]string, 0, len(perTable))
	for n := range perTable {
		names = append(names, n)
	}
	sort.Strings(names)
	commitID := uuid.NewString()
	hooks := c.hooks.Load()
	// tables commit in parallel (iceberg.control.commit.threads); each table is one snapshot
	var (
		errMu   sync.Mutex
		errs    []error
		crashed bool
		wg      sync.WaitGroup
		sem     = make(chan struct{}, c.cfg.CommitThreads)
	)
	for _, name := range names {
		recs := perTable[name]
		if len(recs) == 0 {
			continue
		}
		w := c.writer(cat, name)
		if hooks != nil && hooks.beforeTableCommit != nil {
			if err := hooks.beforeTableCommit(name); err != nil {
				crashed = true // this and later tables never commit
				break
			}
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(name string, recs []icetable.Rec, w *icetable.Writer) {
			defer func() { <-sem; wg.Done() }()
			props := map[string]string{icetable.SummaryCommitID: commitID, icetable.SummaryTaskID: c.cfg.Name}
			var st icetable.CommitStats
			var err error
			if hooks != nil && hooks.failTableCommit != nil {
				err = hooks.failTableCommit(name)
			}
			if err == nil {
				cctx, cancel := context.WithTimeout(ctx, commitTimeout(c.cfg))
				st, err = w.Commit(cctx, recs, offsets, props)
				cancel()
			}
			if err == nil && hooks != nil && hooks.afterTableCommit != nil {
				err = hooks.afterTableCommit(name)
			}
			if err != nil {
				if skip, err := c.tableError(name, len(recs), err); !skip {
					w.Tbl = nil // reload on retry
					errMu.Lock()
					errs = append(errs, err)
					errMu.Unlock()
				}
				return
			}
			c.countCommit(st, int64(icetable.RecRows(recs)-st.Skipped), int64(st.Skipped))
		}(name, recs, w)
	}
	wg.Wait()
	if crashed {
		return false // no cleanup: the process is gone
	}
	if len(errs) > 0 {
		return fail(errors.Join(errs...))
	}
	for _, d := range ds {
		d.t.roundCommitted(d, true)
	}
	return true
}

// tableError classifies a table's failure in a round. Apache semantics: with dynamic routing
// (or auto-create, for a round of key-only deletes) records for a missing table are skipped; a
// configured static table must exist; an error no retry can fix (bad data, incompatible schema)
// fails the tasks.
func (c *coordinator) tableError(name string, records int, err error) (skip bool, _ error) {
	if errors.Is(err, catalog.ErrNoSuchTable) && (c.cfg.DynamicEnabled || c.cfg.AutoCreate) {
		c.log.Warn("table does not exist; records skipped", "table", name, "records", records)
		return true, nil
	}
	if errors.Is(err, catalog.ErrNoSuchTable) {
		err = &icetable.DataError{Err: err}
	}
	if isFatal(err) {
		c.mu.Lock()
		c.fatal = fmt.Errorf("iceberg table %s: %w", name, err)
		c.cond.Broadcast()
		c.mu.Unlock()
	}
	return false, fmt.Errorf("table %s: %w", name, err)
}

// countCommit adds a table commit to the stats.
func (c *coordinator) countCommit(st icetable.CommitStats, records, skipped int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st.DataFiles+st.DeleteFiles > 0 {
		c.counts.Snapshots++
	}
	c.counts.DataFiles += int64(st.DataFiles)
	c.counts.DeleteFiles += int64(st.DeleteFiles)
	c.counts.Records += records
	c.counts.Skipped += skipped
}

// parallel runs fn(0..n-1), at most threads at once, and joins their errors.
func parallel(n, threads int, fn func(i int) error) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, max(threads, 1))
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			if err := fn(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}

func commitTimeout(cfg *SinkConfig) time.Duration {
	// the Apache commit timeout bounds the wait for workers; a table commit gets more room
	return max(cfg.CommitTimeout, 30*time.Second) * 4
}

// isFatal tells errors that a retry cannot fix (bad data, incompatible schema, bad config).
func isFatal(err error) bool {
	if errors.Is(err, icetable.ErrFenced) || errors.Is(err, table.ErrCommitFailed) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var de *icetable.DataError
	var te *icetable.TableDefError
	return errors.As(err, &de) || errors.As(err, &te)
}
