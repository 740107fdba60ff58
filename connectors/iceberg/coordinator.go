package iceberg

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sync"

	"github.com/apache/iceberg-go/catalog"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/commit"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// The sink's side of the commit rounds: one coordinator per connector on a worker holds the connector's tasks
// there and the orchestrator of package commit that runs their rounds (how they are exactly-once: the top of
// commit/local.go). The worker's shared values keep its coordinators (coordinatorSet).

// coordinatorSetKey is where a worker's shared values keep its coordinatorSet.
const coordinatorSetKey = "github.com/connectd/connectd/connectors/iceberg.coordinators"

// coordinatorSet holds the coordinators of one worker, one per connector, and publishes their metrics while it
// lives: each coordinator holds it in the worker's shared values, so it closes with the last one.
type coordinatorSet struct {
	mu sync.Mutex
	m  map[string]*coordinator // by consumer group

	metrics connect.PluginMetrics // where its collector is published; nil: nowhere
}

// coordinator holds the tasks of one connector on a worker, and the orchestrator that commits for them.
type coordinator struct {
	key string
	cfg *SinkConfig
	log *slog.Logger

	set        *coordinatorSet // the worker's set that knows it; nil: none (tests model processes)
	releaseSet func() error    // ends its hold on set

	mu         sync.Mutex
	tasks      map[*Task]struct{}
	round      uint64
	cond       *sync.Cond
	fatal      error
	closed     bool
	lastFailed bool // the latest round failed (Put's backpressure)

	stop         chan struct{} // closed at shutdown: the SCD runs end
	shutdownOnce sync.Once
	orch         commit.Orchestrator // runs the rounds: alone, or with other processes through the control topic
	tables       *commit.Tables      // the catalog and table writers of the rounds
	maint        *maintainer         // table maintenance between rounds (maintain.go); nil: off
	scd          *scdScheduler       // SCD materialization after rounds (scd_schedule.go); nil: off
}

// joinCoordinator returns the coordinator of cfg's connector on the worker of the task context ctx, started
// for its first task there. A runtime without shared values (connect.WorkerValues) gives each task a
// coordinator of its own.
func joinCoordinator(ctx any, cfg *SinkConfig, wi connect.WorkerInfo) (*coordinator, error) {
	shared := &connect.SharedValues{}
	if wv, ok := ctx.(connect.WorkerValues); ok {
		shared = wv.SharedValues()
	}
	var pm connect.PluginMetrics
	if pr, ok := ctx.(connect.PluginRuntime); ok {
		pm = pr.PluginMetrics()
	}
	v, release, err := shared.Acquire(coordinatorSetKey, func() (io.Closer, error) { return newCoordinatorSet(pm), nil })
	if err != nil {
		return nil, err
	}
	set, ok := v.(*coordinatorSet)
	if !ok {
		_ = release()
		return nil, fmt.Errorf("the worker's shared value %s is a %T", coordinatorSetKey, v)
	}
	return set.join(cfg, wi, release)
}

func newCoordinatorSet(m connect.PluginMetrics) *coordinatorSet {
	s := &coordinatorSet{m: map[string]*coordinator{}}
	s.publishMetrics(m)
	return s
}

// join returns the set's running coordinator of cfg's connector, or starts one that keeps the hold release
// ends.
func (s *coordinatorSet) join(cfg *SinkConfig, wi connect.WorkerInfo, release func() error) (*coordinator, error) {
	s.mu.Lock()
	if c, ok := s.m[cfg.GroupID]; ok && !c.isClosed() {
		s.mu.Unlock()
		_ = release() // c holds the set
		return c, nil
	}
	c, err := newCoordinator(cfg, wi)
	if err != nil {
		s.mu.Unlock()
		_ = release()
		return nil, err
	}
	c.set, c.releaseSet = s, release
	s.m[cfg.GroupID] = c
	s.mu.Unlock()
	return c, nil
}

// remove forgets c (it has shut down).
func (s *coordinatorSet) remove(c *coordinator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[c.key] == c {
		delete(s.m, c.key)
	}
}

// list is a snapshot of the set's coordinators.
func (s *coordinatorSet) list() []*coordinator {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := make([]*coordinator, 0, len(s.m))
	for _, c := range s.m {
		cs = append(cs, c)
	}
	return cs
}

// Close withdraws the set's metrics: the worker's last coordinator has shut down.
func (s *coordinatorSet) Close() error {
	s.withdrawMetrics()
	return nil
}

// newCoordinator starts a coordinator that no set knows (joinCoordinator adds it to the worker's).
func newCoordinator(cfg *SinkConfig, wi connect.WorkerInfo) (*coordinator, error) {
	c := &coordinator{
		key: cfg.GroupID, cfg: cfg, tasks: map[*Task]struct{}{}, stop: make(chan struct{}),
		log: slog.Default().With("connector", cfg.Name, "component", "iceberg-coordinator"),
	}
	c.cond = sync.NewCond(&c.mu)
	c.maint = newMaintainer(cfg)
	c.scd = newSCDScheduler(cfg, c.stop, c.log)
	c.tables = commit.NewTables(func(ctx context.Context) (catalog.Catalog, error) {
		return catalogx.Open(ctx, cfg.CatalogName, cfg.CatalogProps)
	}, cfg.TableOptions)
	opts, err := c.commitOptions(wi)
	if err != nil {
		return nil, err
	}
	if c.orch, err = commit.Start(opts, roundTasks{c: c}, wi); err != nil {
		return nil, err
	}
	return c, nil
}

