package herder

import (
	"slices"
	"sync"
)

// opQueue is the distributed herder's work queue (the JVM herder thread's request queue). Producers never
// block: the group member, the config log's reader, REST handlers and timers only append. Membership events
// (urgent) run before anything else, so that a worker that lost its membership stops its work before it does
// anything more.
//
// The queue stays bounded without blocking anyone: a keyed operation that is already pending is not queued
// twice (config records are keyed per connector and kind, so a burst of them costs one operation each), and
// only the newest assignment waits to be applied (an older one is outdated once a newer arrived). Unkeyed
// operations come from REST requests that wait for them. Once closed (the herder loop ended) nothing is
// queued any more and nothing pending is kept.
type opQueue struct {
	mu      sync.Mutex
	urgent  []urgentOp
	ops     []keyedOp
	pending map[string]bool
	closed  bool
	signal  chan struct{} // one buffered wake-up
}

type keyedOp struct {
	key string
	fn  func()
}

type urgentOp struct {
	assignment bool // an assignment to apply (only the newest is kept)
	fn         func()
}

func newOpQueue() *opQueue {
	return &opQueue{pending: map[string]bool{}, signal: make(chan struct{}, 1)}
}

func (q *opQueue) wake() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pushUrgent queues a membership event ahead of all other work; false once the queue is closed.
func (q *opQueue) pushUrgent(fn func()) bool {
	return q.urgentOp(urgentOp{fn: fn})
}

// pushAssignment queues an assignment to apply, ahead of all other work and after the revocations queued
// before it; a pending older assignment is dropped.
func (q *opQueue) pushAssignment(fn func()) bool {
	return q.urgentOp(urgentOp{assignment: true, fn: fn})
}

func (q *opQueue) urgentOp(op urgentOp) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if op.assignment {
		q.urgent = slices.DeleteFunc(q.urgent, func(u urgentOp) bool { return u.assignment })
	}
	q.urgent = append(q.urgent, op)
	q.mu.Unlock()
	q.wake()
	return true
}

// push queues fn; with a non-empty key it is dropped when an operation of that key is still pending.
func (q *opQueue) push(key string, fn func()) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	if key != "" {
		if q.pending[key] {
			q.mu.Unlock()
			return
		}
		q.pending[key] = true
	}
	q.ops = append(q.ops, keyedOp{key, fn})
	q.mu.Unlock()
	q.wake()
}

// pop takes the next operation: urgent ones first. A keyed operation stops being pending when taken, so a
// push during its run queues it again.
func (q *opQueue) pop() (func(), bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.urgent) > 0 {
		op := q.urgent[0]
		q.urgent[0] = urgentOp{}
		q.urgent = q.urgent[1:]
		return op.fn, true
	}
	if len(q.ops) > 0 {
		op := q.ops[0]
		q.ops[0] = keyedOp{}
		q.ops = q.ops[1:]
		if op.key != "" {
			delete(q.pending, op.key)
		}
		return op.fn, true
	}
	return nil, false
}

// len is the number of operations waiting.
func (q *opQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.urgent) + len(q.ops)
}

// close drops what is pending and refuses further operations.
func (q *opQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.urgent, q.ops, q.pending = nil, nil, map[string]bool{}
}
