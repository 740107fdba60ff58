package icetable_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// chunkLayout is each column chunk of a data file, row group by row group: its path, encodings and
// whether it has a dictionary page.
func chunkLayout(t *testing.T, df ice.DataFile) []string {
	r, err := file.OpenParquetFile(strings.TrimPrefix(df.FilePath(), "file://"), false)
	require.NoError(t, err)
	defer r.Close()
	var out []string
	for rg := range r.NumRowGroups() {
		md := r.MetaData().RowGroup(rg)
		for c := range md.NumColumns() {
			cc, err := md.ColumnChunk(c)
			require.NoError(t, err)
			out = append(out, fmt.Sprintf("%d %s %v dict=%v", rg, cc.PathInSchema(), cc.Encodings(), cc.HasDictionaryPage()))
		}
	}
	return out
}

func writeBenchShape(t *testing.T, tbl *table.Table, write func(context.Context, *table.Table, *arrow.Schema,
	iter.Seq2[arrow.RecordBatch, error], ...table.WriteRecordOption) iter.Seq2[ice.DataFile, error]) []string {
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(t, err)
	batches := benchShapeBatches(asc, 0, 70_000)
	src := func(yield func(arrow.RecordBatch, error) bool) {
		for _, b := range batches {
			if !yield(b, nil) {
				return
			}
		}
	}
	var layout []string
	var files []ice.DataFile
	for df, err := range write(context.Background(), tbl, asc, src, table.WithParquetRowGroupLimit(32<<10)) {
		require.NoError(t, err)
		layout = append(layout, chunkLayout(t, df)...)
		files = append(files, df)
	}
	require.Len(t, layout, 3*benchShapeSchema.NumFields(), "one file of three row groups")
	// and DuckDB reads the rows back
	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddDataFiles(context.Background(), files, nil))
	committed, err := tx.Commit(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"70000|0|69999|70000|customer-0069999@example.com|3|2026-01-01T19:26:39Z|17|1"},
		duckRows(t, committed.MetadataLocation(), `SELECT count(*), min(id), max(id), count(DISTINCT name), max(email),
			count(DISTINCT region), max(ts), count(DISTINCT qty), count(DISTINCT note) FROM t`))
	return layout
}

// The data files' columns of distinct values (id, name, email, amount, ts) are PLAIN without a
// dictionary page from the start, as the Parquet writer's own cost check leaves them; the columns
// of few values keep their dictionary; a table that sets the dictionary has its way.
func TestWriteDataFilesDictionary(t *testing.T) {
	cat := sqliteCatalog(t)
	ctx := context.Background()
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"d"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"d", "own"}, benchShapeSchema)
	require.NoError(t, err)
	own := writeBenchShape(t, tbl, table.WriteRecords)
	tbl, err = cat.CreateTable(ctx, table.Identifier{"d", "decided"}, benchShapeSchema)
	require.NoError(t, err)
	decided := writeBenchShape(t, tbl, icetable.WriteDataFilesOfRowGroups(32<<10))
	require.Equal(t, own, decided)
	for _, l := range decided {
		col := strings.Fields(l)[1]
		distinct := map[string]bool{"id": true, "name": true, "email": true, "amount": true, "ts": true}[col]
		require.Equal(t, !distinct, strings.HasSuffix(l, "dict=true"), l)
	}

	props := ice.Properties{"write.parquet.dict-encoding-enabled.column.qty": "false"}
	tbl2, err := cat.CreateTable(ctx, table.Identifier{"d", "t2"}, benchShapeSchema, catalog.WithProperties(props))
	require.NoError(t, err)
	for _, l := range writeBenchShape(t, tbl2, icetable.WriteDataFilesOfRowGroups(32<<10)) {
		if strings.Contains(l, " qty ") {
			require.True(t, strings.HasSuffix(l, "dict=false"), l)
		}
	}
}

// The decision is the first batches', for every row group: a column whose first 4,096 values are
// distinct stays PLAIN when its values repeat later, where the writer's own per-row-group decision
// takes a dictionary again. Batches smaller than that decide together: one repeat among their values
// leaves the column to the writer.
func TestWriteDataFilesDictionaryOfFirstBatch(t *testing.T) {
	cat := sqliteCatalog(t)
	ctx := context.Background()
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"d"}, nil))
	sc := ice.NewSchema(0, ice.NestedField{ID: 1, Name: "k", Type: ice.PrimitiveTypes.String})
	tbl, err := cat.CreateTable(ctx, table.Identifier{"d", "t"}, sc)
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(t, err)
	write := func(w func(context.Context, *table.Table, *arrow.Schema, iter.Seq2[arrow.RecordBatch, error],
		...table.WriteRecordOption) iter.Seq2[ice.DataFile, error], per, repeatAt int) (dicts []bool) {
		src := func(yield func(arrow.RecordBatch, error) bool) {
			for at := 0; at < 3*4096; at += per {
				bld := array.NewRecordBuilder(memory.DefaultAllocator, asc)
				for i := at; i < at+per; i++ {
					k := "repeated"
					if i == repeatAt {
						k = "distinct-5"
					} else if i < 4096 {
						k = fmt.Sprintf("distinct-%d", i)
					}
					bld.Field(0).(*array.StringBuilder).Append(k)
				}
				b := bld.NewRecordBatch()
				bld.Release()
				if !yield(b, nil) {
					return
				}
			}
		}
		for df, err := range w(ctx, tbl, asc, src, table.WithParquetRowGroupLimit(4096)) {
			require.NoError(t, err)
			for _, l := range chunkLayout(t, df) {
				dicts = append(dicts, strings.HasSuffix(l, "dict=true"))
			}
		}
		return dicts
	}
	require.Equal(t, []bool{false, true, true}, write(table.WriteRecords, 4096, -1))
	require.Equal(t, []bool{false, false, false}, write(icetable.WriteDataFilesOfRowGroups(4096), 4096, -1))
	require.Equal(t, []bool{false, false, false}, write(icetable.WriteDataFilesOfRowGroups(4096), 1024, -1))
	require.Equal(t, write(table.WriteRecords, 1024, 3000), write(icetable.WriteDataFilesOfRowGroups(4096), 1024, 3000))
}
