package icetable

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
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
		fields[i].Type = TypeForFormat(fields[i].Type, version)
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
			fields[i].Type = keepColumnType(fields[i].Type, f.Type, w.Opts.CaseInsensitive)
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

// writesInto reports whether values of record type rec are written into a column of type col as
// they are (the row conversion widens them), so that the column's type stays: a narrower integer
// or float into a wider one, an integer into a floating-point column.
func writesInto(rec, col ice.Type) bool {
	switch rec {
	case ice.PrimitiveTypes.Int32:
		return col == ice.PrimitiveTypes.Int64 || col == ice.PrimitiveTypes.Float64
	case ice.PrimitiveTypes.Int64:
		return col == ice.PrimitiveTypes.Float64
	case ice.PrimitiveTypes.Float32:
		return col == ice.PrimitiveTypes.Float64
	}
	return false
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

// RecordToRows converts an Arrow record into rows (used by the key lookup and tests).
// RecordRows converts an Arrow record batch of a scan into rows, one map per row.
func RecordRows(rec arrow.RecordBatch) []Row { return RecordToRows(rec) }

func RecordToRows(rec arrow.RecordBatch) []Row {
	n := int(rec.NumRows())
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = make(Row, rec.NumCols())
	}
	for c := 0; c < int(rec.NumCols()); c++ {
		name := rec.ColumnName(c)
		col := rec.Column(c)
		for i := 0; i < n; i++ {
			rows[i][name] = arrowValue(col, i)
		}
	}
	return rows
}

func arrowValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch x := a.(type) {
	case *array.Boolean:
		return x.Value(i)
	case *array.Int32:
		return x.Value(i)
	case *array.Int64:
		return x.Value(i)
	case *array.Float32:
		return x.Value(i)
	case *array.Float64:
		return x.Value(i)
	case *array.String:
		return x.Value(i)
	case *array.LargeString:
		return x.Value(i)
	case *array.Binary:
		return append([]byte(nil), x.Value(i)...)
	case *array.LargeBinary:
		return append([]byte(nil), x.Value(i)...)
	case *array.FixedSizeBinary:
		return append([]byte(nil), x.Value(i)...)
	case *array.Date32:
		return time.Unix(int64(x.Value(i))*86400, 0).UTC()
	case *array.Timestamp:
		u := x.DataType().(*arrow.TimestampType).Unit
		if u == arrow.Nanosecond {
			return time.Unix(0, int64(x.Value(i))).UTC()
		}
		return time.UnixMicro(int64(x.Value(i))).UTC()
	case *array.Time64:
		return time.Duration(x.Value(i)) * time.Microsecond
	case *array.Decimal128:
		sc := x.DataType().(*arrow.Decimal128Type).Scale
		return Decimal{Unscaled: x.Value(i).BigInt(), Scale: sc}
	case *extensions.UUIDArray:
		return x.Value(i)
	case *array.Struct:
		st := x.DataType().(*arrow.StructType)
		m := make(map[string]any, st.NumFields())
		for f := 0; f < st.NumFields(); f++ {
			m[st.Field(f).Name] = arrowValue(x.Field(f), i)
		}
		return m
	case *array.Map:
		s, e := x.ValueOffsets(i)
		out := make([][2]any, 0, e-s)
		for j := s; j < e; j++ {
			out = append(out, [2]any{arrowValue(x.Keys(), int(j)), arrowValue(x.Items(), int(j))})
		}
		return out
	case *array.List:
		s, e := x.ValueOffsets(i)
		out := make([]any, 0, e-s)
		for j := s; j < e; j++ {
			out = append(out, arrowValue(x.ListValues(), int(j)))
		}
		return out
	case *array.LargeList:
		s, e := x.ValueOffsets(i)
		out := make([]any, 0, e-s)
		for j := s; j < e; j++ {
			out = append(out, arrowValue(x.ListValues(), int(j)))
		}
		return out
	}
	return fmt.Sprint(a.GetOneForMarshal(i))
}
