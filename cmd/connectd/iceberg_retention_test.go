package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestIcebergMaintainRetention runs `connectd iceberg maintain -retention-column ts
// -retention-max-age 240h` over a history table partitioned by day(ts) holding rows of 0 to 19
// days: the older partitions are dropped, the older rows are gone from every Parquet file of the
// table's location and the younger ones are left, as the table reads them (DuckDB).
func TestIcebergMaintainRetention(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	catProps := map[string]string{
		"catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
		"uri":          "jdbc:sqlite:" + filepath.Join(dir, "catalog.db"),
		"warehouse":    filepath.Join(dir, "warehouse"),
	}
	cat, err := catalogx.Open(ctx, "iceberg", catProps)
	require.NoError(t, err)
	st := &ice.StructType{FieldList: []ice.NestedField{
		{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
		{ID: 2, Name: "ts", Type: ice.PrimitiveTypes.TimestampTz},
	}}
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "history"}, Opts: icetable.TableOptions{
		PartitionBy: []string{"day(ts)"}, AutoCreate: true, OffsetsKey: icetable.OffsetsSummaryKey("connect-hist"),
	}}
	now := time.Now().UTC()
	horizon := now.Add(-240 * time.Hour)
	tp := icetable.TP{Topic: "t", Partition: 0}
	var recs []icetable.Rec
	var want []string
	for i := int64(0); i < 40; i++ {
		ts := now.Add(-time.Duration(i)*12*time.Hour - time.Hour) // 1 h to 19.5 days old
		recs = append(recs, icetable.Rec{Op: icerow.OpInsert, Row: icerow.Row{"id": i, "ts": ts}, Schema: st, TP: tp, Offset: i})
		if ts.After(horizon.Add(time.Minute)) {
			want = append(want, fmt.Sprint(i))
		}
	}
	_, err = w.Commit(ctx, recs, icetable.Offsets{tp: 40}, nil)
	require.NoError(t, err)
	sort.Strings(want)

	propsFile := filepath.Join(dir, "iceberg-sink.properties")
	text := "name=hist\nconnector.class=org.apache.iceberg.connect.IcebergSinkConnector\ntopics=t\niceberg.tables=db.history\n" +
		"iceberg.tables.maintenance.max-snapshot-age-ms=1\niceberg.tables.maintenance.expire-grace-ms=0\n"
	for k, v := range catProps {
		text += "iceberg.catalog." + k + "=" + v + "\n"
	}
	require.NoError(t, os.WriteFile(propsFile, []byte(text), 0o644))

	var stdout, stderr bytes.Buffer
	code := runIceberg(ctx, []string{"maintain", "-retention-column", "ts", "-retention-max-age", "240h",
		"-compact", "-expire-snapshots", "-format", "json", propsFile}, &stdout, &stderr)
	t.Logf("connectd iceberg maintain:\n%s%s", stdout.String(), stderr.String())
	require.Equal(t, 0, code, stderr.String())
	var reports []maintenance.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &reports))
	require.Len(t, reports, 1)
	require.NotNil(t, reports[0].Retention)
	require.Positive(t, reports[0].Retention.PartitionsDropped)

	tbl, err := cat.LoadTable(ctx, w.Ident)
	require.NoError(t, err)
	require.Equal(t, want, icebergtest.DuckRows(t, tbl.MetadataLocation(), "SELECT CAST(id AS VARCHAR) FROM t"))
	var got []string
	require.NoError(t, filepath.WalkDir(strings.TrimPrefix(tbl.Location(), "file://"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		for _, r := range icebergtest.FileRows(t, p, "id") {
			got = append(got, *r[0])
		}
		return nil
	}))
	sort.Strings(got)
	require.Equal(t, want, got, "rows of the Parquet files left in the location")

	// a flag without its pair is bad usage
	require.Equal(t, 2, runIceberg(ctx, []string{"maintain", "-retention-column", "ts", propsFile}, &stdout, &stderr))
}
