package maintenance

import (
	"context"
	"errors"
	"fmt"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// DeletesExpiryResult reports one expiry of a tombstone table's rows.
type DeletesExpiryResult struct {
	Table      string `json:"table"`
	Expired    int    `json:"expired"`
	SnapshotID int64  `json:"snapshot_id,omitempty"`
}

// ExpireDeletes removes the rows of ident's tombstone table (<table>__deletes, the versions of deleted
// keys) whose delete was recorded before cutoff. Afterwards such a key no longer remembers its delete: an
// event older than the delete that arrives later brings the key back. A row without a recorded time
// (written before the sink stamped them) is kept. The removal is one equality delete by key, committed
// on the head it read: a delete the sink records meanwhile makes it read again (3 times at most).
// branch is the sink's commit branch ("": main), where it records the deletes.
func ExpireDeletes(ctx context.Context, cat catalog.Catalog, ident table.Identifier, branch string, cutoff time.Time) (DeletesExpiryResult, error) {
	tident := icetable.TombstoneIdent(ident)
	res := DeletesExpiryResult{Table: name(tident)}
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			// a delete the sink recorded meanwhile: let its round pass before reading again
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
			}
		}
		tbl, err := cat.LoadTable(ctx, tident)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("loading %s: %w", name(tident), err)
		}
		sc := tbl.Schema()
		if _, ok := sc.FindFieldByName(icetable.DeletedAtColumn); !ok || branchHead(tbl, branch) == nil {
			return res, nil
		}
		var ids []string
		for _, id := range sc.IdentifierFieldIDs {
			if n, ok := sc.FindColumnName(id); ok {
				ids = append(ids, n)
			}
		}
		if len(ids) == 0 {
			return res, fmt.Errorf("%s has no identifier fields", name(tident))
		}
		rows, err := liveRows(ctx, tbl, branch, cutoff, append(ids, icetable.DeletedAtColumn))
		if err != nil {
			return res, fmt.Errorf("reading %s: %w", name(tident), err)
		}
		var recs []icetable.Rec
		for _, r := range rows {
			at, ok := r[icetable.DeletedAtColumn].(time.Time)
			if !ok || !at.Before(cutoff) {
				continue
			}
			key := make(icerow.Row, len(ids))
			for _, c := range ids {
				key[c] = r[c]
			}
			recs = append(recs, icetable.Rec{Op: icerow.OpDelete, Row: key})
		}
		res.Expired = len(recs)
		if len(recs) == 0 {
			return res, nil
		}
		w := &icetable.Writer{Cat: cat, Ident: tident, Tbl: tbl, Opts: icetable.TableOptions{IDColumns: ids, DeltaMode: true, CommitBranch: branch}}
		st, err := w.Commit(ctx, recs, nil, map[string]string{SummaryMaintenance: "expire-deletes"})
		if err == nil {
			res.SnapshotID = st.SnapshotID
			return res, nil
		}
		if attempt < 3 && errors.Is(err, icetable.ErrFenced) {
			continue
		}
		return res, fmt.Errorf("committing the expiry of %s: %w", name(tident), err)
	}
}

// liveRows reads the given columns of the live rows of tbl's branch (deletes applied) recorded before cutoff;
// the filter lets the scan skip the files written since.
func liveRows(ctx context.Context, tbl *table.Table, branch string, cutoff time.Time, cols []string) ([]icerow.Row, error) {
	scan := tbl.Scan(table.WithSelectedFields(cols...),
		table.WithRowFilter(ice.LessThan(ice.Reference(icetable.DeletedAtColumn), ice.Timestamp(cutoff.UnixMicro()))))
	if branch != "" && branch != table.MainBranch {
		var err error
		if scan, err = scan.UseRef(branch); err != nil {
			return nil, err
		}
	}
	_, it, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	var out []icerow.Row
	for rec, err := range it {
		if err != nil {
			return nil, err
		}
		out = append(out, icerow.RecordToRows(rec)...)
		rec.Release()
	}
	return out, nil
}
