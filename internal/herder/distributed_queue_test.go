package herder

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpQueue: membership events run first, a pending keyed operation is queued once, and one queued while
// its predecessor runs is queued again.
func TestOpQueue(t *testing.T) {
	q := newOpQueue()
	var ran []string
	op := func(name string) func() { return func() { ran = append(ran, name) } }
	q.push("reconfigure/a", op("a1"))
	q.push("", op("x"))
	q.push("reconfigure/a", op("a2")) // still pending: dropped
	q.pushUrgent(op("revoke"))
	next := func() bool {
		fn, ok := q.pop()
		if ok {
			fn()
		}
		return ok
	}
	require.True(t, next())
	require.True(t, next()) // a1 runs; a push now queues it again
	q.push("reconfigure/a", op("a3"))
	for next() {
	}
	require.Equal(t, []string{"revoke", "a1", "x", "a3"}, ran)
	select {
	case <-q.signal:
	default:
		t.Fatal("pushing wakes the loop")
	}
}

// TestOpQueueAssignmentsAndClose: only the newest pending assignment is applied, after the revocations queued
// before it; a closed queue keeps nothing and takes nothing (no operation outlives the herder loop).
func TestOpQueueAssignmentsAndClose(t *testing.T) {
	q := newOpQueue()
	var ran []string
	op := func(name string) func() { return func() { ran = append(ran, name) } }
	q.push("tasks/a", op("tasks"))
	require.True(t, q.pushUrgent(op("revoke1")))
	require.True(t, q.pushAssignment(op("assign1")))
	require.True(t, q.pushUrgent(op("revoke2")))
	require.True(t, q.pushAssignment(op("assign2")))
	for fn, ok := q.pop(); ok; fn, ok = q.pop() {
		fn()
	}
	require.Equal(t, []string{"revoke1", "revoke2", "assign2", "tasks"}, ran)

	q.push("x", op("x"))
	q.close()
	require.Zero(t, q.len())
	require.False(t, q.pushUrgent(op("late revoke")))
	require.False(t, q.pushAssignment(op("late assign")))
	q.push("", op("late"))
	_, ok := q.pop()
	require.False(t, ok)
}
