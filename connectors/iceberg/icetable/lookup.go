package icetable

import (
	"context"
	"slices"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

func project(r icerow.Row, names []string) icerow.Row {
	out := make(icerow.Row, len(names))
	for _, n := range names {
		out[n] = r[n]
	}
	return out
}

// lookupCurrent scans the live rows (deletes applied) for the given keys and returns, per key,
// the id, partition-source and version columns of each live row.
func (w *Writer) lookupCurrent(ctx context.Context, ids []string, keys []icerow.Row) (map[string][]icerow.Row, error) {
	names, _, err := w.deleteColumns(ids)
	if err != nil {
		return nil, err
	}
	cols := slices.Clone(names)
	if vc := w.Opts.KeyVersionColumn(); vc != "" && !slices.Contains(cols, vc) {
		// only a table column can be compared with the committed row
		if _, ok := w.Tbl.Schema().FindFieldByName(vc); ok {
			cols = append(cols, vc)
		}
	}
	cols = w.markColumns(cols)
	filter := keyFilter(w.Tbl.Schema(), ids[0], keys)
	scan := w.Tbl.Scan(table.WithRowFilter(filter), table.WithSelectedFields(cols...))
	if b := w.Opts.CommitBranch; b != "" && b != table.MainBranch {
		if scan, err = scan.UseRef(b); err != nil {
			return nil, err
		}
	}
	_, it, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[icerow.KeyOf(k, ids)] = true
	}
	out := map[string][]icerow.Row{}
	for rec, err := range it {
		if err != nil {
			return nil, err
		}
		rows := icerow.RecordToRows(rec)
		rec.Release()
		for _, r := range rows {
			k := icerow.KeyOf(r, ids)
			if want[k] {
				out[k] = append(out[k], r)
			}
		}
	}
	return out, nil
}

func keyFilter(sc *ice.Schema, col string, keys []icerow.Row) ice.BooleanExpression {
	f, ok := sc.FindFieldByName(col)
	if !ok || len(keys) == 0 || len(keys) > 50000 {
		return ice.AlwaysTrue{}
	}
	lits := make([]ice.Literal, 0, len(keys))
	for _, k := range keys {
		v := k[col]
		if v == nil {
			return ice.AlwaysTrue{}
		}
		switch f.Type.(type) {
		case ice.Int32Type:
			n, err := icerow.ToInt64(v)
			if err != nil {
				return ice.AlwaysTrue{}
			}
			lits = append(lits, ice.NewLiteral(int32(n)))
		case ice.Int64Type:
			n, err := icerow.ToInt64(v)
			if err != nil {
				return ice.AlwaysTrue{}
			}
			lits = append(lits, ice.NewLiteral(n))
		case ice.StringType:
			lits = append(lits, ice.NewLiteral(icerow.ToString(v)))
		default:
			return ice.AlwaysTrue{}
		}
	}
	return ice.SetPredicate(ice.OpIn, ice.Reference(col), lits)
}
