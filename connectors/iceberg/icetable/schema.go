package icetable

import (
	"context"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// evolve brings the table schema up to every distinct record schema in recs: add missing
// columns (optional, nested structs included), widen int->long, float->double and decimal
// precision, and make required columns optional when a record has them optional or lacks
// them. Identifier fields stay required. Each needed change is one metadata commit (no
// snapshot), before the data commit.
func (w *Writer) evolve(ctx context.Context, recs []Rec) error {
	seen := map[*ice.StructType]bool{}
	for _, r := range recs {
		if r.Schema == nil || seen[r.Schema] {
			continue
		}
		seen[r.Schema] = true
		if err := w.EvolveTo(ctx, r.Schema); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) EvolveTo(ctx context.Context, st *ice.StructType) error {
	for attempt := 0; ; attempt++ {
		build := w.schemaUpdate(st)
		// BuildUpdates runs the staged operations, so check on one builder and commit another.
		upd, _, err := build(w.Tbl.NewTransaction()).BuildUpdates()
		if err != nil {
			return &DataError{err}
		}
		if len(upd) == 0 {
			return nil
		}
		tx := w.Tbl.NewTransaction()
		if err := build(tx).Commit(); err != nil {
			return err
		}
		ntbl, err := tx.Commit(ctx)
		if err != nil {
			if attempt < 3 {
				if lerr := w.Load(ctx, nil); lerr != nil {
					return lerr
				}
				continue
			}
			return err
		}
		w.Tbl = ntbl
		return nil
	}
}

// schemaUpdate returns the schema change that makes the table take rows of record schema st: the union
// with the columns the rows need, and the required columns they lack made optional (icerow.TableShape).
func (w *Writer) schemaUpdate(st *ice.StructType) func(tx *table.Transaction) *table.UpdateSchema {
	ids := map[string]bool{}
	for _, n := range w.idColumns() {
		ids[n] = true
	}
	fields, loosen := icerow.TableShape(st, w.Tbl.Schema(), ids, w.Tbl.Metadata().Version(), w.Opts.CaseInsensitive)
	usc := ice.NewSchema(0, fields...)
	return func(tx *table.Transaction) *table.UpdateSchema {
		u := tx.UpdateSchema(!w.Opts.CaseInsensitive, false).UnionByNameWith(usc)
		for _, name := range loosen {
			u = u.UpdateColumn([]string{name}, table.ColumnUpdate{Required: ice.Optional[bool]{Valid: true, Val: false}})
		}
		return u
	}
}

// NeedsEvolution reports whether rows of record schema st need a schema change of the table.
func (w *Writer) NeedsEvolution(st *ice.StructType) (bool, error) {
	upd, _, err := w.schemaUpdate(st)(w.Tbl.NewTransaction()).BuildUpdates()
	if err != nil {
		return false, &DataError{err}
	}
	return len(upd) > 0, nil
}
