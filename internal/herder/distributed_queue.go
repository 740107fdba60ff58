package herder

import "sync"

// opQueue is the distributed herder's work queue (the JVM herder thread's request queue). Producers never
// block: the group member, the config log's reader, REST handlers and timers only append. Membership events
// (urgent) run before anything else, so that a worker that lost its membership stops its work before it does
// anything more. A keyed operation that is already pending is not queued twice (a burst of config records
// for one connector costs one reconfiguration).
type opQueue struct {
	mu      sync.Mutex
	urgent  []func()
	ops     []keyedOp
	pending map[string]bool
	signal  chan struct{} // one buffered wake-up
}

type keyedOp struct {
	key string
	fn  func()
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

// pushUrgent queues a membership event ahead of all other work.
func (q *opQueue) pushUrgent(fn func()) {
	q.mu.Lock()
	q.urgent = append(q.urgent, fn)
	q.mu.Unlock()
	q.wake()
}

// push queues fn; with a non-empty key it is dropped when an operation of that key is still pending.
func (q *opQueue) push(key string, fn func()) {
	q.mu.Lock()
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
		fn := q.urgent[0]
		q.urgent[0] = nil
		q.urgent = q.urgent[1:]
		return fn, true
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
