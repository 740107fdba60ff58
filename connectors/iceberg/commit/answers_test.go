package commit

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestAnswerWait: an apache-protocol answer waits until a COMMIT_COMPLETE of its commit or of a later answered
// one; answers without records matter only behind one with records; an answer not sent is forgotten.
func TestAnswerWait(t *testing.T) {
	var w answerWait
	t0 := time.Unix(1_000_000, 0)
	a, b, c, d := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	w.sent(a, t0, false)
	_, _, ok := w.oldest()
	require.False(t, ok, "an answer without records, nothing before it")
	w.sent(b, t0.Add(time.Second), true)
	w.sent(c, t0.Add(2*time.Second), false)
	w.sent(d, t0.Add(3*time.Second), true)
	id, at, ok := w.oldest()
	require.True(t, ok)
	require.Equal(t, b, id)
	require.Equal(t, t0.Add(time.Second), at)
	require.False(t, w.completed(a), "a commit no waiting answer answered")
	require.True(t, w.completed(c), "covers b too")
	id, _, _ = w.oldest()
	require.Equal(t, d, id)
	w.forget(d)
	_, _, ok = w.oldest()
	require.False(t, ok)
	for i := range 2 * maxAnswersWaiting {
		w.sent(uuid.New(), t0.Add(time.Duration(i)*time.Second), true)
	}
	_, at, _ = w.oldest()
	require.Equal(t, t0, at, "the oldest answer dates the wait")
}
