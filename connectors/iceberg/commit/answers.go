package commit

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Why records stay out of the tables, as far as this process knows: the sink's stuck watch notes it in the
// status of a task whose records no round made durable for too long.

// stuckReason says why the rounds do not make records durable; jvmCommits reports whether a JVM task's
// coordinator commits for the connector (apache protocol).
func (r *rounds) stuckReason(lastRoundFailed, distributed, leads, jvmCommits bool) string {
	st := r.Stats()
	if id, at, ok := r.answers.oldest(); ok {
		who := "connectd's committer (this process holds the connector's first partition)"
		if jvmCommits {
			who = "a JVM task's coordinator, which still starts commits (connectd's committer stands by)"
		} else if distributed && !leads {
			who = "the committer in the process that holds the connector's first partition"
		}
		return fmt.Sprintf("this process answered commit %s %s ago and no COMMIT_COMPLETE has covered that answer since: "+
			"the commits of %s fail or do not happen%s", id, time.Since(at).Round(time.Second), who, lastError(st))
	}
	switch {
	case lastRoundFailed && st.LastError != "":
		return "the last commit round failed: " + st.LastError
	case distributed && !leads:
		return "no commit from the committer (another process holds the connector's first partition) has covered them" + lastError(st)
	case st.LastDurable.IsZero():
		return "no commit round has completed" + lastError(st)
	}
	return fmt.Sprintf("the last round that made records durable ended %s ago%s", time.Since(st.LastDurable).Round(time.Second), lastError(st))
}

func lastError(st Stats) string {
	if st.LastError == "" {
		return ""
	}
	return "; last error: " + st.LastError
}

// answerWait holds, under the apache protocol, the answers this process sent that no COMMIT_COMPLETE has covered:
// an answer commits the records' offsets to the connector's group, yet the records are in the tables only once a
// coordinator commits the answer's files, which a coordinator whose commits fail never does.
type answerWait struct {
	mu      sync.Mutex
	pending []answerSent // oldest first
}

type answerSent struct {
	id uuid.UUID
	at time.Time
}

// maxAnswersWaiting bounds the answers remembered; the oldest stays (it dates the wait).
const maxAnswersWaiting = 256

// sent records an answer to commit id. An answer without records matters only behind one with records: a
// COMMIT_COMPLETE of its commit covers the earlier answers too.
func (w *answerWait) sent(id uuid.UUID, at time.Time, records bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !records && len(w.pending) == 0 {
		return
	}
	if len(w.pending) >= maxAnswersWaiting {
		w.pending = append(w.pending[:1], w.pending[2:]...)
	}
	w.pending = append(w.pending, answerSent{id, at})
}

// completed records a COMMIT_COMPLETE of commit id and reports whether it covered answers: the answer to id and
// the earlier ones (a coordinator keeps the answers of a failed commit and commits them with the next).
func (w *answerWait) completed(id uuid.UUID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, a := range w.pending {
		if a.id == id {
			w.pending = append(w.pending[:0], w.pending[i+1:]...)
			return true
		}
	}
	return false
}

// forget drops the answer to commit id: it was not sent.
func (w *answerWait) forget(id uuid.UUID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = slices.DeleteFunc(w.pending, func(a answerSent) bool { return a.id == id })
}

// oldest returns the oldest answer no COMMIT_COMPLETE has covered.
func (w *answerWait) oldest() (uuid.UUID, time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return uuid.UUID{}, time.Time{}, false
	}
	return w.pending[0].id, w.pending[0].at, true
}
