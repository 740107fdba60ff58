package iceberg_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	iceberg "github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestRetentionInConnector: one CDC topic feeds a current-state table and its raw history, whose
// per-table retention (by source_timestamp, partitioned by day of it) ages out every event of the
// stream (their source timestamps are of 2023). After the connector's maintenance runs past the
// last commit, no Parquet file left in the history table's location holds a row, while the
// current-state table, which has no retention, still reads the expected rows.
func TestRetentionInConnector(t *testing.T) {
	const cur, hist = "shop.customers", "shop.customers_history"
	props, _ := iceberg.SinkPropsT(t, map[string]string{
		iceberg.KeyTables:                                                cur + "," + hist,
		iceberg.KeyDefaultIDColumns:                                      "id",
		"iceberg.table." + cur + ".version-column":                       "version",
		"iceberg.table." + hist + ".raw-cdc":                             "true",
		"iceberg.table." + hist + ".partition-by":                        "day(source_timestamp)",
		"iceberg.table." + hist + "." + maintenance.TableRetentionColumn: "source_timestamp",
		"iceberg.table." + hist + "." + maintenance.TableRetentionMaxAge: "86400000",
		iceberg.KeyCommitIntervalMs:                                      "50",
		iceberg.KeyMaintenanceInterval:                                   "100",
		maintenance.KeyMaxSnapshotAge:                                    "1",
		maintenance.KeyExpireGrace:                                       "0",
	})
	task := iceberg.StartTaskT(t, props)
	recs, want := iceberg.CDCStreamT("cdc.shop.customers", 7, 600, 50, 3)
	for i := 0; i < len(recs); i += 100 {
		require.NoError(t, task.Put(context.Background(), recs[i:min(i+100, len(recs))]))
		require.True(t, iceberg.CommitNowT(task))
	}
	runs, _ := iceberg.MaintenanceRunsT(task, hist)
	require.Eventually(t, func() bool { r, _ := iceberg.MaintenanceRunsT(task, hist); return r > runs },
		2*time.Minute, 20*time.Millisecond, "no maintenance after the last commit")
	_, failures := iceberg.MaintenanceRunsT(task, hist)
	require.Zero(t, failures)
	require.NoError(t, task.Stop()) // no maintenance expires what the reads below open

	cat := openCatalog(t, props)
	htbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(hist))
	require.NoError(t, err)
	require.Empty(t, icebergtest.ScanRows(t, htbl), "history rows past the retention")
	head := htbl.CurrentSnapshot()
	require.NotNil(t, head)
	require.Equal(t, "retention", head.Summary.Properties[maintenance.SummaryMaintenance], "the head is the retention's: the rows were there and it removed them")
	files := 0
	require.NoError(t, filepath.WalkDir(strings.TrimPrefix(htbl.Location(), "file://"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		files++
		require.Empty(t, icebergtest.FileRows(t, p, "kafka_offset"), "%s holds history rows past the retention", p)
		return nil
	}))
	t.Logf("%d Parquet files left in the history table's location", files)

	ctbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(cur))
	require.NoError(t, err)
	require.Equal(t, want, iceberg.DuckRowsT(t, ctbl.MetadataLocation(), "SELECT id, name, version FROM t"))
}
