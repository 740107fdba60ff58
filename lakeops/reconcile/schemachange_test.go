package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// schemaRow is one row of the schema-change test; absent columns are nil.
type schemaRow struct {
	id, name   string
	note, tier *string
}

func ptr(s string) *string { return &s }

// appendRows appends rows with the table's current schema's columns and records next as the offsets of
// group "g" for topic t, partition 0, as the sink's commits do.
func appendRows(t *testing.T, tbl *table.Table, rows []schemaRow, next int64) *table.Table {
	t.Helper()
	sc := tbl.Schema()
	var fields []arrow.Field
	for _, f := range sc.Fields() {
		fields = append(fields, arrow.Field{Name: f.Name, Type: arrow.BinaryTypes.String, Nullable: !f.Required})
	}
	as := arrow.NewSchema(fields, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer bld.Release()
	for _, r := range rows {
		for i, f := range fields {
			sb := bld.Field(i).(*array.StringBuilder)
			var v *string
			switch f.Name {
			case "id":
				v = &r.id
			case "name":
				v = &r.name
			case "note":
				v = r.note
			case "tier":
				v = r.tier
			}
			if v == nil {
				sb.AppendNull()
			} else {
				sb.Append(*v)
			}
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
	require.NoError(t, err)
	defer rdr.Release()
	off, _ := json.Marshal(map[string]int64{"t/0": next})
	tbl, err = tbl.Append(context.Background(), rdr, ice.Properties{icetable.OffsetsSummaryKey("g"): string(off)})
	require.NoError(t, err)
	return tbl
}

func evolve(t *testing.T, tbl *table.Table, change func(*table.UpdateSchema)) *table.Table {
	t.Helper()
	txn := tbl.NewTransaction()
	u := txn.UpdateSchema(true, false)
	change(u)
	require.NoError(t, u.Commit())
	tbl, err := txn.Commit(context.Background())
	require.NoError(t, err)
	return tbl
}

// TestReconcileAcrossSchemaChange: a reconcile whose cut is a snapshot written with an older schema scans it
// with that schema and compares the columns both layers have at the cut, naming the others. The Iceberg table
// gets a column (tier) after its first snapshot and loses one (note) after its second; ClickHouse, whose
// columns are only ever added, has both. Cuts before the addition, between, and after the drop are CLEAN.
func TestReconcileAcrossSchemaChange(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	props := map[string]string{"type": "sql", "uri": "jdbc:sqlite:" + filepath.Join(dir, "catalog.db"), "warehouse": filepath.Join(dir, "wh")}
	cat, err := catalogx.Open(ctx, "", props)
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(ctx, catalog.ToIdentifier("cdc"), nil))
	tbl, err := cat.CreateTable(ctx, catalog.ToIdentifier("cdc.customers"), ice.NewSchemaWithIdentifiers(0, []int{1},
		ice.NestedField{ID: 1, Name: "id", Type: ice.StringType{}, Required: true},
		ice.NestedField{ID: 2, Name: "name", Type: ice.StringType{}},
		ice.NestedField{ID: 3, Name: "note", Type: ice.StringType{}}))
	require.NoError(t, err)

	r1 := []schemaRow{{id: "k1", name: "Ann", note: ptr("first")}, {id: "k2", name: "Bob"}}
	tbl = appendRows(t, tbl, r1, 2)
	s1 := tbl.CurrentSnapshot().SnapshotID
	tbl = evolve(t, tbl, func(u *table.UpdateSchema) { u.AddColumn([]string{"tier"}, ice.StringType{}, "", false, nil) })
	r2 := []schemaRow{{id: "k3", name: "Cy", note: ptr("third"), tier: ptr("gold")}}
	tbl = appendRows(t, tbl, r2, 3)
	s2 := tbl.CurrentSnapshot().SnapshotID
	tbl = evolve(t, tbl, func(u *table.UpdateSchema) { u.DeleteColumn([]string{"note"}) })
	r3 := []schemaRow{{id: "k4", name: "Di", tier: ptr("silver")}}
	tbl = appendRows(t, tbl, r3, 4)
	s3 := tbl.CurrentSnapshot().SnapshotID

	s, srv := clickhouseEngine(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+`.customers (id String, name String, note Nullable(String), tier Nullable(String),
		_version UInt64, is_deleted UInt8) ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id`)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+`.connect_state (key String, minOffset Int64, maxOffset Int64, state String, ver UInt64)
		ENGINE = ReplacingMergeTree(ver) ORDER BY key`)
	cfgProps := map[string]string{"iceberg.table": "cdc.customers", "clickhouse.hostname": "127.0.0.1",
		"clickhouse.port": fmt.Sprint(srv.Port()), "clickhouse.database": db, "clickhouse.table": "customers"}
	for k, v := range props {
		cfgProps["iceberg.catalog."+k] = v
	}
	cfg, err := ParseConfig(cfgProps)
	require.NoError(t, err)

	sqlText := func(v *string) string {
		if v == nil {
			return "NULL"
		}
		return "'" + *v + "'"
	}
	for _, c := range []struct {
		name           string
		rows           []schemaRow
		next           int64
		snap           int64
		onlyClickHouse []string
	}{
		{name: "before the added column", rows: r1, next: 2, snap: s1, onlyClickHouse: []string{"tier"}},
		{name: "after the added column", rows: append(append([]schemaRow{}, r1...), r2...), next: 3, snap: s2},
		{name: "after the dropped column", rows: append(append(append([]schemaRow{}, r1...), r2...), r3...), next: 4, snap: s3, onlyClickHouse: []string{"note"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			chdbtest.MustExec(t, s, "TRUNCATE TABLE "+db+".customers")
			var values []string
			for _, r := range c.rows {
				note := r.note
				if c.snap == s3 {
					note = nil // the dropped column is no longer written
				}
				values = append(values, fmt.Sprintf("('%s', '%s', %s, %s, 1, 0)", r.id, r.name, sqlText(note), sqlText(r.tier)))
			}
			chdbtest.MustExec(t, s, "INSERT INTO "+db+".customers VALUES "+strings.Join(values, ", "))
			conn, err := dialClickHouse(ctx, cfg.CH, "reconcile-test")
			require.NoError(t, err)
			require.NoError(t, conn.setState(ctx, db, "customers", map[tp]int64{{Topic: "t", Partition: 0}: c.next}))
			conn.Close()

			r, err := Run(ctx, cfg)
			require.NoError(t, err)
			require.Equal(t, c.snap, r.Cut.SnapshotID, "the cut is the snapshot holding ClickHouse's offsets")
			require.True(t, r.Cut.Consistent)
			require.Equal(t, StatusClean, r.Status, "%+v", r)
			require.Equal(t, int64(len(c.rows)), r.Iceberg.Rows)
			require.Equal(t, c.onlyClickHouse, r.OnlyClickHouse)
			require.Empty(t, r.OnlyIceberg)
			var compared []string
			for _, m := range r.Columns {
				compared = append(compared, m.Name)
			}
			for _, col := range c.onlyClickHouse {
				require.NotContains(t, compared, col)
			}
			require.Contains(t, compared, "name")
			var text strings.Builder
			r.WriteText(&text)
			if len(c.onlyClickHouse) > 0 {
				require.Contains(t, text.String(), "columns only in ClickHouse at the cut (not compared): "+strings.Join(c.onlyClickHouse, ", "))
			}
		})
	}
}
