package icetable

import (
	"context"
	"strings"

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

// schemaUpdate returns the schema change that makes the table take rows of record schema st.
func (w *Writer) schemaUpdate(st *ice.StructType) func(tx *table.Transaction) *table.UpdateSchema {
	tsc := w.Tbl.Schema()
	ids := map[string]bool{}
	for _, n := range w.idColumns() {
		ids[n] = true
	}
	fields := make([]ice.NestedField, len(st.FieldList))
	copy(fields, st.FieldList)
	version := w.Tbl.Metadata().Version()
	for i := range fields {
		fields[i].Type = icerow.TypeForFormat(fields[i].Type, version)
		name := fields[i].Name
		if w.Opts.CaseInsensitive {
			if f, ok := tsc.FindFieldByNameCaseInsensitive(name); ok {
				fields[i].Name = f.Name
				name = f.Name
			}
		}
		if ids[name] {
			fields[i].Required = true
		}
		if f, ok := tsc.FindFieldByName(name); ok {
			// e.g. an integral JSON number into a double column: no change
			fields[i].Type = icerow.KeepColumnType(fields[i].Type, f.Type, w.Opts.CaseInsensitive)
		}
		if f, ok := tsc.FindFieldByName(name); ok && f.Required && !fields[i].Required && !ids[name] {
			continue
		} else if ok && !f.Required {
			fields[i].Required = false
		} else if !ok {
			fields[i].Required = false
		}
	}
	usc := ice.NewSchema(0, fields...)
	return func(tx *table.Transaction) *table.UpdateSchema {
		u := tx.UpdateSchema(!w.Opts.CaseInsensitive, false).UnionByNameWith(usc)
		// required table columns the record lacks become optional (else nulls cannot be written)
		for _, f := range tsc.Fields() {
			if f.Required && !ids[f.Name] && !hasField(st, f.Name, w.Opts.CaseInsensitive) {
				u = u.UpdateColumn([]string{f.Name}, table.ColumnUpdate{Required: ice.Optional[bool]{Valid: true, Val: false}})
			}
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

func hasField(st *ice.StructType, name string, ci bool) bool {
	for _, f := range st.FieldList {
		if f.Name == name || (ci && strings.EqualFold(f.Name, name)) {
			return true
		}
	}
	return false
}
