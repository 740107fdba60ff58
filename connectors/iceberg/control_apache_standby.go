package iceberg

import (
	"sync"
	"time"
)

// An Apache sink coordinator (a JVM task's) can run beside connectd's committer: while a rebalance moves the
// first partition, and, in the Apache sink 1.10, for as long as its task lives when the task lost the
// partition during a rebalance (it stops its coordinator only if the group is stable at that moment). Two
// committers are exactly-once on connectd's side (it commits on the head it filtered against and reloads on a
// conflict), not on the JVM's: its append retries a conflicting commit on the new head as it is, adding again
// the files connectd has just committed. So connectd's committer stands by while a JVM coordinator of the
// connector commits (its START_COMMIT and COMMIT_COMPLETE events carry no connectd mark), and gives up a commit
// when such a START_COMMIT arrives during it. A JVM coordinator that only starts commits and never completes
// one (the Apache sink's coordinator whose task's catalog is closed, apache/iceberg#13593) is not waited for
// longer than the window.

// foreignCommitter tracks the JVM coordinators of the connector seen on the control topic.
type foreignCommitter struct {
	window time.Duration

	mu        sync.Mutex
	streak    time.Time // the first START_COMMIT after a gap longer than the window
	lastStart time.Time
	lastDone  time.Time
}

func newForeignCommitter(cfg *SinkConfig) *foreignCommitter {
	return &foreignCommitter{window: 2 * (cfg.CommitInterval + cfg.CommitTimeout)}
}

// started records a JVM coordinator's START_COMMIT.
func (f *foreignCommitter) started(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastStart.IsZero() || now.Sub(f.lastStart) > f.window {
		f.streak = now
	}
	f.lastStart = now
}

// done records a JVM coordinator's COMMIT_COMPLETE.
func (f *foreignCommitter) done(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastDone = now
}

// active reports whether a JVM coordinator commits: it started a commit within the window, and it either
// began doing so within the window or completed a commit within it.
func (f *foreignCommitter) active(now time.Time) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastStart.IsZero() || now.Sub(f.lastStart) > f.window {
		return false
	}
	if now.Sub(f.streak) <= f.window {
		return true
	}
	return !f.lastDone.IsZero() && now.Sub(f.lastDone) <= f.window
}

// startedSince reports whether a JVM coordinator started a commit after t.
func (f *foreignCommitter) startedSince(t time.Time) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastStart.After(t)
}
