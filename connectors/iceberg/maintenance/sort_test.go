package maintenance

import (
	"context"
	"math/rand"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// sortRow is what the sort order "ts desc, id" reads of a row.
type sortRow struct{ ts, id int64 }

// parquetSortRows reads ts and id of a data file in its row order with the Parquet reader of arrow-go.
func parquetSortRows(t *testing.T, path string) []sortRow {
	t.Helper()
	f, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer f.Close()
	r, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := r.ReadTable(context.Background())
	require.NoError(t, err)
	defer tbl.Release()
	col := func(name string) []arrow.Array {
		idx := tbl.Schema().FieldIndices(name)
		require.Len(t, idx, 1, name)
		return tbl.Column(idx[0]).Data().Chunks()
	}
	var out []sortRow
	for _, c := range col("id") {
		for i := 0; i < c.Len(); i++ {
			out = append(out, sortRow{id: c.(*array.Int64).Value(i)})
		}
	}
	n := 0
	for _, c := range col("ts") {
		for i := 0; i < c.Len(); i++ {
			out[n].ts = int64(c.(*array.Timestamp).Value(i))
			n++
		}
	}
	return out
}

// requireSortedFiles checks every live data file of tbl's head: its rows, read by arrow-go's Parquet
// reader, are in the order ts desc, id asc, and DuckDB reads the same ids in the same order.
func requireSortedFiles(t *testing.T, tbl *table.Table, step string) int {
	t.Helper()
	files := 0
	for path, e := range entries(t, tbl, tbl.CurrentSnapshot()) {
		if e.DataFile().ContentType() != ice.EntryContentData {
			continue
		}
		files++
		rows := parquetSortRows(t, localPath(path))
		for i := 1; i < len(rows); i++ {
			a, b := rows[i-1], rows[i]
			require.True(t, a.ts > b.ts || (a.ts == b.ts && a.id <= b.id),
				"%s: %s rows %d and %d out of order: %+v then %+v", step, path, i-1, i, a, b)
		}
		duck := icebergtest.FileRows(t, localPath(path), "id")
		require.Len(t, duck, len(rows), "%s: DuckDB rows of %s", step, path)
		for i, r := range duck {
			require.NotNil(t, r[0])
			require.Equal(t, strconv.FormatInt(rows[i].id, 10), *r[0], "%s: row %d of %s by DuckDB", step, i, path)
		}
	}
	return files
}

// TestSortOrder: a table the writer creates with the sort order "ts desc, id" carries it; the rows
// of each data file the writer commits (one of more rows than a batch), and of each file compaction
// writes (small target files, so several), are in that order, read by arrow-go's Parquet reader and by DuckDB; the live rows equal
// the model.
func TestSortOrder(t *testing.T) {
	ctx := context.Background()
	terms, err := icetable.ParseSortOrder("ts desc, id")
	require.NoError(t, err)
	cat := sqliteCatalog(t, t.TempDir())
	ident := table.Identifier{"db", "sorted"}
	w := &icetable.Writer{Cat: cat, Ident: ident, Opts: icetable.TableOptions{
		IDColumns: []string{"id"}, AutoCreate: true, DeltaMode: true,
		OffsetsKey: icetable.OffsetsSummaryKey("connect-sort"), SortOrder: terms,
	}}
	// a first round of more rows than one Arrow batch the writer builds (icetable.SpoolBatchRows): the
	// Iceberg writer sorts each batch on its own, the sink the whole file
	s := &stream{rng: rand.New(rand.NewSource(8)), keys: 1 << 20, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
	recs, offs := s.round(3*icetable.SpoolBatchRows + 2000)
	commitRound(t, w, recs, offs)
	s.keys = 300
	for i := 0; i < 4; i++ {
		recs, offs := s.round(120)
		commitRound(t, w, recs, offs)
	}
	tbl := mustLoad(t, cat, ident)
	order := tbl.SortOrder()
	require.Equal(t, 2, order.Len(), "the table's sort order: %s", order)
	var fields []table.SortField
	for _, f := range order.Fields() {
		fields = append(fields, f)
	}
	ts, _ := tbl.Schema().FindFieldByName("ts")
	id, _ := tbl.Schema().FindFieldByName("id")
	require.Equal(t, []int{ts.ID}, fields[0].SourceIDs)
	require.Equal(t, table.SortDESC, fields[0].Direction)
	require.Equal(t, table.NullsLast, fields[0].NullOrder)
	require.Equal(t, []int{id.ID}, fields[1].SourceIDs)
	require.Equal(t, table.SortASC, fields[1].Direction)
	written := requireSortedFiles(t, tbl, "written")
	require.GreaterOrEqual(t, written, 5)

	res, err := Compact(ctx, cat, ident, CompactOptions{TargetFileSize: 2 << 10})
	require.NoError(t, err)
	require.NotZero(t, res.SnapshotID)
	tbl = mustLoad(t, cat, ident)
	compacted := requireSortedFiles(t, tbl, "compacted")
	t.Logf("%d written files, %d after compaction (%d rewritten, %d delete files removed)", written, compacted, res.DataFilesRewritten, res.DeleteFilesRemoved)
	want := s.model.rows()
	require.Equal(t, want, goRows(t, tbl))
	require.Equal(t, want, duckRows(t, tbl.MetadataLocation()))

	for _, bad := range []string{"id sideways", "id desc nulls", "id asc nulls middle"} {
		_, err := icetable.ParseSortOrder(bad)
		require.Error(t, err, bad)
	}
	_, err = icetable.BuildSortOrder(tbl.Schema(), []icetable.SortTerm{{Column: "missing"}}, false)
	require.ErrorContains(t, err, "missing")
}
