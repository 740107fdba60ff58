package clickhouse

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// deadPort is a loopback port with nothing listening.
func deadPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// countingHandler counts log records by level.
type countingHandler struct {
	mu     sync.Mutex
	counts map[slog.Level]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[r.Level]++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func (h *countingHandler) count(l slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[l]
}

// A task whose server is not listening fails at start with the cause.
func TestTaskStartWithoutServer(t *testing.T) {
	port := deadPort(t)
	task := &Task{}
	err := task.Start(map[string]string{"hostname": "127.0.0.1", "port": fmt.Sprint(port), "timeoutSeconds": "5"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "connection to ClickHouse is not active")
	require.Contains(t, err.Error(), fmt.Sprintf("127.0.0.1:%d", port))
	require.Contains(t, err.Error(), "connection refused")
	require.NoError(t, task.Stop())
}

// A server that goes away after start: each put is given back for redelivery within errors.retry.timeout,
// with at most one ERROR line per interval however often the runtime redelivers; past the budget the task
// fails with the cause.
func TestTaskServerGoneFailsAfterRetryBudget(t *testing.T) {
	port := deadPort(t)
	cfg, err := ParseConfig(map[string]string{"hostname": "127.0.0.1", "port": fmt.Sprint(port), "timeoutSeconds": "5",
		"retryCount": "1", "errors.retry.timeout": "2"})
	require.NoError(t, err)
	task := &Task{}
	task.setup(cfg) // started while the server was up
	logs := &countingHandler{counts: map[slog.Level]int{}}
	task.log = slog.New(logs)
	defer task.Stop()

	recs := []*connect.SinkRecord{{Topic: "events", Partition: 0, Offset: 0, Value: map[string]any{"id": int64(1)}}}
	ctx := context.Background()
	start := time.Now()
	var final error
	redeliveries := 0
	for time.Since(start) < time.Minute {
		err := task.Put(ctx, recs)
		require.Error(t, err, "nothing is listening")
		if !connect.IsRetriable(err) {
			final = err
			break
		}
		redeliveries++
		time.Sleep(20 * time.Millisecond) // the runtime redelivers; faster than it would, to stress the log limit
	}
	require.Error(t, final, "the task must fail after the retry budget")
	require.GreaterOrEqual(t, time.Since(start), 2*time.Second, "not before the budget")
	require.Contains(t, final.Error(), "longer than errors.retry.timeout (2s)")
	require.Contains(t, final.Error(), fmt.Sprintf("127.0.0.1:%d", port))
	require.Greater(t, redeliveries, 5)
	require.Equal(t, 1, logs.count(slog.LevelError), "one ERROR line per %s, not one per redelivery (%d redeliveries)", failureLogInterval, redeliveries)

	// A success ends the run of failures: the budget starts again from the next failure.
	task.failures.succeeded()
	err = task.Put(ctx, recs)
	require.True(t, connect.IsRetriable(err), "%v", err)
}
