package commit

// Exactly-once, and why (also in docs/design/iceberg-sink.md, "Exactly once"):
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
//     (Batch.Failed) and the next round plans them again; tables that did commit in that
//     round skip them by (2). No consumer rewind, so no group rebalance per failed round; while
//     rounds keep failing, Put pushes back with a RetriableError once the buffers are full.
//  5. Within one process a connector has one orchestrator, which drains all of its tasks and
//     commits one snapshot per table per interval. Across processes (distributed mode) the
//     orchestrators run a control-topic protocol (control.go): one committer commits the
//     files all processes prepared, one snapshot per table per round; (2) there is the check
//     that each part was planned on the head being committed on.
//  6. Written-but-uncommitted files are never referenced by table metadata: orphans only.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// Local commits alone for the tasks of this process: one round per commit interval, or when the buffers are full.
type Local struct {
	*rounds
	trigger chan struct{}
	done    chan struct{}
}

func startLocal(r *rounds) *Local {
	l := &Local{rounds: r, trigger: make(chan struct{}, 1), done: make(chan struct{})}
	go l.loop()
	return l
}

func (l *Local) Trigger() {
	select {
	case l.trigger <- struct{}{}:
	default:
	}
}

func (l *Local) TaskStarted(TaskConfig) (TaskKey, error) { return TaskKey{}, nil }

func (l *Local) TaskStopped(TaskKey) {}

func (l *Local) BeforeRevoke() {}

// LastTaskStopping commits what the stopping task still buffers.
func (l *Local) LastTaskStopping(last Tasks) { l.commitRound(context.Background(), last) }

func (l *Local) Committer() (bool, bool) { return false, false }

// CommitNow runs one round synchronously.
func (l *Local) CommitNow(ctx context.Context) bool { return l.commitRound(ctx, l.tasks) }

func (l *Local) StuckReason(lastRoundFailed bool) string {
	return l.stuckReason(lastRoundFailed, false, false, false)
}

// Close stops the loop.
func (l *Local) Close() {
	close(l.stop)
	<-l.done
}

func (l *Local) loop() {
	defer close(l.done)
	next := l.opts.CommitInterval
	for {
		timer := time.NewTimer(next)
		select {
		case <-l.stop:
			timer.Stop()
			return
		case <-timer.C:
		case <-l.trigger:
			timer.Stop()
		}
		if l.commitRound(context.Background(), l.tasks) {
			next = l.opts.CommitInterval
			l.afterRound()
		} else {
			next = l.opts.RetryBackoff
		}
	}
}

// afterRound runs AfterRound on the loop: it holds the round lock, so that no round (CommitNow, the last
// task's final round) runs meanwhile, and stops with the orchestrator.
func (l *Local) afterRound() {
	if l.opts.AfterRound == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	l.roundMu.Lock()
	defer l.roundMu.Unlock()
	l.opts.AfterRound(ctx)
}

// commitRound drains the tasks and commits one snapshot per table. It returns false when
// the round failed (the records go back to the tasks for the next round).
func (l *Local) commitRound(ctx context.Context, tasks Tasks) (ok bool) {
	l.roundMu.Lock()
	defer l.roundMu.Unlock()
	defer func() { l.roundEnded(ok) }()

	ds := tasks.Drain()
	perTable := tableRecs(ds)
	offsets := icetable.Offsets{}
	for _, d := range ds {
		for tp, o := range d.Positions() {
			if o > offsets[tp] {
				offsets[tp] = o
			}
		}
	}
	if len(offsets) == 0 {
		return true
	}
	fail := func(err error) bool {
		l.failed(err)
		l.log.Warn("iceberg commit round failed; its records are retried in the next round", "err", err)
		for _, d := range ds {
			d.Failed()
		}
		return false
	}
	ts := l.opts.Tables
	cat, err := ts.Catalog(ctx)
	if err != nil {
		return fail(fmt.Errorf("open catalog: %w", err))
	}
	names := make([]string, 0, len(perTable))
	for n := range perTable {
		names = append(names, n)
	}
	sort.Strings(names)
	commitID := uuid.NewString()
	hooks := ts.hooks.Load()
	// tables commit in parallel (iceberg.control.commit.threads); each table is one snapshot
	var (
		errMu   sync.Mutex
		errs    []error
		crashed bool
		wg      sync.WaitGroup
		sem     = make(chan struct{}, l.opts.CommitThreads)
	)
	for _, name := range names {
		recs := perTable[name]
		if len(recs) == 0 {
			continue
		}
		w := ts.writer(cat, name)
		if hooks != nil && hooks.BeforeTableCommit != nil {
			if err := hooks.BeforeTableCommit(name); err != nil {
				crashed = true // this and later tables never commit
				break
			}
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(name string, recs []icetable.Rec, w *icetable.Writer) {
			defer func() { <-sem; wg.Done() }()
			props := map[string]string{icetable.SummaryCommitID: commitID, icetable.SummaryTaskID: l.opts.Connector}
			var st icetable.CommitStats
			var err error
			if hooks != nil && hooks.FailTableCommit != nil {
				err = hooks.FailTableCommit(name)
			}
			if err == nil {
				cctx, cancel := context.WithTimeout(ctx, l.commitTimeout())
				st, err = w.Commit(cctx, recs, offsets, props)
				cancel()
			}
			if err == nil && hooks != nil && hooks.AfterTableCommit != nil {
				err = hooks.AfterTableCommit(name)
			}
			if err != nil {
				if skip, err := l.tableError(name, len(recs), err); !skip {
					w.Tbl = nil // reload on retry
					errMu.Lock()
					errs = append(errs, err)
					errMu.Unlock()
				}
				return
			}
			l.countCommit(st, int64(icetable.RecRows(recs)-st.Skipped), int64(st.Skipped))
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
		d.Committed(true)
	}
	return true
}

var _ Orchestrator = (*Local)(nil)
