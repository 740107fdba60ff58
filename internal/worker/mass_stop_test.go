package worker_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/sinktest"
)

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}

// Thousands of tasks started while the process runs out of file handles, then cut to one task and deleted,
// leave no consumer behind: the goroutine and open-handle counts return to where they started. The handle
// limit is lowered to a few hundred above what is open, so most clients fail in every way a socket can
// (dial, accept on the broker's side, mid-join); the seed picks the limit and the task count's order.
func TestMassStopUnderHandleExhaustionLeavesNoConsumer(t *testing.T) {
	tasks := 8000
	if testing.Short() {
		tasks = 500
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	topic := "mass-stop"
	h, _ := standaloneOnKfake(t, topic, map[string]string{"connectd.tasks.max.limit": "100000"})

	runtime.GC()
	time.Sleep(200 * time.Millisecond)
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)

	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	orig := lim
	lim.Cur = uint64(baseFD + 100 + rng.IntN(400))
	t.Logf("baseline %d goroutines, %d handles; handle limit lowered to %d", baseG, baseFD, lim.Cur)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	restored := false
	restore := func() {
		if !restored {
			restored = true
			require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig))
		}
	}
	t.Cleanup(restore)

	ctx := context.Background()
	cfg := func(n int) map[string]string {
		return map[string]string{"name": "mass", "connector.class": sinktest.Class, "tasks.max": fmt.Sprint(n),
			"topics": topic, "sink.id": "mass-stop"}
	}
	_, _, err := h.PutConnectorConfig(ctx, "mass", cfg(tasks), "", false)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := h.ConnectorStatus(ctx, "mass")
		return err == nil && len(st.Tasks) == tasks
	}, 120*time.Second, 100*time.Millisecond, "the tasks never started")
	time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond) // clients mid-join, mid-failure
	_, _, err = h.PutConnectorConfig(ctx, "mass", cfg(1), "", true)
	require.NoError(t, err)
	require.NoError(t, h.DeleteConnector(ctx, "mass"))
	restore()

	var g, fds int
	ok := assertEventually(func() bool {
		runtime.GC()
		g, fds = runtime.NumGoroutine(), openFDs(t)
		return g <= baseG+5 && fds <= baseFD+5
	}, 90*time.Second, 500*time.Millisecond)
	if !ok {
		var buf bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
		out := buf.String()
		if len(out) > 20000 {
			out = out[:20000]
		}
		t.Fatalf("after stopping %d tasks: %d goroutines (started at %d), %d open handles (started at %d)\n%s", tasks, g, baseG, fds, baseFD, out)
	}
	t.Logf("after stopping %d tasks: %d goroutines, %d handles", tasks, g, fds)
}
