package maintenance

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// sortChunkBytes bounds the rows a sorted rewrite holds in memory at once (Arrow bytes): the rows of
// a partition are sorted in chunks of about this size, each written as one or more files.
const sortChunkBytes = 128 << 20

// sortSliceRows is the rows handed to the file writer at once: it rolls to a new file between them.
const sortSliceRows = 4096

// rewriteSorted is table.ExecuteCompactionGroup with the rows of each new file in the table's sort
// order: it reads the group's rows with their deletes applied, sorts them chunk by chunk, and writes
// each chunk as target-size files. On an error the files written so far are returned with it.
func rewriteSorted(ctx context.Context, tbl *table.Table, g table.CompactionTaskGroup, target int64) ([]ice.DataFile, error) {
	sc, records, err := tbl.Scan().ReadTasks(ctx, g.Tasks)
	if err != nil {
		return nil, fmt.Errorf("reading the files of %s: %w", g.PartitionKey, err)
	}
	var (
		out   []ice.DataFile
		chunk []arrow.RecordBatch
		size  int64
	)
	release := func() {
		for _, r := range chunk {
			r.Release()
		}
		chunk, size = nil, 0
	}
	defer release()
	flush := func() error {
		sorted, err := icetable.SortRecords(ctx, tbl.SortOrder(), tbl.Schema(), chunk)
		release()
		if err != nil || sorted == nil {
			return err
		}
		defer sorted.Release()
		// in slices, so that the writer can roll to a new file at the target size (WriteRecords
		// releases each)
		slices := func(yield func(arrow.RecordBatch, error) bool) {
			for i := int64(0); i < sorted.NumRows(); i += sortSliceRows {
				if !yield(sorted.NewSlice(i, min(i+sortSliceRows, sorted.NumRows())), nil) {
					return
				}
			}
		}
		wopts := []table.WriteRecordOption{table.WithClusteredWrite()}
		if target > 0 {
			wopts = append(wopts, table.WithTargetFileSize(target))
		}
		for df, err := range table.WriteRecords(ctx, tbl, sc, slices, wopts...) {
			if err != nil {
				return fmt.Errorf("writing %s: %w", g.PartitionKey, err)
			}
			out = append(out, df)
		}
		return nil
	}
	for rec, err := range records {
		if err != nil {
			return out, fmt.Errorf("reading the files of %s: %w", g.PartitionKey, err)
		}
		chunk = append(chunk, rec)
		if size += recordBytes(rec); size >= sortChunkBytes {
			if err := flush(); err != nil {
				return out, err
			}
		}
	}
	return out, flush()
}

// recordBytes is the size of rec's buffers.
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	var data func(d arrow.ArrayData)
	data = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			data(c)
		}
	}
	for _, c := range rec.Columns() {
		data(c.Data())
	}
	return n
}
