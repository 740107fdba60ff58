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

// dictSampleRows is the fewest non-null values of a column in the first batch that decide it.
const dictSampleRows = 1024

// writeDataFiles is table.WriteRecords with the dictionary decided once per call rather than per
// column chunk. The Parquet writer starts every column chunk (one per row group) with a dictionary
// and drops it after its first batch when the dictionary is no smaller than the values (Iceberg
// Java's parquet-mr does the same): for a column of distinct values, such as ids, emails and
// timestamps, each row group hashes and encodes its first batch twice. A column whose first
// batch's values are all distinct is that case for certain, so its files are written PLAIN from the
// start: the first row group as the writer would have written it, the later ones without the
// dictionary they would have dropped. A column whose values repeat later in the call stays PLAIN
// there too (zstd still finds the repeats). A column whose dictionary the table configures is left
// to that setting.
func writeDataFiles(ctx context.Context, tbl *table.Table, asc *arrow.Schema, src iter.Seq2[arrow.RecordBatch, error],
	opts ...table.WriteRecordOption) iter.Seq2[ice.DataFile, error] {
	return func(yield func(ice.DataFile, error) bool) {
		next, stop := iter.Pull2(src)
		defer stop()
		first, err, ok := next()
		wtbl := tbl
		if ok && err == nil && first != nil {
			wtbl = withPlainColumns(tbl, first)
		}
		handed := false
		defer func() {
			if !handed && first != nil { // the writer failed before it took a batch
				first.Release()
			}
		}()
		rest := func(yield func(arrow.RecordBatch, error) bool) {
			if !ok {
				return
			}
			handed = true
			if !yield(first, err) {
				return
			}
			for {
				b, err, ok := next()
				if !ok || !yield(b, err) {
					return
				}
			}
		}
		for df, err := range table.WriteRecords(ctx, wtbl, asc, rest, opts...) {
			if !yield(df, err) {
				return
			}
		}
	}
}

// withPlainColumns is tbl writing without a dictionary the top-level columns of b whose non-null
// values (dictSampleRows or more) are all distinct, or tbl when there are none.
func withPlainColumns(tbl *table.Table, b arrow.RecordBatch) *table.Table {
	props := tbl.Properties()
	if _, set := props[dictEnabledKey]; set {
		return tbl
	}
	var plain ice.Properties
	for i, f := range b.Schema().Fields() {
		key := dictColumnEnabledKey + f.Name
		if _, set := props[key]; set || strings.Contains(f.Name, ".") || !allDistinct(b.Column(i)) {
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

// allDistinct reports whether col, of a primitive type a dictionary can hold, has dictSampleRows
// or more non-null values, none equal to another.
func allDistinct(col arrow.Array) bool {
	n := col.Len() - col.NullN()
	if n < dictSampleRows {
		return false
	}
	var value func(i int) string
	switch a := col.(type) {
	case *array.String:
		value = a.Value
	case *array.LargeString:
		value = a.Value
	case *array.Binary:
		value = a.ValueString
	case *array.LargeBinary:
		value = a.ValueString
	default:
		ft, ok := col.DataType().(arrow.FixedWidthDataType)
		if !ok || ft.BitWidth()%8 != 0 || len(col.Data().Buffers()) != 2 || col.Data().Buffers()[1] == nil {
			return false
		}
		w := ft.BitWidth() / 8
		data := col.Data().Buffers()[1].Bytes()[col.Data().Offset()*w:]
		value = func(i int) string { return string(data[i*w : (i+1)*w]) }
	}
	seen := make(map[string]struct{}, n)
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
	return true
}
