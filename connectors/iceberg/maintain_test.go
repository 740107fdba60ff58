package iceberg_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	iceberg "github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
	"github.com/connectd/connectd/internal/metrics"
)

// TestMaintenanceInConnector: an upsert stream (updates, deletes, partition moves) in many small
// commits through a task whose committer maintains the table between its rounds. After every few
// commits the next maintenance leaves the table with one data file per partition and no delete
// file, and only the snapshots the offsets need; no round fails because maintenance moved the
// head; DuckDB reads the expected rows; the sink's offsets survive (a replay is skipped); the
// metrics show it.
func TestMaintenanceInConnector(t *testing.T) {
	const name = "shop.customers"
	props, _ := iceberg.SinkPropsT(t, map[string]string{
		iceberg.KeyTables:                           name,
		iceberg.KeyDefaultIDColumns:                 "id",
		"iceberg.table." + name + ".partition-by":   "day(ts)",
		"iceberg.table." + name + ".version-column": "version",
		iceberg.KeyCommitIntervalMs:                 "50",
		iceberg.KeyMaintenanceInterval:              "100",
		maintenance.KeyMaxSnapshotAge:               "1",
		maintenance.KeyExpireGrace:                  "0",
	})
	task := iceberg.StartTaskT(t, props)
	recs, want := iceberg.CDCStreamT("cdc.shop.customers", 5, 2400, 150, 3)
	cat := openCatalog(t, props)
	ident := catalog.ToIdentifier(name)

	const batch, checkEvery = 40, 10
	commits, checks := 0, 0
	for i := 0; i < len(recs); i += batch {
		require.NoError(t, task.Put(context.Background(), recs[i:min(i+batch, len(recs))]))
		require.True(t, iceberg.CommitNowT(task), "commit %d", commits)
		commits++
		if commits%checkEvery != 0 && i+batch < len(recs) {
			continue
		}
		// rounds and maintenance take the same lock: a run that ends from now on began after
		// the commit above
		runs, _ := iceberg.MaintenanceRunsT(task, name)
		require.Eventually(t, func() bool { r, _ := iceberg.MaintenanceRunsT(task, name); return r > runs },
			2*time.Minute, 20*time.Millisecond, "no maintenance after commit %d", commits)
		st := tableStats(t, cat, ident)
		t.Logf("after %d commits: %d data files (%d B), %d delete files, %d snapshots", commits, st.DataFiles, st.DataBytes, st.DeleteFiles, st.Snapshots)
		require.LessOrEqual(t, st.DataFiles, 4, "one file per day(ts) partition")
		require.Zero(t, st.DeleteFiles)
		require.LessOrEqual(t, st.Snapshots, 2, "expiry keeps the head, which carries the offsets, and at most one more")
		// the versions of deleted keys, maintained with the table
		dst := tableStats(t, cat, icetable.TombstoneIdent(ident))
		t.Logf("%s%s: %d data files, %d delete files, %d snapshots", name, icetable.TombstoneSuffix, dst.DataFiles, dst.DeleteFiles, dst.Snapshots)
		require.Positive(t, dst.DataRecords, "deleted keys are recorded")
		require.LessOrEqual(t, dst.DataFiles, 2, "%s%s compacted", name, icetable.TombstoneSuffix)
		require.Zero(t, dst.DeleteFiles, "%s%s compacted", name, icetable.TombstoneSuffix)
		require.LessOrEqual(t, dst.Snapshots, 2, "%s%s expired", name, icetable.TombstoneSuffix)
		checks++
	}
	require.GreaterOrEqual(t, commits, 50)
	require.GreaterOrEqual(t, checks, 5)
	_, failures := iceberg.MaintenanceRunsT(task, name)
	require.Zero(t, failures)

	gauge := func(name string, labels ...string) float64 { return metricValue(t, props["name"], name, labels...) }
	st := tableStats(t, cat, ident)
	require.Equal(t, float64(st.DataFiles), gauge("connectd_iceberg_table_files", "table", name, "content", "data"))
	require.Equal(t, 0.0, gauge("connectd_iceberg_table_files", "table", name, "content", "delete"))
	require.Equal(t, float64(st.DataBytes), gauge("connectd_iceberg_table_bytes", "table", name, "content", "data"))
	require.GreaterOrEqual(t, gauge("connectd_iceberg_maintenance_runs_total", "table", name, "result", "ok"), float64(checks))
	require.Equal(t, 0.0, gauge("connectd_iceberg_maintenance_runs_total", "table", name, "result", "failed"))
	require.GreaterOrEqual(t, gauge("connectd_iceberg_maintenance_compactions_total", "table", name), float64(checks))
	require.Positive(t, gauge("connectd_iceberg_maintenance_expired_snapshots_total", "table", name))
	require.InDelta(t, float64(time.Now().Unix()), gauge("connectd_iceberg_maintenance_last_success_timestamp_seconds", "table", name), 120)
	require.Equal(t, 0.0, gauge("connectd_iceberg_commit_rounds_total", "result", "failed"), "maintenance never fenced a round")
	require.NoError(t, task.Stop())

	// read once maintenance stopped: an expiry between loading the table and reading its files would
	// delete the files of the loaded snapshot
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	replaced := false
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Operation == table.OpReplace && s.Summary.Properties[maintenance.SummaryMaintenance] != "" {
			replaced = true
		}
	}
	require.True(t, replaced, "a replace snapshot of maintenance is in the table")
	require.Equal(t, want, iceberg.DuckRowsT(t, tbl.MetadataLocation(), "SELECT id, name, version FROM t"))

	// a restarted task re-reads the last rounds (the group offsets were behind the table's): the
	// table's offsets, copied by every compaction and kept by expiry, skip all of it (without
	// maintenance, whose own snapshots would move the head)
	head := tbl.CurrentSnapshot().SnapshotID
	restart := maps.Clone(props)
	delete(restart, iceberg.KeyMaintenanceInterval)
	task = iceberg.StartTaskT(t, restart)
	last := recs[len(recs)-3*batch:]
	require.NoError(t, task.Put(context.Background(), last))
	require.True(t, iceberg.CommitNowT(task))
	require.Equal(t, int64(len(last)), iceberg.SkippedT(task))
	require.NoError(t, task.Stop())
	tbl, err = cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	require.Equal(t, head, tbl.CurrentSnapshot().SnapshotID, "the replay committed nothing")
	require.Equal(t, want, iceberg.DuckRowsT(t, tbl.MetadataLocation(), "SELECT id, name, version FROM t"))
}

