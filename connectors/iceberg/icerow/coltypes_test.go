package icerow

import (
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

// nested builds struct<ts: t, l: list<t>, m: map<string, t>, n: long> around a timestamp type t.
func nested(t ice.Type) *ice.StructType {
	return &ice.StructType{FieldList: []ice.NestedField{
		{ID: 1, Name: "ts", Type: t},
		{ID: 2, Name: "l", Type: &ice.ListType{ElementID: 3, Element: t}},
		{ID: 4, Name: "m", Type: &ice.MapType{KeyID: 5, KeyType: ice.PrimitiveTypes.String, ValueID: 6, ValueType: t}},
		{ID: 7, Name: "n", Type: ice.PrimitiveTypes.Int64},
	}}
}

// Nanosecond timestamps are microsecond ones before format v3, nested ones too; from v3 on they stay.
func TestTypeForFormat(t *testing.T) {
	rec := nested(ice.PrimitiveTypes.TimestampNs)
	require.True(t, nested(ice.PrimitiveTypes.Timestamp).Equals(TypeForFormat(rec, 2)))
	require.True(t, nested(ice.PrimitiveTypes.TimestampTz).Equals(TypeForFormat(nested(ice.PrimitiveTypes.TimestampTzNs), 1)))
	require.Same(t, rec, TypeForFormat(rec, 3))
	plain := nested(ice.PrimitiveTypes.Timestamp)
	require.Same(t, plain, TypeForFormat(plain, 2), "nothing to change: the same type")
}

// A record's timestamps, nested ones too, take the existing column's timestamp type; other types stay the
// record's (a schema update decides about them).
func TestKeepColumnTypeOfNestedTimestamps(t *testing.T) {
	col := nested(ice.PrimitiveTypes.TimestampTz)
	for _, rt := range []ice.Type{ice.PrimitiveTypes.Timestamp, ice.PrimitiveTypes.TimestampNs, ice.PrimitiveTypes.TimestampTzNs} {
		got := KeepColumnType(nested(rt), col, false)
		require.True(t, col.Equals(got), "%s: %s", rt, got)
	}
	// a field whose name differs in case matches only when the table is case-insensitive
	rec := &ice.StructType{FieldList: []ice.NestedField{{ID: 1, Name: "TS", Type: ice.PrimitiveTypes.Timestamp}}}
	require.Same(t, rec, KeepColumnType(rec, col, false))
	require.Equal(t, ice.PrimitiveTypes.TimestampTz, KeepColumnType(rec, col, true).(*ice.StructType).FieldList[0].Type)
	// not a timestamp column: the record's type
	require.Equal(t, ice.PrimitiveTypes.Timestamp, KeepColumnType(ice.PrimitiveTypes.Timestamp, ice.PrimitiveTypes.String, false))
	// the narrower numbers of writesInto
	require.Equal(t, ice.PrimitiveTypes.Float64, KeepColumnType(ice.PrimitiveTypes.Int64, ice.PrimitiveTypes.Float64, false))
}
