package icetable

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// SortTerm is one term of a declared sort order (iceberg.tables.sort-order).
type SortTerm struct {
	Column    string
	Desc      bool
	NullsLast bool
}

// ParseSortOrder reads a sort order declaration: comma-separated terms, each a column name followed by
// an optional direction (asc, the default, or desc) and an optional null order (nulls first or nulls
// last; the default is nulls first ascending and nulls last descending, as in Iceberg), for example
// "id, ts desc, name asc nulls last". Keywords are case-insensitive.
func ParseSortOrder(s string) ([]SortTerm, error) {
	var out []SortTerm
	for _, part := range strings.Split(s, ",") {
		words := strings.Fields(part)
		if len(words) == 0 {
			continue
		}
		t := SortTerm{Column: words[0]}
		rest := words[1:]
		if len(rest) > 0 {
			switch strings.ToLower(rest[0]) {
			case "asc":
				rest = rest[1:]
			case "desc":
				t.Desc = true
				rest = rest[1:]
			}
		}
		t.NullsLast = t.Desc
		if len(rest) == 2 && strings.EqualFold(rest[0], "nulls") {
			switch strings.ToLower(rest[1]) {
			case "first":
				t.NullsLast, rest = false, nil
			case "last":
				t.NullsLast, rest = true, nil
			}
		}
		if len(rest) > 0 {
			return nil, fmt.Errorf("sort order term %q: want <column> [asc|desc] [nulls first|nulls last]", strings.TrimSpace(part))
		}
		out = append(out, t)
	}
	return out, nil
}

// BuildSortOrder binds terms to the columns of sc (identity transforms).
func BuildSortOrder(sc *ice.Schema, terms []SortTerm, caseInsensitive bool) (table.SortOrder, error) {
	if len(terms) == 0 {
		return table.UnsortedSortOrder, nil
	}
	fields := make([]table.SortField, 0, len(terms))
	for _, t := range terms {
		f, ok := sc.FindFieldByName(t.Column)
		if !ok && caseInsensitive {
			f, ok = sc.FindFieldByNameCaseInsensitive(t.Column)
		}
		if !ok {
			return table.SortOrder{}, fmt.Errorf("sort order column %q not in the table's schema", t.Column)
		}
		if _, prim := f.Type.(ice.PrimitiveType); !prim {
			return table.SortOrder{}, fmt.Errorf("sort order column %q is %s, not a primitive type", t.Column, f.Type)
		}
		sf := table.SortField{SourceIDs: []int{f.ID}, Transform: ice.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}
		if t.Desc {
			sf.Direction = table.SortDESC
		}
		if t.NullsLast {
			sf.NullOrder = table.NullsLast
		}
		fields = append(fields, sf)
	}
	return table.NewSortOrder(table.InitialSortOrderID, fields)
}

// sortKey is a sort field as it is applied to Arrow records: the column and how it orders.
type sortKey struct {
	column    string
	desc      bool
	nullsLast bool
}

// sortKeys returns the fields of order that rows can be sorted by: its leading identity fields, whose
// columns are top-level columns of sc. A field with another transform ends them (rows sorted by its
// source column would not be sorted by the fields after it). None: nothing to sort by.
func sortKeys(order table.SortOrder, sc *ice.Schema) []sortKey {
	var keys []sortKey
	for _, f := range order.Fields() {
		if _, ok := f.Transform.(ice.IdentityTransform); !ok || len(f.SourceIDs) != 1 {
			break
		}
		name, ok := sc.FindColumnName(f.SourceID())
		if !ok || strings.Contains(name, ".") {
			break
		}
		keys = append(keys, sortKey{column: name, desc: f.Direction == table.SortDESC, nullsLast: f.NullOrder == table.NullsLast})
	}
	return keys
}

// Sorts reports whether SortRecords sorts rows of sc by order.
func Sorts(order table.SortOrder, sc *ice.Schema) bool { return len(sortKeys(order, sc)) > 0 }

// SortRecords returns the rows of recs, which share one schema, as one record sorted by order (see
// sortKeys). The caller releases recs and the result.
func SortRecords(ctx context.Context, order table.SortOrder, sc *ice.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	schema := recs[0].Schema()
	mem := memory.DefaultAllocator
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("sorting: %w", err)
		}
		cols[i] = c
	}
	var keys []compute.SortKey
	for _, k := range sortKeys(order, sc) {
		idx := schema.FieldIndices(k.column)
		if len(idx) != 1 {
			break
		}
		key := compute.SortKey{ColumnIndex: idx[0], Order: compute.SortOrderAscending, NullPlacement: compute.SortNullsAtStart}
		if k.desc {
			key.Order = compute.SortOrderDescending
		}
		if k.nullsLast {
			key.NullPlacement = compute.SortNullsAtEnd
		}
		keys = append(keys, key)
	}
	whole := array.NewRecordBatch(schema, cols, n)
	defer whole.Release()
	if len(keys) == 0 {
		whole.Retain()
		return whole, nil
	}
	sorted, err := compute.SortRecordBatch(ctx, whole, keys)
	if err != nil {
		return nil, fmt.Errorf("sorting: %w", err)
	}
	return sorted, nil
}

// sortedBatches yields the rows of src sorted by tbl's sort order, in batches of SpoolBatchRows. It
// takes the batches of src (WriteRecords' contract: it releases what it consumes).
func sortedBatches(ctx context.Context, tbl *table.Table, src iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		var recs []arrow.RecordBatch
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		for r, err := range src {
			if err != nil {
				yield(nil, err)
				return
			}
			recs = append(recs, r)
		}
		sorted, err := SortRecords(ctx, tbl.SortOrder(), tbl.Schema(), recs)
		if err != nil || sorted == nil {
			if err != nil {
				yield(nil, err)
			}
			return
		}
		defer sorted.Release()
		for i := int64(0); i < sorted.NumRows(); i += SpoolBatchRows {
			if !yield(sorted.NewSlice(i, min(i+SpoolBatchRows, sorted.NumRows())), nil) {
				return
			}
		}
	}
}