// TestMaintenanceFailureKeepsTask: a table whose compaction cannot read a data file (removed from
// storage behind the table's back) fails its maintenance; the task keeps committing, the failure
// is a WARN naming the table and the cause, it is counted, and maintenance tries again.
func TestMaintenanceFailureKeepsTask(t *testing.T) {
	logs := &lockedBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	const name = "db.events"
	props, _ := iceberg.SinkPropsT(t, map[string]string{
		iceberg.KeyTables:              name,
		iceberg.KeyCommitIntervalMs:    "50",
		iceberg.KeyMaintenanceInterval: "100",
		iceberg.KeyMaintenanceActions:  "compact",
	})
	task := iceberg.StartTaskT(t, props)
	defer task.Stop()
	cat := openCatalog(t, props)
	ident := catalog.ToIdentifier(name)
	off := int64(0)
	put := func(n int) {
		var rs []*connect.SinkRecord
		for i := 0; i < n; i++ {
			rs = append(rs, &connect.SinkRecord{Topic: "events", Offset: off, Value: map[string]any{"id": off, "v": fmt.Sprint("e", off)},
				Timestamp: 1700000000000, OriginalTopic: "events", OriginalOffset: off})
			off++
		}
		require.NoError(t, task.Put(context.Background(), rs))
		require.True(t, iceberg.CommitNowT(task))
	}
	put(5)
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	files := liveDataFiles(t, tbl)
	require.NotEmpty(t, files)
	missing := strings.TrimPrefix(files[0], "file://")
	require.NoError(t, os.Remove(missing))

	for failures := int64(0); failures < 2; {
		put(5) // a second small file: the partition is compacted, which reads the missing one
		runs, _ := iceberg.MaintenanceRunsT(task, name)
		require.Eventually(t, func() bool { r, _ := iceberg.MaintenanceRunsT(task, name); return r > runs },
			2*time.Minute, 20*time.Millisecond)
		_, failures = iceberg.MaintenanceRunsT(task, name)
	}
	put(5)
	require.GreaterOrEqual(t, metricValue(t, props["name"], "connectd_iceberg_maintenance_runs_total", "table", name, "result", "failed"), 2.0)
	require.Equal(t, 0.0, metricValue(t, props["name"], "connectd_iceberg_commit_rounds_total", "result", "failed"))
	out := logs.String()
	require.Contains(t, out, "iceberg table maintenance failed")
	require.Contains(t, out, "table="+name)
	require.Contains(t, out, filepath.Base(missing), "the cause names the file")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func openCatalog(t *testing.T, props map[string]string) catalog.Catalog {
	t.Helper()
	cfg, err := iceberg.ParseConfig(props)
	require.NoError(t, err)
	cat, err := catalogx.Open(context.Background(), cfg.CatalogName, cfg.CatalogProps)
	require.NoError(t, err)
	return cat
}

func tableStats(t *testing.T, cat catalog.Catalog, ident table.Identifier) maintenance.FileStats {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	st, err := maintenance.Stats(context.Background(), tbl, "")
	require.NoError(t, err)
	return st
}

func liveDataFiles(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	var out []string
	for _, ft := range tasks {
		out = append(out, ft.File.FilePath())
	}
	return out
}

// metricValue reads one metric of connector from the process's registry; -1 when it is absent.
func metricValue(t *testing.T, connector, name string, labels ...string) float64 {
	t.Helper()
	fams, err := metrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			lv := map[string]string{}
			for _, l := range m.GetLabel() {
				lv[l.GetName()] = l.GetValue()
			}
			if lv["connector"] != connector {
				continue
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if lv[labels[i]] != labels[i+1] {
					continue metric
				}
			}
			return value(m)
		}
	}
	return -1
}

