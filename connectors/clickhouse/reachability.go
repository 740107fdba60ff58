package clickhouse

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ClickHouse/ch-go"

	"github.com/connectd/connectd/connect"
)

// failureLogInterval is the least time between two log lines about failing writes: a server that is down
// makes every redelivery fail, and one line per interval (with the count of the others) says as much.
const failureLogInterval = 10 * time.Second

// checkConnection is the connection check at task start (the official sink pings its server there and fails
// the task when it cannot): a task that cannot reach ClickHouse fails with the cause instead of looking healthy.
func (t *Task) checkConnection(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	if err := t.pool.do(ctx, func(c *ch.Client) error { return c.Ping(ctx) }); err != nil {
		return fmt.Errorf("clickhouse: connection to ClickHouse is not active (native protocol, %s:%d): %w", t.cfg.Host, t.cfg.Port, err)
	}
	return nil
}

// failureBudget tracks consecutive retriable write failures. Within errors.retry.timeout (RetryTimeout) of
// the first one the batch is given back for redelivery; beyond it the task fails with the cause. A negative
// budget retries forever, as the runtime's errors.retry.timeout=-1.
type failureBudget struct {
	mu         sync.Mutex
	since      time.Time // first failure of the current run; zero after a success
	lastLog    time.Time
	suppressed int
}

func (b *failureBudget) succeeded() {
	b.mu.Lock()
	b.since = time.Time{}
	b.mu.Unlock()
}

// failed returns the error for the runtime: retriable within the budget, fatal beyond it.
func (t *Task) failed(err error) error {
	b := &t.failures
	now := time.Now()
	b.mu.Lock()
	if b.since.IsZero() {
		b.since = now
	}
	failing := now.Sub(b.since)
	logNow := now.Sub(b.lastLog) >= failureLogInterval
	suppressed := b.suppressed
	if logNow {
		b.lastLog, b.suppressed = now, 0
	} else {
		b.suppressed++
	}
	b.mu.Unlock()

	if budget := t.cfg.RetryTimeout; budget >= 0 && failing >= budget {
		return fmt.Errorf("clickhouse: writes have failed for %s, longer than errors.retry.timeout (%s): %w",
			failing.Round(time.Millisecond), budget, err)
	}
	if logNow {
		t.log.Error("writes to ClickHouse are failing; the batch will be redelivered", "failing_for", failing.Round(time.Millisecond),
			"retry_budget", t.cfg.RetryTimeout, "suppressed_since_last", suppressed, "err", err)
	}
	return connect.Retriable(err)
}
