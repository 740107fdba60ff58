package commit

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// A model of the Apache sink's coordinator as the control topic shows it (its CommitState): START_COMMIT when
// the commit interval has passed since the previous START_COMMIT and no commit is in progress (noticed within
// its poll of about a second); COMMIT_COMPLETE once every partition answered or the commit timeout passed, plus
// the time its catalog commit takes. Each event reaches connectd's reader a little later. The coordinator
// commits for a while and then dies at a random moment, between commits or inside one. Half of the runs have a
// healthy coordinator (catalog commits of up to 3 s that complete); the other half one that is alive but
// struggling: catalog commits that take up to half a minute (a catalog's busy waits and commit retries), longer
// than the commit timeout, and fail at a random rate (no COMMIT_COMPLETE; its next START_COMMIT follows).

// standbyEvent is one JVM coordinator event as connectd's reader sees it.
type standbyEvent struct {
	at    time.Duration // since the start of the run, when connectd reads it
	start bool          // START_COMMIT, else COMMIT_COMPLETE
}

type standbyRun struct {
	interval, timeout time.Duration
	events            []standbyEvent
	death             time.Duration // the coordinator dies (SIGKILL)
	deathInCommit     bool          // ... after a START_COMMIT whose commit never completes
	lastStartAtDeath  time.Duration // when connectd read the last START_COMMIT before the death
	lastDoneAtDeath   time.Duration // ... and the last COMMIT_COMPLETE
	struggling        bool          // slow catalog commits that fail at a random rate
}

func genStandbyRun(r *rand.Rand) standbyRun {
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.Intn(hi-lo+1)) * time.Millisecond }
	run := standbyRun{interval: ms(1000, 20000)}
	run.timeout = ms(1000, 60000)
	run.death = ms(0, 200000)
	var read time.Duration
	delay := func(at time.Duration) time.Duration { // when the reader sees an event sent at at: in topic order
		read = max(read, at+ms(0, 500))
		return read
	}
	at := ms(0, 5000) // the coordinator's first START_COMMIT
	run.struggling = r.Intn(2) == 0
	catalog := func() time.Duration { return ms(0, 3000) }
	failRate := 0.0
	if run.struggling {
		base := ms(0, 30000)
		catalog = func() time.Duration { return base + ms(0, 2000) }
		failRate = r.Float64()
	}
	for at < run.death {
		run.events = append(run.events, standbyEvent{at: delay(at), start: true})
		run.lastStartAtDeath = run.events[len(run.events)-1].at
		// answers within the timeout (or the timeout), then the catalog commit
		answered := min(ms(0, int(run.timeout.Milliseconds())*3/2), run.timeout)
		done := at + answered + catalog()
		if done >= run.death {
			run.deathInCommit = true
			break
		}
		if r.Float64() >= failRate {
			run.events = append(run.events, standbyEvent{at: delay(done)})
			run.lastDoneAtDeath = run.events[len(run.events)-1].at
		}
		at = max(at+run.interval, done) + ms(0, 1000) // CommitState.isCommitIntervalReached, polled
	}
	return run
}

// standbyBound is the bound docs/design/iceberg-sink.md gives on connectd's standby once the coordinator's events
// stop, from the events connectd read: between commits (the last event a COMMIT_COMPLETE), the grace after the
// later of that COMMIT_COMPLETE and the last START_COMMIT plus the commit interval; inside a commit (the last event
// a START_COMMIT), the grace after that START_COMMIT plus the larger of the commit interval and the commit timeout
// plus the coordinator's recent round time (the longest of its last rounds, a round being the time from a
// START_COMMIT to its next event).
func standbyBound(events []standbyEvent, interval, timeout time.Duration) time.Duration {
	var lastStart, lastDone, round time.Duration
	var rounds []time.Duration
	open := false // a START_COMMIT is the last event
	for _, e := range events {
		if open {
			rounds = append(rounds, e.at-lastStart)
		}
		if e.start {
			lastStart, open = e.at, true
		} else {
			lastDone, open = e.at, false
		}
	}
	for _, g := range rounds[max(0, len(rounds)-foreignRounds):] {
		round = max(round, g)
	}
	if !open {
		return max(lastStart+interval, lastDone) + foreignGrace
	}
	return lastStart + max(interval, timeout+round) + foreignGrace
}

// checkStandbyRun replays run against a foreignCommitter and checks, at every 50 ms:
//   - while the coordinator lives, once connectd has read its first START_COMMIT (a healthy coordinator) or
//     its second (a struggling one: connectd has seen how long its rounds take), connectd stands by;
//   - after its death connectd stands by no longer than standbyBound.
func checkStandbyRun(run standbyRun) error {
	f := newForeignCommitter(run.interval, run.timeout)
	t0 := time.Unix(1_000_000, 0)
	next := 0
	seen := 0
	needSeen := 1
	if run.struggling {
		needSeen = 2
	}
	bound := standbyBound(run.events, run.interval, run.timeout)
	end := max(run.death, bound) + 10*time.Second
	for now := time.Duration(0); now <= end; now += 50 * time.Millisecond {
		for next < len(run.events) && run.events[next].at <= now {
			if run.events[next].start {
				f.started(t0.Add(run.events[next].at))
				seen++
			} else {
				f.done(t0.Add(run.events[next].at))
			}
			next++
		}
		active := f.active(t0.Add(now))
		if now < run.death && seen >= needSeen && !active {
			return fmt.Errorf("at %v the live JVM coordinator commits, and connectd does not stand by", now)
		}
		if now >= run.death && now > bound && active {
			return fmt.Errorf("at %v connectd still stands by for a coordinator dead since %v (bound %v)", now, run.death, bound)
		}
	}
	return nil
}

// TestForeignCommitterStandbyModel: random commit intervals, timeouts, answer and catalog times, reader
// latencies and moments of death (STANDBY_SEED, STANDBY_SEEDS to replay or widen).
func TestForeignCommitterStandbyModel(t *testing.T) {
	base, seeds := modelSeeds(t, "STANDBY_SEED", time.Now().UnixNano(), 300)
	for n := range seeds {
		seed := base + int64(n)
		run := genStandbyRun(rand.New(rand.NewSource(seed)))
		if err := checkStandbyRun(run); err != nil {
			t.Fatalf("seed %d: %v\ninterval %v, timeout %v, death %v (in a commit: %v), struggling %v, last START_COMMIT %v, %d events",
				seed, err, run.interval, run.timeout, run.death, run.deathInCommit, run.struggling, run.lastStartAtDeath, len(run.events))
		}
	}
}
