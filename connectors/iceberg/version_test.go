package iceberg

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// captureWarnings routes the default logger into a buffer for the test's duration.
func captureWarnings(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return &buf
}

// TestVersionConfigWarnings: a configuration that cannot keep a stale event from winning
// across commits is named at task start (one WARN per table); a version path that resolves
// to nothing in the records is named once, at the first such record.
func TestVersionConfigWarnings(t *testing.T) {
	t.Run("upsert-without-version", func(t *testing.T) {
		logs := captureWarnings(t)
		props, _ := sinkProps(t, map[string]string{KeyTables: "shop.a,shop.b,shop.h", KeyDefaultIDColumns: "id",
			KeyUpsertModeEnabled: "true", "iceberg.table.shop.b.version-column": "source.lsn", "iceberg.table.shop.h.raw-cdc": "true"})
		task, _ := startTask(t, props)
		defer task.Stop()
		require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), logs.String())
		require.Contains(t, logs.String(), "table=shop.a")
		require.Contains(t, logs.String(), KeyVersionColumn)
	})
	t.Run("path-resolves-to-nothing", func(t *testing.T) {
		logs := captureWarnings(t)
		props, _ := sinkProps(t, map[string]string{KeyTables: "shop.c", KeyDefaultIDColumns: "id",
			KeyUpsertModeEnabled: "true", KeyVersionColumn: "source.lsn"})
		task, _ := startTask(t, props)
		defer task.Stop()
		require.Empty(t, logs.String())
		mysql := versionSources[2]
		require.Equal(t, "mysql-binlog", mysql.name)
		require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{
			mysql.cdcRec("c", 1, "a", 100, 0), mysql.cdcRec("c", 2, "b", 101, 1)}))
		require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), logs.String())
		require.Contains(t, logs.String(), "table=shop.c")
		require.Contains(t, logs.String(), "version_column=source.lsn")
	})
	t.Run("unknown-source-field", func(t *testing.T) {
		logs := captureWarnings(t)
		props, _ := sinkProps(t, map[string]string{KeyTables: "shop.c", KeyDefaultIDColumns: "id",
			KeyUpsertModeEnabled: "true", KeyVersionColumn: "source.lsnn"})
		task, _ := startTask(t, props)
		defer task.Stop()
		require.Contains(t, logs.String(), "not a known source position")
	})
}
