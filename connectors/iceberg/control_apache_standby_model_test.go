package iceberg

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"
)

// A model of the Apache sink's coordinator as the control topic shows it (its CommitState): START_COMMIT when
// the commit interval has passed since the previous START_COMMIT and no commit is in progress (noticed within
// its poll of about a second); COMMIT_COMPLETE once every partition answered or the commit timeout passed, plus
// the time its catalog commit takes. Each event reaches connectd's reader a little later. The coordinator
// commits healthily for a while and then dies at a random moment, between commits or inside one.

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
}

func genStandbyRun(r *rand.Rand) standbyRun {
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.Intn(hi-lo+1)) * time.Millisecond }
	run := standbyRun{interval: ms(1000, 20000)}
	run.timeout = ms(1000, 60000)
	run.death = ms(0, 200000)
	delay := func() time.Duration { return ms(0, 500) } // the reader's latency
	at := ms(0, 5000)                                   // the coordinator's first START_COMMIT
	for at < run.death {
		run.events = append(run.events, standbyEvent{at: at + delay(), start: true})
		run.lastStartAtDeath = run.events[len(run.events)-1].at
		// answers within the timeout (or the timeout), then the catalog commit
		answered := min(ms(0, int(run.timeout.Milliseconds())*3/2), run.timeout)
		done := at + answered + ms(0, 3000)
		if done >= run.death {
			run.deathInCommit = true
			break
		}
		run.events = append(run.events, standbyEvent{at: done + delay()})
		run.lastDoneAtDeath = run.events[len(run.events)-1].at
		at = max(at+run.interval, done) + ms(0, 1000) // CommitState.isCommitIntervalReached, polled
	}
	return run
}

// checkStandbyRun replays run against a foreignCommitter and checks, at every 50 ms:
//   - while the coordinator lives, once connectd has read its first START_COMMIT, connectd stands by;
//   - after its death connectd stands by no longer than the bound of the README's standby section: between
//     commits, the grace after the later of its last COMMIT_COMPLETE and its last START_COMMIT plus the commit
//     interval; inside a commit, the commit timeout plus the grace after that commit's START_COMMIT.
func checkStandbyRun(run standbyRun) error {
	cfg := &SinkConfig{CommitInterval: run.interval, CommitTimeout: run.timeout}
	f := newForeignCommitter(cfg)
	t0 := time.Unix(1_000_000, 0)
	next := 0
	seen := false
	bound := max(run.lastStartAtDeath+run.interval, run.lastDoneAtDeath) + foreignGrace
	if run.deathInCommit {
		bound = run.lastStartAtDeath + run.timeout + foreignGrace
	}
	end := max(run.death, bound) + 10*time.Second
	for now := time.Duration(0); now <= end; now += 50 * time.Millisecond {
		for next < len(run.events) && run.events[next].at <= now {
			if run.events[next].start {
				f.started(t0.Add(run.events[next].at))
				seen = true
			} else {
				f.done(t0.Add(run.events[next].at))
			}
			next++
		}
		active := f.active(t0.Add(now))
		if now < run.death && seen && !active {
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
	base := time.Now().UnixNano()
	if s := os.Getenv("STANDBY_SEED"); s != "" {
		base, _ = strconv.ParseInt(s, 10, 64)
	}
	seeds := 300
	if s := os.Getenv("STANDBY_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	t.Logf("seeds %d.. (STANDBY_SEED), %d of them (STANDBY_SEEDS)", base, seeds)
	for n := range seeds {
		seed := base + int64(n)
		run := genStandbyRun(rand.New(rand.NewSource(seed)))
		if err := checkStandbyRun(run); err != nil {
			t.Fatalf("seed %d: %v\ninterval %v, timeout %v, death %v (in a commit: %v), last START_COMMIT %v, %d events",
				seed, err, run.interval, run.timeout, run.death, run.deathInCommit, run.lastStartAtDeath, len(run.events))
		}
	}
}
