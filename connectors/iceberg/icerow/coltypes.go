package icerow

import (
	"slices"
	"strings"

	ice "github.com/apache/iceberg-go"
)

// minNanoTimestampFormat is the first table format version with nanosecond timestamps.
const minNanoTimestampFormat = 3

// TypeForFormat is t as a table of format version v can hold it: before format v3 a nanosecond
// timestamp is a microsecond one (its values are truncated to the microsecond when written).
func TypeForFormat(t ice.Type, v int) ice.Type {
	if v >= minNanoTimestampFormat {
		return t
	}
	nt, _ := withoutNanos(t)
	return nt
}

// withoutNanos is t with its nanosecond timestamps made microsecond ones, and whether any was.
func withoutNanos(t ice.Type) (ice.Type, bool) {
	switch x := t.(type) {
	case ice.TimestampNsType:
		return ice.PrimitiveTypes.Timestamp, true
	case ice.TimestampTzNsType:
		return ice.PrimitiveTypes.TimestampTz, true
	case *ice.StructType:
		var out *ice.StructType
		for i, f := range x.FieldList {
			ft, changed := withoutNanos(f.Type)
			if !changed {
				continue
			}
			if out == nil {
				out = &ice.StructType{FieldList: slices.Clone(x.FieldList)}
			}
			out.FieldList[i].Type = ft
		}
		if out == nil {
			return t, false
		}
		return out, true
	case *ice.ListType:
		if et, changed := withoutNanos(x.Element); changed {
			c := *x
			c.Element = et
			return &c, true
		}
	case *ice.MapType:
		kt, kc := withoutNanos(x.KeyType)
		vt, vc := withoutNanos(x.ValueType)
		if kc || vc {
			c := *x
			c.KeyType, c.ValueType = kt, vt
			return &c, true
		}
	}
	return t, false
}

// isTimestamp reports whether t is one of Iceberg's timestamp types.
func isTimestamp(t ice.Type) bool {
	switch t.(type) {
	case ice.TimestampType, ice.TimestampTzType, ice.TimestampNsType, ice.TimestampTzNsType:
		return true
	}
	return false
}

// KeepColumnType is the record type rec with each part whose values are written into the table's
// existing column type col as they are replaced by col's type, so that a schema update leaves the
// column as it is: the narrower numbers of writesInto, and any timestamp into any timestamp column
// (a value converts to an instant, written in the column's unit), so a table created with
// timestamptz columns keeps taking the records that would create timestamp columns today.
func KeepColumnType(rec, col ice.Type, caseInsensitive bool) ice.Type {
	if writesInto(rec, col) || (isTimestamp(rec) && isTimestamp(col)) {
		return col
	}
	switch r := rec.(type) {
	case *ice.StructType:
		c, ok := col.(*ice.StructType)
		if !ok {
			return rec
		}
		var out *ice.StructType
		for i, f := range r.FieldList {
			cf, ok := structField(c, f.Name, caseInsensitive)
			if !ok {
				continue
			}
			ft := KeepColumnType(f.Type, cf.Type, caseInsensitive)
			if ft == f.Type {
				continue
			}
			if out == nil {
				out = &ice.StructType{FieldList: slices.Clone(r.FieldList)}
			}
			out.FieldList[i].Type = ft
		}
		if out == nil {
			return rec
		}
		return out
	case *ice.ListType:
		c, ok := col.(*ice.ListType)
		if !ok {
			return rec
		}
		if et := KeepColumnType(r.Element, c.Element, caseInsensitive); et != r.Element {
			n := *r
			n.Element = et
			return &n
		}
	case *ice.MapType:
		c, ok := col.(*ice.MapType)
		if !ok {
			return rec
		}
		kt := KeepColumnType(r.KeyType, c.KeyType, caseInsensitive)
		vt := KeepColumnType(r.ValueType, c.ValueType, caseInsensitive)
		if kt != r.KeyType || vt != r.ValueType {
			n := *r
			n.KeyType, n.ValueType = kt, vt
			return &n
		}
	}
	return rec
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

// TableShape is the shape rows of record struct st take in a table of schema tsc (format version
// version, keyed by the columns ids): the columns they need, that is st's fields named and typed as the
// table's existing columns take them (TypeForFormat, KeepColumnType) and required only for the key or
// where the table's column is, and the table's required columns they lack (loosen), which must become
// optional for their nulls. The table must evolve when its schema is not already the union of both.
func TableShape(st *ice.StructType, tsc *ice.Schema, ids map[string]bool, version int, caseInsensitive bool) (fields []ice.NestedField, loosen []string) {
	fields = make([]ice.NestedField, len(st.FieldList))
	copy(fields, st.FieldList)
	for i := range fields {
		fields[i].Type = TypeForFormat(fields[i].Type, version)
		name := fields[i].Name
		if caseInsensitive {
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
			fields[i].Type = KeepColumnType(fields[i].Type, f.Type, caseInsensitive)
		}
		if f, ok := tsc.FindFieldByName(name); ok && f.Required && !fields[i].Required && !ids[name] {
			continue
		} else if ok && !f.Required {
			fields[i].Required = false
		} else if !ok {
			fields[i].Required = false
		}
	}
	// required table columns the record lacks become optional (else nulls cannot be written)
	for _, f := range tsc.Fields() {
		if _, has := structField(st, f.Name, caseInsensitive); f.Required && !ids[f.Name] && !has {
			loosen = append(loosen, f.Name)
		}
	}
	return fields, loosen
}

func structField(st *ice.StructType, name string, caseInsensitive bool) (ice.NestedField, bool) {
	for _, f := range st.FieldList {
		if f.Name == name || (caseInsensitive && strings.EqualFold(f.Name, name)) {
			return f, true
		}
	}
	return ice.NestedField{}, false
}
