package icetable

import (
	"context"
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// The Parquet writer's dictionary settings (iceberg-go's names for them).
const (
	dictEnabledKey       = "parquet.enable.dictionary"
	dictColumnEnabledKey = "write.parquet.dict-encoding-enabled.column."
)

// dictSampleRows is the fewest non-null values of a column in the first batches that decide it.
const dictSampleRows = 1024

// dictDecideRows is how many rows of the batches a call starts with decide its dictionaries: the
// batches up to and including the one that reaches it.
const dictDecideRows = 4096

// writeDataFiles is table.WriteRecords with the dictionary decided once per call rather than per
// column chunk. The Parquet writer starts every column chunk (one per row group) with a dictionary
// and drops it after its first batch when the dictionary is no smaller than the values (Iceberg
// Java's parquet-mr does the same): for a column of distinct values, such as ids, emails and
// timestamps, each row group hashes and encodes its first batch twice. A column whose values in the
// first batches (dictDecideRows rows) are all distinct is that case for certain, so its files are
// written PLAIN from the start: the first row group as the writer would have written it, the later
// ones without the dictionary they would have dropped. A column whose values repeat later in the
// call stays PLAIN there too (zstd still finds the repeats). A column whose dictionary the table
// configures is left to that setting.
//
// The files of a flat table (flatFiles) are written by flatparquet, the others by iceberg-go.
func writeDataFiles(ctx context.Context, tbl *table.Table, asc *arrow.Schema, src iter.Seq2[arrow.RecordBatch, error],
	o fileOptions) iter.Seq2[ice.DataFile, error] {
	return func(yield func(ice.DataFile, error) bool) {
		next, stop := iter.Pull2(src)
		defer stop()
		type item struct {
			b   arrow.RecordBatch
			err error
		}
		var head []item // the items pulled to decide, in order
		var decide []arrow.RecordBatch
		more := true
		for rows := 0; rows < dictDecideRows; {
			var it item
			if it.b, it.err, more = next(); !more {
				break
			}
			head = append(head, it)
			if it.err != nil {
				decide = nil // the writer fails with it
				break
			}
			if it.b != nil {
				decide = append(decide, it.b)
				rows += int(it.b.NumRows())
			}
		}
		wtbl := tbl
		if len(decide) > 0 {
			wtbl = withPlainColumns(tbl, decide)
		}
		given := 0
		defer func() {
			for _, it := range head[given:] { // the writer failed before it took them
				if it.b != nil {
					it.b.Release()
				}
			}
		}()
		rest := func(yield func(arrow.RecordBatch, error) bool) {
			for given < len(head) {
				it := head[given]
				given++
				if !yield(it.b, it.err) {
					return
				}
			}
			for more {
				b, err, ok := next()
				if !ok || !yield(b, err) {
					return
				}
			}
		}
		var files iter.Seq2[ice.DataFile, error]
		if l, ok := flatFiles(wtbl, asc, o); ok {
			files = writeFlatFiles(ctx, wtbl, l, o.queue, rest)
		} else {
			files = table.WriteRecords(ctx, wtbl, asc, rest, o.icebergOptions(tbl)...)
		}
		for df, err := range files {
			if !yield(df, err) {
				return
			}
		}
	}
}

// withPlainColumns is tbl writing without a dictionary the top-level columns whose non-null values
// in bs (batches of one schema; dictSampleRows or more values) are all distinct, or tbl when there
// are none.
func withPlainColumns(tbl *table.Table, bs []arrow.RecordBatch) *table.Table {
	props := tbl.Properties()
	if _, set := props[dictEnabledKey]; set {
		return tbl
	}
	var plain ice.Properties
	cols := make([]arrow.Array, len(bs))
	for i, f := range bs[0].Schema().Fields() {
		for j, b := range bs {
			cols[j] = b.Column(i)
		}
		key := dictColumnEnabledKey + f.Name
		if _, set := props[key]; set || strings.Contains(f.Name, ".") || !allDistinct(cols) {
			continue
		}
		if plain == nil {
			plain = ice.Properties{}
		}
		plain[key] = "false"
	}
	if plain == nil {
		return tbl
	}
	mb, err := table.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		return tbl
	}
	if err := mb.SetProperties(plain); err != nil {
		return tbl
	}
	meta, err := mb.Build()
	if err != nil {
		return tbl
	}
	return table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), tbl.FS, nil)
}

// allDistinct reports whether the arrays cols, of one primitive type a dictionary can hold, have
// dictSampleRows or more non-null values, none equal to another.
func allDistinct(cols []arrow.Array) bool {
	n := 0
	for _, col := range cols {
		n += col.Len() - col.NullN()
	}
	if n < dictSampleRows {
		return false
	}
	seen := make(map[string]struct{}, n)
	for _, col := range cols {
		value := arrayValues(col)
		if value == nil {
			return false
		}
		for i := range col.Len() {
			if col.IsNull(i) {
				continue
			}
			v := value(i)
			if _, dup := seen[v]; dup {
				return false
			}
			seen[v] = struct{}{}
		}
	}
	return true
}

// arrayValues reads the values of col, of a primitive type a dictionary can hold, as strings of
// their bytes (nil: another type).
func arrayValues(col arrow.Array) func(i int) string {
	switch a := col.(type) {
	case *array.String:
		return a.Value
	case *array.LargeString:
		return a.Value
	case *array.Binary:
		return a.ValueString
	case *array.LargeBinary:
		return a.ValueString
	}
	ft, ok := col.DataType().(arrow.FixedWidthDataType)
	if !ok || ft.BitWidth()%8 != 0 || len(col.Data().Buffers()) != 2 || col.Data().Buffers()[1] == nil {
		return nil
	}
	w := ft.BitWidth() / 8
	data := col.Data().Buffers()[1].Bytes()[col.Data().Offset()*w:]
	return func(i int) string { return string(data[i*w : (i+1)*w]) }
}
