package icetable

// Delete tombstones: versions of deleted keys, kept durably in Iceberg.
//
// Problem: with a version column, planDelta drops a record older than the key's LIVE row. Once
// a key is deleted it has no live row, so a late or replayed older event (CDC redelivery, a
// replay of the topic from the start, a second source catching up) would bring the key back.
//
// Fix: for every table that holds versions (the version column is a table column, or the
// metadata column of envelope versions, icerow/version.go), a companion table
// `<table>__deletes` (same namespace, the id columns + the version column, the id columns as
// identifier fields, unpartitioned, format v2) holds per deleted key the highest version at
// which it was deleted. It is maintained and consulted by the table's own Writer.Commit:
//
//   - Before planning, the tombstones of the batch's keys are read (a scan filtered on the
//     keys, like the partition-move lookup). A surviving upsert whose version is <= the key's
//     tombstone is dropped (StaleDropped). Deletes are never dropped by a tombstone (applying
//     a delete again is idempotent; a delete older than the live row is still dropped by the
//     live-row check).
//   - Every surviving versioned delete whose version is above the key's tombstone becomes a
//     tombstone row; a version-less delete first takes the key's highest known version
//     (planDelta: a Kafka tombstone never weakens a delete). These are upserted into `<table>__deletes` (equality delete + row, the
//     same Writer code path, its own compare-and-swap on the branch head) BEFORE the main
//     table's files are written and committed; a round with deletes only (e.g. insert v1,
//     update v2, delete v3 of a new key) still records its tombstones.
//
// Why this is correct without a multi-table transaction (iceberg-go has none):
//
//  1. A tombstone (k, v) states "the stream holds a delete of k at version v". That is true as
//     soon as the delete was read, whether or not the main table has applied it yet, and under
//     the project's ordering rule (the highest version of a key wins) every event of k with
//     version <= v is superseded by it. So the tombstone table only ever holds true facts, and
//     it only grows (a tombstone is replaced only by a higher version), until maintenance expires rows older than its horizon (DeletedAtColumn). Consequently it may run
//     AHEAD of the main table (tombstones committed, main commit failed or crashed) but that is
//     harmless: the failed round is replayed, its delete is re-applied (deletes are not dropped
//     by tombstones), and the upserts it drops would have lost to that delete anyway.
//  2. It may never run BEHIND in a way that matters: a delete reaches the main table only in a
//     commit that follows the commit of its tombstone. A committer reads the tombstones after
//     it has taken the main table's head that its compare-and-swap pins; if that head contains
//     some delete, the delete's tombstone was committed before, so the committer sees it. If
//     another committer applies a delete after our head was read, our compare-and-swap fails
//     and we re-plan. Hence no upsert with version <= v is ever committed over (or after) an
//     applied delete at version v.
//  3. Replay of any prefix or of the whole stream converges: final state per key = the event
//     with the highest version, whatever the arrival order (live-row check for rows, tombstone
//     check for deletes; ties keep the committed state).
//
// Scope and limits: only when the table holds versions (as for the live-row check). A delete
// without any known version records nothing. Deletes committed before this existed have no
// tombstone. Tombstones are kept (one row per deleted key, never removed by a later
// re-insert, unless maintenance expires them: the live row then guards, and keeping it also guards against a later
// version-less delete). A reader listing the namespace sees the `__deletes` tables. A schema
// change of the id or version columns of the main table is not propagated to the tombstone
// table.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// TombstoneSuffix is appended to a table's name to name its tombstone table.
const TombstoneSuffix = "__deletes"

// DeletedAtColumn of a tombstone table holds when the sink recorded the key's delete (timestamptz):
// maintenance expires the rows older than a horizon (iceberg.tables.maintenance.deletes-horizon-ms).
// Rows recorded before the column existed hold null and are kept.
const DeletedAtColumn = "_deleted_at"

// TombstoneIdent returns the identifier of the tombstone table of ident.
func TombstoneIdent(ident table.Identifier) table.Identifier {
	out := slices.Clone(ident)
	out[len(out)-1] += TombstoneSuffix
	return out
}

// tombstonesEnabled: a version column that is a column of the table, and this writer is not
// itself a tombstone writer.
func (w *Writer) tombstonesEnabled() bool {
	vc := w.Opts.KeyVersionColumn()
	if w.IsTombstones || vc == "" {
		return false
	}
	_, ok := w.Tbl.Schema().FindFieldByName(vc)
	return ok
}

