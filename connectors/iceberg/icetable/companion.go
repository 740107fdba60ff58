package icetable

import (
	"context"
	"fmt"
	"slices"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// StaleDeleteColumn marks a live row whose key's latest change event in Kafka is a delete older than
// the row (a redelivery, or a source replaying an older window). A tombstone that follows such a
// delete belongs to it and must change nothing, also when the two are split by a commit or a restart
// of the worker; the mark is what tells the next commit. It is written in the same snapshot as the
// row and the offsets, so it holds exactly what the committed offsets have read.
//
// The column (optional boolean) is added to a versioned upsert table the first time a mark is
// needed (a schema change: one metadata commit, no snapshot); rows without a mark hold null. A
// Live row whose mark changes while the row itself stays (a stale delete, or a stale event after
// one) is rewritten unchanged but for the mark.
const StaleDeleteColumn = "_cdc_stale_delete"

// staleDeleteFlag reports whether a key's live rows carry the mark.
func staleDeleteFlag(rows []icerow.Row) bool {
	for _, r := range rows {
		if b, _ := r[StaleDeleteColumn].(bool); b {
			return true
		}
	}
	return false
}

// withStaleDeleteFlag returns r with the mark set (flag) or absent, copying r when it changes.
func withStaleDeleteFlag(r icerow.Row, flag bool) icerow.Row {
	_, has := r[StaleDeleteColumn]
	switch {
	case flag:
		r = icerow.CloneRow(r)
		r[StaleDeleteColumn] = true
	case has:
		r = icerow.CloneRow(r)
		delete(r, StaleDeleteColumn)
	}
	return r
}

// ensureStaleDeleteColumn adds StaleDeleteColumn to the table when it lacks it.
func (w *Writer) ensureStaleDeleteColumn(ctx context.Context) error {
	if f, ok := w.Tbl.Schema().FindFieldByName(StaleDeleteColumn); ok && !f.Type.Equals(ice.PrimitiveTypes.Bool) {
		return &DataError{fmt.Errorf("column %q is %s: the sink keeps a boolean mark there; rename the table's column", StaleDeleteColumn, f.Type)}
	}
	return w.ensureColumn(ctx, StaleDeleteColumn, ice.PrimitiveTypes.Bool,
		"the key's latest change event is a delete older than this row; its tombstone changes nothing (connectd)")
}

// reflagLiveRows reads the whole live rows of the keys in flags and returns them with their mark
// set or cleared as flags says.
func (w *Writer) reflagLiveRows(ctx context.Context, ids []string, current map[string][]icerow.Row, flags map[string]bool) ([]icerow.Row, error) {
	keys := make([]icerow.Row, 0, len(flags))
	for k := range flags {
		keys = append(keys, current[k][0])
	}
	scan := w.Tbl.Scan(table.WithRowFilter(keyFilter(w.Tbl.Schema(), ids[0], keys)))
	if b := w.Opts.CommitBranch; b != "" && b != table.MainBranch {
		var err error
		if scan, err = scan.UseRef(b); err != nil {
			return nil, err
		}
	}
	_, it, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("read live rows to mark: %w", err)
	}
	var out []icerow.Row
	for rec, err := range it {
		if err != nil {
			return nil, fmt.Errorf("read live rows to mark: %w", err)
		}
		rows := icerow.RecordToRows(rec)
		rec.Release()
		for _, r := range rows {
			if flag, ok := flags[icerow.KeyOf(r, ids)]; ok {
				out = append(out, withStaleDeleteFlag(r, flag))
			}
		}
	}
	return out, nil
}

// markColumns returns cols plus StaleDeleteColumn when the table has it.
func (w *Writer) markColumns(cols []string) []string {
	if _, ok := w.Tbl.Schema().FindFieldByName(StaleDeleteColumn); ok && !slices.Contains(cols, StaleDeleteColumn) {
		cols = append(cols, StaleDeleteColumn)
	}
	return cols
}
