package maintenance

import (
	"context"
	"errors"
	"fmt"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/conflict"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// RetentionOptions ages rows out of a history table: rows whose Column is older than MaxAge.
type RetentionOptions struct {
	// Column is a timestamp, timestamptz or date column of the table.
	Column string
	// MaxAge is the horizon's distance from the run's time; 0 disables retention.
	MaxAge time.Duration
	// CommitRetries after a concurrent commit; 0 means 3.
	CommitRetries int
}

// Enabled tells whether the options age anything out.
func (o RetentionOptions) Enabled() bool { return o.Column != "" && o.MaxAge > 0 }

// RetentionResult reports one retention run. The removed rows stay in the files of older
// snapshots until snapshot expiry removes those (Run expires after applying retention).
type RetentionResult struct {
	Column  string    `json:"column"`
	Horizon time.Time `json:"horizon"`
	// PartitionsDropped are the partitions of a time transform of Column entirely older than the
	// horizon; their data files (DataFilesDropped) and delete files were removed without a rewrite.
	PartitionsDropped  int   `json:"partitions_dropped"`
	DataFilesDropped   int   `json:"data_files_dropped"`
	DeleteFilesDropped int   `json:"delete_files_dropped"`
	DropSnapshotID     int64 `json:"drop_snapshot_id,omitempty"`
	// RowsDeleted are the older rows left in the other files, deleted by rewriting those files.
	RowsDeleted      int64 `json:"rows_deleted"`
	DeleteSnapshotID int64 `json:"delete_snapshot_id,omitempty"`
}

// ApplyRetention removes from ident's main branch the rows whose Column is before now-MaxAge:
// first the partitions of a year/month/day/hour transform of Column that end at or before the
// horizon, as file removals; then the older rows of the other files, with a delete that
// rewrites the files holding them (files entirely older are dropped whole). Every snapshot
// carries the sink's summary entries of the head it replaces. A table without snapshots is
// left alone.
func ApplyRetention(ctx context.Context, cat catalog.Catalog, ident table.Identifier, opts RetentionOptions, now time.Time) (RetentionResult, error) {
	res := RetentionResult{Column: opts.Column, Horizon: now.Add(-opts.MaxAge).UTC()}
	if !opts.Enabled() {
		return res, nil
	}
	if opts.CommitRetries <= 0 {
		opts.CommitRetries = 3
	}
	var err error
	for attempt := 0; ; attempt++ {
		err = dropOldPartitions(ctx, cat, ident, opts.Column, res.Horizon, &res)
		if err == nil || !errors.Is(err, conflict.ErrHeadMoved) || attempt >= opts.CommitRetries {
			break
		}
	}
	if err != nil {
		return res, fmt.Errorf("dropping the partitions of %s older than %s: %w", name(ident), res.Horizon.Format(time.RFC3339), err)
	}
	for attempt := 0; ; attempt++ {
		err = deleteOldRows(ctx, cat, ident, opts.Column, res.Horizon, &res)
		if err == nil || !errors.Is(err, conflict.ErrHeadMoved) || attempt >= opts.CommitRetries {
			break
		}
	}
	if err != nil {
		return res, fmt.Errorf("deleting the rows of %s older than %s: %w", name(ident), res.Horizon.Format(time.RFC3339), err)
	}
	return res, nil
}

// horizonFilter is "column < horizon" in the column's type.
func horizonFilter(tbl *table.Table, column string, horizon time.Time) (ice.BooleanExpression, ice.NestedField, error) {
	f, ok := tbl.Schema().FindFieldByName(column)
	if !ok {
		return nil, f, fmt.Errorf("the table has no column %q", column)
	}
	ref := ice.Reference(column)
	switch f.Type.(type) {
	case ice.TimestampType, ice.TimestampTzType:
		return ice.LessThan(ref, ice.Timestamp(horizon.UnixMicro())), f, nil
	case ice.DateType:
		// a date is older than the horizon when its whole day is
		days := horizon.Unix() / 86400
		if horizon.Unix() < 0 && horizon.Unix()%86400 != 0 {
			days--
		}
		return ice.LessThan(ref, ice.Date(days)), f, nil
	}
	return nil, f, fmt.Errorf("column %q is %s, not a timestamp or date", column, f.Type)
}

// partitionEnd is the first instant after the partition value v of a time transform; ok is
// false for a transform that is not one.
func partitionEnd(tr ice.Transform, v any) (time.Time, bool) {
	var n int64
	switch x := v.(type) {
	case int32:
		n = int64(x)
	case int64:
		n = x
	case int:
		n = int64(x)
	case ice.Date:
		n = int64(x)
	default:
		return time.Time{}, false
	}
	switch tr.(type) {
	case ice.YearTransform:
		return time.Date(1970+int(n)+1, 1, 1, 0, 0, 0, 0, time.UTC), true
	case ice.MonthTransform:
		return time.Date(1970, time.Month(1+n+1), 1, 0, 0, 0, 0, time.UTC), true
	case ice.DayTransform:
		return time.Unix((n+1)*86400, 0).UTC(), true
	case ice.HourTransform:
		return time.Unix((n+1)*3600, 0).UTC(), true
	}
	return time.Time{}, false
}

// oldPartition tells whether a file lies in a partition of a time transform of the column
// (field id) that ends at or before the horizon: every row of it is older.
func oldPartition(meta table.Metadata, f ice.DataFile, fieldID int, horizon time.Time) bool {
	spec := meta.PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return false
	}
	p := f.Partition()
	for _, pf := range spec.Fields() {
		if pf.SourceID() != fieldID {
			continue
		}
		v, ok := p[pf.FieldID]
		if !ok || v == nil {
			continue
		}
		if end, ok := partitionEnd(pf.Transform, v); ok && !end.After(horizon) {
			return true
		}
	}
	return false
}

