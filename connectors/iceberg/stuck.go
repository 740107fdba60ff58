package iceberg

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
)

// A task whose records stay out of the tables says so, whatever keeps them out (a catalog that refuses
// commits or makes them wait, a committer in another process that does not commit, a put that blocks):
// once it has had records that no round made durable for longer than stuckAfter (three commit intervals,
// at least minStuckAfter), it logs a WARN on every check with the reason, notes it in its RUNNING status
// (connect.TaskStatusNoter), and connectd_iceberg_commit_stuck_seconds shows for how long. The note is
// cleared, with an INFO, when a round makes its records durable again.

// minStuckAfter is the least time without progress that counts as stuck: a few slow rounds are not.
const minStuckAfter = 45 * time.Second

// stuckWatch is a task's progress watch.
type stuckWatch struct {
	progress atomic.Int64 // unix nanoseconds when the task last had nothing waiting, or a round made its records durable
	putSince atomic.Int64 // unix nanoseconds since a Put has been running; 0: none
	stuckFor atomic.Int64 // nanoseconds the task has been stuck at the last check; 0: not stuck
	stop     chan struct{}
	done     chan struct{}
}

// stuckThreshold is how long a task may hold records no round made durable before it counts as stuck.
func (t *Task) stuckThreshold() time.Duration {
	if t.stuckAfter > 0 {
		return t.stuckAfter
	}
	return max(3*t.cfg.CommitInterval, minStuckAfter)
}

// startWatch starts the task's progress watch; Stop ends it.
func (t *Task) startWatch() {
	w := &t.watch
	w.progress.Store(t.now().UnixNano())
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	every := min(max(t.cfg.CommitInterval, 100*time.Millisecond), t.stuckThreshold()/3, 10*time.Second)
	go func() {
		defer close(w.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				t.checkProgress()
			}
		}
	}()
}

func (t *Task) stopWatch() {
	if w := &t.watch; w.stop != nil {
		close(w.stop)
		<-w.done
		w.stop = nil
	}
}

// madeProgress records that the task's records are durable up to what it was given.
func (t *Task) madeProgress() { t.watch.progress.Store(t.now().UnixNano()) }

// checkProgress is one check of the watch.
func (t *Task) checkProgress() {
	w := &t.watch
	now := t.now()
	var reason string
	var putFor time.Duration
	if since := w.putSince.Load(); since != 0 {
		putFor = now.Sub(time.Unix(0, since))
	}
	if putFor > t.stuckThreshold() {
		reason = fmt.Sprintf("a put has been waiting for %s (opening the catalog or loading a table)", putFor.Round(time.Second))
	} else if t.mu.TryLock() { // a Put holds mu while it runs: its wait is the reason above
		waiting := t.nbuf+t.inflight > 0
		for tp, p := range t.pos {
			if p > t.committed[tp] {
				waiting = true
			}
		}
		t.mu.Unlock()
		if t.coord.orch.AnswerWaiting() {
			waiting = true // answered, its offsets committed, but no commit has covered the answer yet
		}
		if !waiting {
			w.progress.Store(now.UnixNano())
		}
	}
	stuck := max(now.Sub(time.Unix(0, w.progress.Load())), putFor)
	if stuck <= t.stuckThreshold() && reason == "" {
		if w.stuckFor.Swap(0) != 0 {
			slog.Info("iceberg sink: commits make progress again", "connector", t.cfg.Name)
			t.noteStatus("")
		}
		return
	}
	if reason == "" {
		reason = t.coord.orch.StuckReason(t.coord.lastRoundFailed())
	}
	w.stuckFor.Store(int64(stuck))
	note := fmt.Sprintf("connectd: no commit has made this task's records durable for %s (stuck after %s): %s",
		stuck.Round(time.Second), t.stuckThreshold(), reason)
	slog.Warn("iceberg sink: commits make no progress", "connector", t.cfg.Name, "for", stuck.Round(time.Second).String(), "reason", reason)
	t.noteStatus(note)
}

func (t *Task) noteStatus(note string) {
	if n, ok := t.Ctx.(connect.TaskStatusNoter); ok {
		n.NoteStatus(note)
	}
}

// stuckSeconds is how long the coordinator's most stuck task has been stuck at its last check (0: none).
func (c *coordinator) stuckSeconds() float64 {
	var most int64
	for _, t := range c.taskList() {
		most = max(most, t.watch.stuckFor.Load())
	}
	return time.Duration(most).Seconds()
}
