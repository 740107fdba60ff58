package reconcile

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// silentCatalog accepts connections and never answers: a run reaching it stays running until cancelled.
func silentCatalog(t *testing.T) (uri string, accepted func() int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "http://" + ln.Addr().String(), func() int { mu.Lock(); defer mu.Unlock(); return len(conns) }
}

func restCatalogJob(t *testing.T, uri string) Job {
	p := baseProps()
	p["iceberg.catalog.type"], p["iceberg.catalog.uri"] = "rest", uri
	cfg, err := ParseConfig(p)
	require.NoError(t, err)
	return Job{Source: "customers.properties", Config: cfg}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// One run at a time: a request while a run is in progress is refused, and stopping the worker cancels the
// run without recording it as an outcome.
func TestSchedulerOneRunAtATime(t *testing.T) {
	uri, accepted := silentCatalog(t)
	s := NewScheduler([]Job{restCatalogJob(t, uri)}, 0, NewMetrics(prometheus.NewRegistry()), quietLogger())
	s.Start(context.Background())
	st := s.Status()
	require.False(t, st.Running)
	require.Zero(t, st.IntervalMS)
	require.Equal(t, []JobStatus{{Config: "customers.properties", IcebergTable: "cdc.customers", ClickHouseTable: "default.customers"}}, st.Pairs)

	require.True(t, s.Trigger())
	require.True(t, s.Status().Running)
	require.False(t, s.Trigger(), "a run is in progress")
	require.Eventually(t, func() bool { return accepted() > 0 }, time.Minute, 10*time.Millisecond, "the run reaches the catalog")
	require.False(t, s.Trigger(), "a run is in progress")
	s.Stop()
	require.Empty(t, s.Status().Pairs[0].Result, "a cancelled run is no outcome")
}

// A failing run is logged, counted and reported with its error (not as a timeout: it ended well within
// the run timeout); the schedule goes on (interval: again after it), and a later request is accepted.
func TestSchedulerFailedRunsAreCounted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	uri := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close()) // connections are refused
	reg := prometheus.NewRegistry()
	var logs strings.Builder
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	s := NewScheduler([]Job{restCatalogJob(t, uri)}, 20*time.Millisecond, NewMetrics(reg), log, RunTimeout(time.Hour))
	s.Start(context.Background())
	defer s.Stop()
	runs := func() float64 {
		return testutil.ToFloat64(s.metrics.runs.Total.WithLabelValues("cdc.customers", "default.customers", "error"))
	}
	require.Eventually(t, func() bool { return runs() >= 2 }, time.Minute, 10*time.Millisecond, "scheduled runs go on after a failure")
	st := s.Status().Pairs[0]
	require.Equal(t, "error", st.Result)
	require.NotEmpty(t, st.Error)
	require.NotContains(t, st.Error, "did not finish")
	require.NotNil(t, st.RanAt)
	require.Nil(t, st.Report)
	logMu.Lock()
	require.Contains(t, logs.String(), "level=WARN msg=\"reconcile failed\" config=customers.properties")
	logMu.Unlock()
	require.Eventually(t, s.Trigger, time.Minute, time.Millisecond, "a request between runs is accepted")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A run whose backend stops answering ends as a failed run at the run timeout; the next request is accepted.
func TestSchedulerRunTimeout(t *testing.T) {
	uri, accepted := silentCatalog(t)
	s := NewScheduler([]Job{restCatalogJob(t, uri)}, 0, NewMetrics(prometheus.NewRegistry()), quietLogger(), RunTimeout(300*time.Millisecond))
	s.Start(context.Background())
	defer s.Stop()
	require.True(t, s.Trigger())
	require.Eventually(t, func() bool { return accepted() > 0 }, time.Minute, 10*time.Millisecond, "the run reaches the catalog")
	require.Eventually(t, func() bool { return !s.Status().Running }, time.Minute, 10*time.Millisecond, "the run ends at its timeout")
	p := s.Status().Pairs[0]
	require.Equal(t, "error", p.Result)
	require.Contains(t, p.Error, "did not finish within 300ms")
	require.True(t, s.Trigger(), "the next run is accepted")
}