func (w *Writer) tombstoneWriter(ids []string) *Writer {
	if w.Tombs == nil {
		w.Tombs = &Writer{Cat: w.Cat, Ident: TombstoneIdent(w.Ident), IsTombstones: true}
	}
	w.Tombs.Opts = TableOptions{
		IDColumns: ids, DeltaMode: true, UpsertMode: true,
		VersionColumn: w.Opts.VersionColumn, CDCVersionColumn: w.Opts.CDCVersionColumn,
		CommitBranch: w.Opts.CommitBranch,
		// no offsets: upserting a tombstone is idempotent (highest version wins)
	}
	return w.Tombs
}

// loadTombstones returns, per key of keys, the version at which it was last deleted. The
// tombstone table is reloaded from the catalog on every call (see 2. above).
func (w *Writer) loadTombstones(ctx context.Context, ids []string, keys []icerow.Row) (map[string]any, error) {
	tw := w.tombstoneWriter(ids)
	tbl, err := w.Cat.LoadTable(ctx, tw.Ident)
	if err != nil {
		if errors.Is(err, catalog.ErrNoSuchTable) {
			tw.Tbl = nil
			return nil, nil
		}
		return nil, err
	}
	tw.Tbl = tbl
	if len(keys) == 0 || BranchHead(tbl, tw.Opts.CommitBranch) == nil {
		return nil, nil
	}
	cur, err := tw.lookupCurrent(ctx, ids, keys)
	if err != nil {
		return nil, err
	}
	vc := w.Opts.KeyVersionColumn()
	out := make(map[string]any, len(cur))
	for k, rows := range cur {
		for _, r := range rows {
			if v := r[vc]; v != nil {
				if prev, ok := out[k]; !ok || w.Opts.CmpVersion(v, prev) > 0 {
					out[k] = v
				}
			}
		}
	}
	return out, nil
}

// prepareTombstones prepares the upsert of rows (id columns + version column) into the
// tombstone table, creating it on first use from the main table's column types. The part is
// committed by the caller before the main table's part.
func (w *Writer) prepareTombstones(ctx context.Context, ids []string, rows []icerow.Row) (*Part, error) {
	tw := w.tombstoneWriter(ids)
	if tw.Tbl == nil {
		sc := w.Tbl.Schema()
		var fields []ice.NestedField
		for i, n := range append(slices.Clone(ids), w.Opts.KeyVersionColumn()) {
			f, ok := sc.FindFieldByName(n)
			if !ok {
				return nil, fmt.Errorf("column %q not in table schema", n)
			}
			fields = append(fields, ice.NestedField{ID: i + 1, Name: n, Type: f.Type, Required: i < len(ids)})
		}
		fields = append(fields, ice.NestedField{ID: len(fields) + 1, Name: DeletedAtColumn, Type: ice.PrimitiveTypes.TimestampTz,
			Doc: "when the sink recorded the delete (connectd)"})
		tbl, err := CreateTable(ctx, w.Cat, tw.Ident, &ice.StructType{FieldList: fields}, tw.Opts)
		if err != nil {
			if !errors.Is(err, catalog.ErrTableAlreadyExists) {
				return nil, fmt.Errorf("create %s: %w", tw.Ident, err)
			}
			if tbl, err = w.Cat.LoadTable(ctx, tw.Ident); err != nil {
				return nil, err
			}
		}
		tw.Tbl = tbl
	}
	if err := tw.ensureDeletedAtColumn(ctx); err != nil {
		tw.Tbl = nil
		return nil, err
	}
	recs := make([]Rec, len(rows))
	for i, r := range rows {
		recs[i] = Rec{Op: icerow.OpUpdate, Row: r}
	}
	p, err := tw.Prepare(ctx, recs)
	if err != nil {
		tw.Tbl = nil
	}
	return p, err
}

// CommitTombstones prepares and commits tombstone rows on their own.
func (w *Writer) CommitTombstones(ctx context.Context, ids []string, rows []icerow.Row) error {
	p, err := w.prepareTombstones(ctx, ids, rows)
	if err != nil {
		return err
	}
	if _, err := w.Tombs.Apply(ctx, []*Part{p}, nil, nil); err != nil {
		w.Tombs.Tbl = nil
		return err
	}
	return nil
}

// ensureDeletedAtColumn adds DeletedAtColumn to a tombstone table created before it existed.
func (w *Writer) ensureDeletedAtColumn(ctx context.Context) error {
	return w.ensureColumn(ctx, DeletedAtColumn, ice.PrimitiveTypes.TimestampTz, "when the sink recorded the delete (connectd)")
}
