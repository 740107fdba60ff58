package worker

import (
	"errors"
	"net"
	"sync"
)

// errWokenUp refuses broker connections of a stopping consumer that is not in a group session.
var errWokenUp = errors.New("consumer woken up: the task is stopping")

// consumerWakeup lets a stop interrupt the task's consumer, as the JVM's consumer.wakeup() does for a
// stopping WorkerSinkTask. sarama's requests cannot be cancelled: a JoinGroup (or SyncGroup, or a
// metadata refresh) waits for the broker's answer, which for a join is when the whole group has
// rejoined, up to the rebalance timeout. The consumer's connections are therefore dialled through
// here, and a wakeup outside a session closes them, so the blocked request fails at once; new
// connections are refused until the consume loop has ended (so no join starts again), then allowed
// again for the consumer's LeaveGroup, which lets the coordinator drop the half-joined member at once.
// In a session nothing is closed: cancelling its context ends it, and its revocation makes the final
// offset commit.
type consumerWakeup struct {
	dialer *net.Dialer

	mu        sync.Mutex
	conns     map[*trackedConn]struct{}
	inSession bool // between the handler's Setup and the end of group.Consume
	woken     bool // the task is stopping
	refusing  bool // woken outside a session and the consume loop has not ended yet
}

func newConsumerWakeup() *consumerWakeup {
	return &consumerWakeup{conns: map[*trackedConn]struct{}{}}
}

// withDialer sets how connections are made; called once, before the consumer connects.
func (w *consumerWakeup) withDialer(d *net.Dialer) *consumerWakeup {
	w.dialer = d
	return w
}

// Dial is sarama's proxy.Dialer.
func (w *consumerWakeup) Dial(network, addr string) (net.Conn, error) {
	w.mu.Lock()
	refusing := w.refusing
	w.mu.Unlock()
	if refusing {
		return nil, errWokenUp
	}
	c, err := w.dialer.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refusing { // woken while dialling: this connection would carry the join that was interrupted
		_ = c.Close()
		return nil, errWokenUp
	}
	tc := &trackedConn{Conn: c, w: w}
	w.conns[tc] = struct{}{}
	return tc, nil
}

// enterSession is called from the group handler's Setup; false means the task is stopping and the
// session must not be used (it ends as soon as it starts, without an assignment to commit for).
func (w *consumerWakeup) enterSession() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.woken {
		return false
	}
	w.inSession = true
	return true
}

// leaveSession is called when group.Consume returned: the consumer is between sessions. A stop
// cancels the task's context before it wakes the consumer, so the consume loop does not start another
// join after a session that ended while the task was stopping.
func (w *consumerWakeup) leaveSession() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inSession = false
}

// wake interrupts whatever the consumer does outside a session. Idempotent.
func (w *consumerWakeup) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.woken = true
	if !w.inSession {
		w.interruptLocked()
	}
}

// consumeEnded is called once the consume loop returned: the consumer may connect again to leave.
func (w *consumerWakeup) consumeEnded() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.refusing = false
}

func (w *consumerWakeup) interruptLocked() {
	if w.refusing {
		return
	}
	w.refusing = true
	for c := range w.conns {
		_ = c.Conn.Close()
		delete(w.conns, c)
	}
}

type trackedConn struct {
	net.Conn
	w    *consumerWakeup
	once sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.w.mu.Lock()
		delete(c.w.conns, c)
		c.w.mu.Unlock()
	})
	return err
}