func value(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestMaintenanceConfig: the interval turns maintenance on; a bad interval, action or policy
// value is refused at start and by /config/validate under its own key; without the interval the
// policy keys are not read (the connector ran unchanged with them before).
func TestMaintenanceConfig(t *testing.T) {
	props, _ := iceberg.SinkPropsT(t, map[string]string{iceberg.KeyTables: "db.t", iceberg.KeyMaintenanceInterval: "60000"})
	cfg, err := iceberg.ParseConfig(props)
	require.NoError(t, err)
	require.Equal(t, time.Minute, cfg.MaintenanceInterval)
	for k, v := range map[string]string{
		iceberg.KeyMaintenanceInterval: "-1",
		iceberg.KeyMaintenanceActions:  "compact,vacuum",
		maintenance.KeyRetainLast:      "ten",
		maintenance.KeyOrphanAge:       "60000",
	} {
		p := maps.Clone(props)
		p[k] = v
		_, err := iceberg.ParseConfig(p)
		var ce *connect.ConfigError
		require.ErrorAs(t, err, &ce, k)
		require.Equal(t, k, ce.Name)
		vals := (&iceberg.Connector{}).Validate(p)
		require.Len(t, vals, 1, k)
		require.Equal(t, k, vals[0].Name)
	}
	// a table's retention goes as a pair, refused under the max age's key
	for k, v := range map[string]string{
		"iceberg.table.db.t.retention-column":     "ts",
		"iceberg.table.db.t.retention-max-age-ms": "-5",
	} {
		p := maps.Clone(props)
		p[k] = v
		_, err := iceberg.ParseConfig(p)
		var ce *connect.ConfigError
		require.ErrorAs(t, err, &ce, k)
		require.Equal(t, "iceberg.table.db.t.retention-max-age-ms", ce.Name)
	}
	p := maps.Clone(props)
	p["iceberg.table.db.t.retention-column"], p["iceberg.table.db.t.retention-max-age-ms"] = "ts", "86400000"
	_, err = iceberg.ParseConfig(p)
	require.NoError(t, err)
	off := maps.Clone(props)
	delete(off, iceberg.KeyMaintenanceInterval)
	off[maintenance.KeyRetainLast] = "ten"
	cfg, err = iceberg.ParseConfig(off)
	require.NoError(t, err)
	require.Zero(t, cfg.MaintenanceInterval)
}
