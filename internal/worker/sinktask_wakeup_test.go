package worker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// silentListener accepts connections and never answers: a request on them waits until the connection is
// closed, as a JoinGroup waits for the rest of its group.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var accepted []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted = append(accepted, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range accepted {
			_ = c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

type wakeOp int

const (
	opDial wakeOp = iota
	opClose
	opEnter
	opLeave
	opWake
	opConsumeEnded
	numWakeOps
)

func (o wakeOp) String() string {
	return [...]string{"dial", "close", "enterSession", "leaveSession", "wake", "consumeEnded"}[o]
}

// wakeModel is the contract of consumerWakeup in plain terms.
type wakeModel struct {
	woken, inSession, refusing bool
}

// runWakeHistory applies ops to a consumerWakeup and to the model; it returns the first disagreement.
func runWakeHistory(addr string, ops []wakeOp, pick []int) error {
	w := newConsumerWakeup().withDialer(&net.Dialer{Timeout: 5 * time.Second})
	var m wakeModel
	var open []net.Conn   // open by the model
	var closed []net.Conn // closed by the wakeup, by the model
	defer func() {
		for _, c := range open {
			_ = c.Close()
		}
	}()
	for i, op := range ops {
		switch op {
		case opDial:
			c, err := w.Dial("tcp", addr)
			if m.refusing != (err != nil) {
				return fmt.Errorf("op %d dial: refusing=%v, got error %v", i, m.refusing, err)
			}
			if err == nil {
				open = append(open, c)
			} else if !errors.Is(err, errWokenUp) {
				return fmt.Errorf("op %d dial: %v", i, err)
			}
		case opClose:
			if len(open) > 0 {
				j := pick[i] % len(open)
				_ = open[j].Close()
				open = append(open[:j], open[j+1:]...)
			}
		case opEnter:
			if got := w.enterSession(); got != !m.woken {
				return fmt.Errorf("op %d enterSession = %v after woken=%v", i, got, m.woken)
			}
			if !m.woken {
				m.inSession = true
			}
		case opLeave:
			w.leaveSession()
			m.inSession = false
		case opWake:
			w.wake()
			m.woken = true
			if !m.inSession && !m.refusing {
				m.refusing = true
				closed = append(closed, open...)
				open = nil
			}
		case opConsumeEnded:
			w.consumeEnded()
			m.refusing = false
		}
		for _, c := range open {
			if _, err := c.Write([]byte{0}); err != nil {
				return fmt.Errorf("after op %d (%v): a connection the model keeps open fails: %v", i, op, err)
			}
		}
		for _, c := range closed {
			if _, err := c.Write([]byte{0}); !errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("after op %d (%v): a connection the wakeup should have closed is open (write: %v)", i, op, err)
			}
		}
	}
	return nil
}

func formatOps(ops []wakeOp) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = o.String()
	}
	return strings.Join(s, " ")
}

// TestConsumerWakeupModel: random histories of what the consume loop, sarama and a stop do to the
// wakeup, checked against the model: a wakeup outside a session closes every connection and refuses new
// ones until the consume loop ended; in a session it closes nothing; a woken consumer enters no session.
// A failing history is shrunk to a minimal one.
func TestConsumerWakeupModel(t *testing.T) {
	addr := silentListener(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	histories := 300
	if testing.Short() {
		histories = 60
	}
	for h := 0; h < histories; h++ {
		n := 1 + rng.IntN(25)
		ops, pick := make([]wakeOp, n), make([]int, n)
		for i := range ops {
			ops[i], pick[i] = wakeOp(rng.IntN(int(numWakeOps))), rng.IntN(100)
		}
		err := runWakeHistory(addr, ops, pick)
		if err == nil {
			continue
		}
		for shrunk := true; shrunk; { // drop single ops while the history still fails
			shrunk = false
			for i := range ops {
				o2 := append(append([]wakeOp(nil), ops[:i]...), ops[i+1:]...)
				p2 := append(append([]int(nil), pick[:i]...), pick[i+1:]...)
				if e2 := runWakeHistory(addr, o2, p2); e2 != nil {
					ops, pick, err, shrunk = o2, p2, e2, true
					break
				}
			}
		}
		t.Fatalf("seed %d: history %q: %v", seed, formatOps(ops), err)
	}
}

// TestConsumerWakeupRace runs a consume loop shaped like the task's against a stop at a random moment:
// joins wait on a broker that never answers, sessions write on their connections. The loop must always
// end (a join outside a session is interrupted, none starts after the stop) and a session's connections
// must never be closed under it (its final commit needs them). Run with -race.
func TestConsumerWakeupRace(t *testing.T) {
	addr := silentListener(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	for r := 0; r < rounds; r++ {
		w := newConsumerWakeup().withDialer(&net.Dialer{Timeout: 5 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		joinFor := time.Duration(rng.IntN(3000)) * time.Microsecond // a join that completes, or not
		if rng.IntN(2) == 0 {
			joinFor = time.Hour
		}
		stopAfter := time.Duration(rng.IntN(3000)) * time.Microsecond
		done := make(chan error, 1)
		go func() { done <- consumeLike(ctx, w, addr, joinFor) }()
		time.Sleep(stopAfter)
		cancel()
		w.wake()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("seed %d round %d: %v", seed, r, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("seed %d round %d: the consume loop did not end after the stop (join %v, stop after %v)", seed, r, joinFor, stopAfter)
		}
		// after the loop, the consumer may connect again (to leave the group)
		c, err := w.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("seed %d round %d: dial after the consume loop ended: %v", seed, r, err)
		}
		_ = c.Close()
	}
}

// consumeLike is the consume loop's use of the wakeup: join (a request that waits for an answer that never
// comes, or gives up after joinFor as if answered), then a session until the context ends.
func consumeLike(ctx context.Context, w *consumerWakeup, addr string, joinFor time.Duration) error {
	defer w.consumeEnded()
	for ctx.Err() == nil {
		c, err := w.Dial("tcp", addr)
		if err != nil {
			continue // refused: the loop sees the cancelled context next
		}
		_ = c.SetReadDeadline(time.Now().Add(joinFor))
		_, err = c.Read(make([]byte, 1))
		var ne net.Error
		joined := errors.As(err, &ne) && ne.Timeout()
		if joined && w.enterSession() {
			for ctx.Err() == nil {
				if _, err := c.Write([]byte{0}); err != nil {
					_ = c.Close()
					return fmt.Errorf("a session's connection was closed under it: %v", err)
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
		w.leaveSession()
		_ = c.Close()
	}
	return nil
}
