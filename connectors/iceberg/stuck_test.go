package iceberg

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/metrics"
)

// notingCtx records the notes the task makes in its status (connect.TaskStatusNoter).
type notingCtx struct {
	*fakeCtx
	mu    sync.Mutex
	notes []string
}

func (c *notingCtx) NoteStatus(note string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.notes) == 0 || c.notes[len(c.notes)-1] != note {
		c.notes = append(c.notes, note)
	}
}

func (c *notingCtx) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.notes) == 0 {
		return ""
	}
	return c.notes[len(c.notes)-1]
}

var _ connect.TaskStatusNoter = (*notingCtx)(nil)

// syncBuffer is a log destination written by several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStuckCatalogStatusShowsWhy: another process holds the SQLite catalog's write lock, so every commit
// round fails once its busy timeout is up. Within the stuck threshold (a few commit intervals; preset small
// here) the task's status notes why, the log has a WARN every check, and
// connectd_iceberg_commit_stuck_seconds is above 0; once the lock is gone the next round commits and the
// note and the metric clear.
func TestStuckCatalogStatusShowsWhy(t *testing.T) {
	props, dir := sinkProps(t, map[string]string{
		KeyTables:                            "db.stuck",
		"iceberg.control.commit.interval-ms": "200",
		KeyCommitRetryMs:                     "200",
		"iceberg.catalog.jdbc.busy_timeout":  "100",
	})
	logs := &syncBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	defer slog.SetDefault(prev)

	fctx := &notingCtx{fakeCtx: &fakeCtx{props: props}}
	task := &Task{stuckAfter: 2 * time.Second}
	task.Initialize(fctx)
	require.NoError(t, task.Start(props))
	defer task.Stop()
	ctx := context.Background()
	require.NoError(t, task.Put(ctx, benchRecords(10, 1<<62, 0)))
	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError) // the table exists

	other, err := sql.Open("sqlite", "file:"+dir+"/catalog.db?_busy_timeout=5000")
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "begin immediate")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "update iceberg_tables set previous_metadata_location = previous_metadata_location")
	require.NoError(t, err)

	stuck := func() float64 {
		fams, err := metrics.Registry.Gather()
		require.NoError(t, err)
		for _, f := range fams {
			if f.GetName() != "connectd_iceberg_commit_stuck_seconds" {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "connector" && l.GetValue() == props["name"] {
						return value(m)
					}
				}
			}
		}
		return -1
	}
	start := time.Now()
	require.NoError(t, task.Put(ctx, benchRecords(10, 1<<62, 10)))
	require.Eventually(t, func() bool { return strings.Contains(fctx.last(), "database is locked") }, time.Minute, 50*time.Millisecond,
		"the status never said why: %q", fctx.last())
	t.Logf("status after %s: %s", time.Since(start).Round(time.Millisecond), fctx.last())
	require.Less(t, time.Since(start), time.Minute)
	require.Contains(t, fctx.last(), "no commit has made this task's records durable for")
	require.Contains(t, fctx.last(), "the last commit round failed")
	require.Greater(t, stuck(), 0.0)
	require.Eventually(t, func() bool {
		return strings.Count(logs.String(), "commits make no progress") >= 2
	}, 30*time.Second, 50*time.Millisecond, "a WARN every check")
	require.Contains(t, logs.String(), "level=WARN msg=\"iceberg sink: commits make no progress\"")

	_, err = conn.ExecContext(ctx, "rollback")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return fctx.last() == "" && stuck() == 0 }, 30*time.Second, 50*time.Millisecond,
		"the note and the metric clear once a round commits: %q", fctx.last())
	require.Contains(t, logs.String(), "commits make progress again")
	pc, err := task.PreCommit(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, pc)
}

// TestStuckPutStatusShowsWhy: a put that waits (on opening the catalog or loading a table) past the stuck
// threshold is the reason the status gives, while it waits.
func TestStuckPutStatusShowsWhy(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{KeyTables: "db.put"})
	fctx := &notingCtx{fakeCtx: &fakeCtx{props: props}}
	task := &Task{stuckAfter: time.Second}
	task.Initialize(fctx)
	require.NoError(t, task.Start(props))
	defer task.Stop()
	task.watch.putSince.Store(time.Now().Add(-3 * time.Second).UnixNano()) // as Put does on entry
	task.checkProgress()
	require.Contains(t, fctx.last(), "a put has been waiting for 3s")
	require.Contains(t, fctx.last(), "no commit has made this task's records durable for 3s")
	task.watch.putSince.Store(0)
	task.checkProgress()
	require.Equal(t, "", fctx.last(), "nothing waits: the note clears")
}
