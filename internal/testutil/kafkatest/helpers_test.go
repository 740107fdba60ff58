package kafkatest_test

import (
	"context"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// markAll is a consumer group handler that marks every message and closes done after want.
type markAll struct {
	want int
	mu   sync.Mutex
	n    int
	once sync.Once
	done chan struct{}
}

func (h *markAll) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *markAll) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *markAll) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			sess.MarkMessage(m, "")
			h.mu.Lock()
			h.n++
			reached := h.n >= h.want
			h.mu.Unlock()
			if reached {
				h.once.Do(func() { close(h.done) })
			}
		case <-sess.Context().Done():
			return nil
		}
	}
}
