package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestIcebergMaintainCommand runs `connectd iceberg maintain` on the connector's properties
// file over an upsert table the sink's writer filled: it compacts the files, expires the
// snapshots (keeping the sink's offsets), prints what it did, leaves the live rows as they were
// (DuckDB) and exits non-zero when a table fails.
func TestIcebergMaintainCommand(t *testing.T) {
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
		{ID: 2, Name: "v", Type: ice.PrimitiveTypes.Int64},
	}}
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "upserts"}, Opts: icetable.TableOptions{
		IDColumns: []string{"id"}, PartitionBy: []string{"bucket(id,3)"}, AutoCreate: true, DeltaMode: true,
		OffsetsKey: icetable.OffsetsSummaryKey("connect-maint"),
	}}
	rng := rand.New(rand.NewSource(3))
	live := map[int64]int64{}
	tp := icetable.TP{Topic: "t", Partition: 0}
	off := int64(0)
	for round := 0; round < 5; round++ {
		var recs []icetable.Rec
		for i := 0; i < 200; i++ {
			id := int64(rng.Intn(100))
			op, row := icerow.OpUpdate, icerow.Row{"id": id, "v": off}
			if rng.Intn(6) == 0 {
				op, row = icerow.OpDelete, icerow.Row{"id": id}
				delete(live, id)
			} else {
				live[id] = off
			}
			recs = append(recs, icetable.Rec{Op: op, Row: row, Schema: st, TP: tp, Offset: off})
			off++
		}
		_, err := w.Commit(ctx, recs, icetable.Offsets{tp: off}, nil)
		require.NoError(t, err)
	}

	propsFile := filepath.Join(dir, "iceberg-sink.properties")
	text := "name=maint\nconnector.class=org.apache.iceberg.connect.IcebergSinkConnector\ntopics=t\niceberg.tables=db.upserts\n" +
		"iceberg.tables.maintenance.max-snapshot-age-ms=1\niceberg.tables.maintenance.expire-grace-ms=0\n"
	for k, v := range catProps {
		text += "iceberg.catalog." + k + "=" + v + "\n"
	}
	require.NoError(t, os.WriteFile(propsFile, []byte(text), 0o644))

	var stdout, stderr bytes.Buffer
	code := runIceberg(ctx, []string{"maintain", propsFile}, &stdout, &stderr)
	t.Logf("connectd iceberg maintain:\n%s%s", stdout.String(), stderr.String())
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stdout.String(), "db.upserts: data files 15 -> 3 ")
	require.Contains(t, stdout.String(), "delete files 15 -> 0")
	require.Contains(t, stdout.String(), "compaction: 3 partitions")
	require.Contains(t, stdout.String(), "manifests: ")
	require.Contains(t, stdout.String(), "expiry: snapshots 7 -> 1")

	tbl, err := cat.LoadTable(ctx, w.Ident)
	require.NoError(t, err)
	stats, err := maintenance.Stats(ctx, tbl, "")
	require.NoError(t, err)
	require.Equal(t, 0, stats.DeleteFiles)
	require.LessOrEqual(t, stats.DataFiles, 3)
	require.Equal(t, 1, stats.Snapshots)
	offs, err := icetable.CommittedOffsets(tbl, "", w.Opts.OffsetsKey)
	require.NoError(t, err)
	require.Equal(t, off, offs[tp], "the sink's offsets are on the kept snapshot")

	var want, got []string
	for id, v := range live {
		want = append(want, fmt.Sprintf("%d|%d", id, v))
	}
	res := icebergtest.Read(t, tbl.MetadataLocation(), "SELECT id, v FROM t", nil)
	for _, r := range res.Rows {
		got = append(got, fmt.Sprintf("%v|%v", r[0], r[1]))
	}
	sort.Strings(want)
	sort.Strings(got)
	require.Equal(t, want, got, "DuckDB")

	// JSON output, one action, and a table that does not exist: exit code 1, the others still run
	stdout.Reset()
	stderr.Reset()
	code = runIceberg(ctx, []string{"maintain", "-compact", "-format", "json", "-tables", "db.missing,db.upserts", propsFile}, &stdout, &stderr)
	require.Equal(t, 1, code)
	var reports []map[string]any
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &reports), stdout.String())
	require.Len(t, reports, 2)
	require.Contains(t, reports[0]["error"], "db.missing")
	require.Nil(t, reports[1]["error"])
	require.Nil(t, reports[1]["expiry"], "only the action asked for runs")

	require.Equal(t, 2, runIceberg(ctx, []string{"maintain", "-orphan-age"}, &stdout, &stderr), "bad flag")
	require.Equal(t, 2, runIceberg(ctx, []string{"maintain", "-tables", "db.upserts"}, &stdout, &stderr), "no catalog")
	require.Equal(t, 2, runIceberg(ctx, []string{"compact"}, &stdout, &stderr), "unknown subcommand")
}