// commitOptions translates the connector's config into the orchestrator's options.
func (c *coordinator) commitOptions(wi connect.WorkerInfo) (commit.Options, error) {
	cfg := c.cfg
	opts := commit.Options{
		Connector: cfg.Name, GroupID: cfg.GroupID, Log: c.log, Tables: c.tables,
		CommitInterval: cfg.CommitInterval, CommitTimeout: cfg.CommitTimeout, RetryBackoff: cfg.RetryBackoff,
		CommitThreads: cfg.CommitThreads, SkipMissingTables: cfg.DynamicEnabled || cfg.AutoCreate,
		AfterRound:  c.afterRound,
		Distributed: cfg.Coordination == "topic" || (cfg.Coordination == "auto" && wi != nil && wi.Distributed()),
		Protocol:    cfg.ControlProtocol, ProtocolKey: KeyControlProtocol, ControlTopic: cfg.ControlTopic,
		Topics: cfg.Topics, KafkaProps: cfg.KafkaProps, CatalogName: cfg.CatalogName,
		TransactionalPrefix: cfg.raw[KeyTxnPrefix],
	}
	if !opts.Distributed {
		return opts, nil
	}
	if wi == nil {
		return opts, fmt.Errorf("%s=topic needs the worker's Kafka settings, which this runtime does not provide", KeyCoordination)
	}
	if cfg.TopicsRegex != "" {
		re, err := regexp.Compile(cfg.TopicsRegex)
		if err != nil {
			return opts, err
		}
		opts.TopicsMatch = func(topic string) bool { return icerow.MatchFull(re, topic) }
	}
	return opts, nil
}

// afterRound runs on the commit loop after a round this process committed.
func (c *coordinator) afterRound(ctx context.Context) {
	c.maintainDue(ctx)
	c.scdDue()
}

// roundTasks are the coordinator's tasks as the rounds reach them: every registered task, or only the one
// stopping last.
type roundTasks struct {
	c    *coordinator
	only *Task
}

func (rt roundTasks) list() []*Task {
	if rt.only != nil {
		return []*Task{rt.only}
	}
	return rt.c.taskList()
}

func (rt roundTasks) Drain() []commit.Batch {
	tasks := rt.list()
	out := make([]commit.Batch, 0, len(tasks))
	for _, t := range tasks {
		d := t.drain()
		out = append(out, &batch{drained: d, assigned: t.assignment(), key: t.key()})
	}
	return out
}

func (rt roundTasks) Assignment() []icetable.TP {
	var out []icetable.TP
	for _, t := range rt.list() {
		out = append(out, t.assignment()...)
	}
	return out
}

func (rt roundTasks) Holds(tp icetable.TP) bool {
	for _, t := range rt.list() {
		if t.holds(tp) {
			return true
		}
	}
	return false
}

func (rt roundTasks) Progressed() {
	for _, t := range rt.list() {
		t.madeProgress()
	}
}

func (rt roundTasks) RoundEnded(ok bool) { rt.c.roundEnded(ok) }

func (rt roundTasks) Fail(err error) { rt.c.fail(err) }

// batch is what a round took from one task, the partitions the task held then, and the task's orchestrator key.
type batch struct {
	drained
	assigned []icetable.TP
	key      commit.TaskKey
}

func (b *batch) Tables() map[string][]icetable.Rec { return b.bufs }
func (b *batch) Positions() icetable.Offsets       { return b.pos }
func (b *batch) Rows() int                         { return b.n }
func (b *batch) Assigned() []icetable.TP           { return b.assigned }
func (b *batch) Committed(durable bool)            { b.t.roundCommitted(b.drained, durable) }
func (b *batch) Failed()                           { b.t.roundFailed(b.drained) }
func (b *batch) Task() commit.TaskKey              { return b.key }

// Fatal gives the records back and fails the task: its restart reads them again from the group offsets.
func (b *batch) Fatal(err error) {
	b.t.roundFailed(b.drained)
	b.t.lost.CompareAndSwap(nil, &err)
}

// roundEnded records the end of a round this process took part in and wakes Put's waiters.
func (c *coordinator) roundEnded(ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.round++
	c.lastFailed = !ok
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

// stats returns a copy of the round counters.
func (c *coordinator) stats() commit.Stats { return c.orch.Stats() }

// CommitNow runs one round synchronously (tests, benchmarks, dev mode).
func (c *coordinator) CommitNow(ctx context.Context) bool { return c.orch.CommitNow(ctx) }

func (c *coordinator) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *coordinator) register(t *Task) {
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
	c.orch.LastTaskStopping(roundTasks{c: c, only: t})
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
	c.orch.Close()
	c.scd.wait()
	if c.set != nil {
		c.set.remove(c)
	}
	c.tables.Close()
	if c.releaseSet != nil {
		_ = c.releaseSet() // the worker's last coordinator closes the set
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

func (c *coordinator) triggerRound() { c.orch.Trigger() }

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
