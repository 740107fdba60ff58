package icetable

import (
	"context"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// WriteDataFilesOfRowGroups is writeDataFiles with row groups of rows and table.WriteRecords'
// signature, for the tests that compare the two (which give table.WriteRecords the same row group
// limit) and the write benchmark.
func WriteDataFilesOfRowGroups(rows int) func(context.Context, *table.Table, *arrow.Schema, iter.Seq2[arrow.RecordBatch, error],
	...table.WriteRecordOption) iter.Seq2[ice.DataFile, error] {
	return func(ctx context.Context, tbl *table.Table, asc *arrow.Schema, src iter.Seq2[arrow.RecordBatch, error],
		_ ...table.WriteRecordOption) iter.Seq2[ice.DataFile, error] {
		return writeDataFiles(ctx, tbl, asc, src, fileOptions{queue: 1, rowGroupRows: rows})
	}
}
