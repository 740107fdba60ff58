package commit

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
// when such a START_COMMIT arrives during it. A JVM coordinator that keeps starting commits and completes none
// (its catalog refuses them, or the Apache sink's coordinator whose task's catalog is closed,
// apache/iceberg#13593) is stood by for: the participants' stuck watch (stuck.go) says that no commit covers
// their answers. The timings are in docs/design/iceberg-sink.md (Committer standby).

// foreignCommitter tracks the JVM coordinators of the connector seen on the control topic. It expects their next
// event the way the Apache sink's CommitState times them: between commits, the next START_COMMIT once the commit
// interval has passed since the previous one (and the commit ended); inside a commit, its COMMIT_COMPLETE, or,
// when the commit fails (no event marks that), the next START_COMMIT, within the larger of the commit interval
// and the commit timeout plus the catalog commit, which it estimates by the coordinator's recent round times (a
// round: from a START_COMMIT to the coordinator's next event). A coordinator whose commits fail or are slow is
// thus waited for as long as its START_COMMITs keep coming: two committers would both contend for the catalog,
// and the JVM's append is not exactly-once beside another committer. An event later than expected by
// foreignGrace means the coordinator is gone (its worker died, or its task stopped it), and connectd's committer
// takes over; so does it as soon as the committer group has no member, the JVM coordinator's consumer gone.
type foreignCommitter struct {
	interval, timeout time.Duration

	mu        sync.Mutex
	lastStart time.Time
	lastDone  time.Time
	open      bool            // the last event is a START_COMMIT: inside a commit
	rounds    []time.Duration // the latest round times, at most foreignRounds
}

func newForeignCommitter(interval, timeout time.Duration) *foreignCommitter {
	return &foreignCommitter{interval: interval, timeout: timeout}
}

// roundEnded records the end of the round that began at the last START_COMMIT. Callers hold mu.
func (f *foreignCommitter) roundEnded(now time.Time) {
	if !f.open {
		return
	}
	if len(f.rounds) == foreignRounds {
		f.rounds = append(f.rounds[:0], f.rounds[1:]...)
	}
	f.rounds = append(f.rounds, now.Sub(f.lastStart))
}

// started records a JVM coordinator's START_COMMIT.
func (f *foreignCommitter) started(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.roundEnded(now)
	f.lastStart, f.open = now, true
}

// done records a JVM coordinator's COMMIT_COMPLETE.
func (f *foreignCommitter) done(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.roundEnded(now)
	f.lastDone, f.open = now, false
}

// active reports whether a JVM coordinator commits.
func (f *foreignCommitter) active(now time.Time) bool {
	ok, _ := f.activeUntil(now)
	return ok
}

// activeUntil reports whether a JVM coordinator commits at now, and the moment it stops counting as committing
// unless another of its events arrives first.
func (f *foreignCommitter) activeUntil(now time.Time) (bool, time.Time) {
	if f == nil {
		return false, time.Time{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lastStart.IsZero() {
		return false, time.Time{}
	}
	var until time.Time
	if f.open {
		var round time.Duration
		for _, r := range f.rounds {
			round = max(round, r)
		}
		// its commit completes, or fails and the next one starts
		until = f.lastStart.Add(max(f.interval, f.timeout+round))
	} else {
		until = f.lastStart.Add(f.interval) // its next commit starts one interval after the previous one
		if f.lastDone.After(until) {
			until = f.lastDone
		}
	}
	until = until.Add(foreignGrace)
	return !now.After(until), until
}

// forget drops what was seen of the JVM coordinators: the one that committed is gone (its consumer left the
// committer group), and only a new START_COMMIT makes connectd's committer stand by again.
func (f *foreignCommitter) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastStart, f.lastDone, f.open, f.rounds = time.Time{}, time.Time{}, false, nil
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

// foreignGrace is how much later than expected a JVM coordinator's event may come (its poll loop, the control
// topic's latency, a pause) before connectd takes the coordinator for gone.
const foreignGrace = 5 * time.Second

// foreignProbe is how often a standing-by committer looks whether the JVM coordinator is still a member of
// the committer group (<connect group>-coord, which the Apache sink's coordinator subscribes with): a
// coordinator whose worker died leaves it at its consumer's session timeout, before its next event is overdue.
const foreignProbe = 2 * time.Second

// foreignRounds is how many of the JVM coordinator's latest rounds set its expected round time.
const foreignRounds = 4