func dropOldPartitions(ctx context.Context, cat catalog.Catalog, ident table.Identifier, column string, horizon time.Time, res *RetentionResult) error {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("loading %s: %w", name(ident), err)
	}
	head := tbl.CurrentSnapshot()
	if head == nil {
		return nil
	}
	if _, _, err := horizonFilter(tbl, column, horizon); err != nil {
		return err
	}
	field, _ := tbl.Schema().FindFieldByName(column)
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	inv, err := readInventory(fs, head)
	if err != nil {
		return err
	}
	meta := tbl.Metadata()
	parts := map[string]bool{}
	var drop []ice.DataFile
	for _, lf := range inv.data {
		if oldPartition(meta, lf.file, field.ID, horizon) {
			parts[partitionKey(lf.file)] = true
			drop = append(drop, lf.file)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	// a partition's delete files apply only to its data files, all of which are dropped
	var dropDel []ice.DataFile
	for _, lf := range inv.deletes {
		if len(lf.file.Partition()) > 0 && parts[partitionKey(lf.file)] {
			dropDel = append(dropDel, lf.file)
		}
	}
	props := ice.Properties{SummaryMaintenance: "retention"}
	for k, v := range sinkSummary(tbl, head) {
		props[k] = v
	}
	tx, err := tbl.NewTransactionOnBranchWithError(table.MainBranch)
	if err != nil {
		return err
	}
	if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return err
	}
	rw := tx.NewRewrite(props)
	for _, f := range drop {
		rw.DeleteFile(f)
	}
	for _, f := range dropDel {
		rw.DeleteFile(f)
	}
	if err := rw.Commit(ctx); err != nil {
		return fmt.Errorf("staging: %w", err)
	}
	ntbl, err := tx.Commit(ctx)
	if err != nil {
		return conflict.Of(err)
	}
	res.PartitionsDropped, res.DataFilesDropped, res.DeleteFilesDropped = len(parts), len(drop), len(dropDel)
	if s := ntbl.CurrentSnapshot(); s != nil {
		res.DropSnapshotID = s.SnapshotID
	}
	return nil
}

func deleteOldRows(ctx context.Context, cat catalog.Catalog, ident table.Identifier, column string, horizon time.Time, res *RetentionResult) error {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("loading %s: %w", name(ident), err)
	}
	head := tbl.CurrentSnapshot()
	if head == nil {
		return nil
	}
	filter, _, err := horizonFilter(tbl, column, horizon)
	if err != nil {
		return err
	}
	n, err := icetable.CountRows(ctx, tbl, filter)
	if err != nil || n == 0 {
		return err
	}
	props := ice.Properties{SummaryMaintenance: "retention"}
	for k, v := range sinkSummary(tbl, head) {
		props[k] = v
	}
	tx, err := tbl.NewTransactionOnBranchWithError(table.MainBranch)
	if err != nil {
		return err
	}
	if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return err
	}
	// by the table's write.delete.mode; position deletes leave the rows to the compaction that follows
	if err := tx.Delete(ctx, filter, props); err != nil {
		return err
	}
	ntbl, err := tx.Commit(ctx)
	if err != nil {
		return conflict.Of(err)
	}
	res.RowsDeleted += n
	if s := ntbl.CurrentSnapshot(); s != nil {
		res.DeleteSnapshotID = s.SnapshotID
	}
	return nil
}
