package icerow_test

import (
	"math/big"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// A live row read back from a table and written again (the rewrite of a row whose StaleDeleteColumn mark
// changes) keeps every value of every Iceberg type exactly.
func TestRowRoundTripEveryType(t *testing.T) {
	sc := ice.NewSchema(0,
		ice.NestedField{ID: 1, Name: "b", Type: ice.PrimitiveTypes.Bool},
		ice.NestedField{ID: 2, Name: "i", Type: ice.PrimitiveTypes.Int32},
		ice.NestedField{ID: 3, Name: "l", Type: ice.PrimitiveTypes.Int64, Required: true},
		ice.NestedField{ID: 4, Name: "f", Type: ice.PrimitiveTypes.Float32},
		ice.NestedField{ID: 5, Name: "d", Type: ice.PrimitiveTypes.Float64},
		ice.NestedField{ID: 6, Name: "dec", Type: ice.DecimalTypeOf(12, 3)},
		ice.NestedField{ID: 7, Name: "date", Type: ice.PrimitiveTypes.Date},
		ice.NestedField{ID: 8, Name: "time", Type: ice.PrimitiveTypes.Time},
		ice.NestedField{ID: 9, Name: "ts", Type: ice.PrimitiveTypes.Timestamp},
		ice.NestedField{ID: 10, Name: "tstz", Type: ice.PrimitiveTypes.TimestampTz},
		ice.NestedField{ID: 11, Name: "s", Type: ice.PrimitiveTypes.String},
		ice.NestedField{ID: 12, Name: "u", Type: ice.PrimitiveTypes.UUID},
		ice.NestedField{ID: 13, Name: "fx", Type: ice.FixedTypeOf(4)},
		ice.NestedField{ID: 14, Name: "bin", Type: ice.PrimitiveTypes.Binary},
		ice.NestedField{ID: 15, Name: "st", Type: &ice.StructType{FieldList: []ice.NestedField{
			{ID: 16, Name: "x", Type: ice.PrimitiveTypes.Int64},
			{ID: 17, Name: "tags", Type: &ice.ListType{ElementID: 18, Element: ice.PrimitiveTypes.String, ElementRequired: false}},
		}}},
		ice.NestedField{ID: 19, Name: "m", Type: &ice.MapType{KeyID: 20, KeyType: ice.PrimitiveTypes.String, ValueID: 21,
			ValueType: ice.DecimalTypeOf(10, 2), ValueRequired: false}},
		ice.NestedField{ID: 22, Name: "nul", Type: ice.PrimitiveTypes.String},
	)
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	require.NoError(t, err)
	ts := time.Date(2026, 12, 1, 8, 30, 15, 123456000, time.UTC)
	row := icerow.Row{
		"b": true, "i": int32(-7), "l": int64(1) << 40, "f": float32(1.5), "d": 2.25,
		"dec": icerow.Decimal{Unscaled: big.NewInt(-1234567), Scale: 3}, "date": ts.Truncate(24 * time.Hour),
		"time": 8*time.Hour + 30*time.Minute + 123*time.Microsecond, "ts": ts, "tstz": ts,
		"s": "Łódź 😀", "u": uuid.MustParse("6f1c7a1e-1111-4222-8333-944455556666"), "fx": []byte{1, 2, 3, 4},
		"bin": []byte{0, 255, 7}, "st": map[string]any{"x": int64(3), "tags": []any{"a", nil, "c"}},
		"m": [][2]any{{"k", icerow.Decimal{Unscaled: big.NewInt(199), Scale: 2}}},
	}
	first, err := icerow.BuildRecord(asc, []icerow.Row{row})
	require.NoError(t, err)
	defer first.Release()
	back := icerow.RecordToRows(first)
	second, err := icerow.BuildRecord(asc, back)
	require.NoError(t, err)
	defer second.Release()
	for c := 0; c < int(first.NumCols()); c++ {
		require.True(t, array.Equal(first.Column(c), second.Column(c)), "column %s: %v != %v", first.ColumnName(c), first.Column(c), second.Column(c))
	}
}

// A fixed[N] value of another length is an error for the record, not a panic of the writer.
func TestFixedValueOfWrongLength(t *testing.T) {
	sc := ice.NewSchema(0, ice.NestedField{ID: 1, Name: "fx", Type: ice.FixedTypeOf(4)})
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	require.NoError(t, err)
	_, err = icerow.BuildRecord(asc, []icerow.Row{{"fx": []byte{1, 2, 3}}})
	require.ErrorContains(t, err, "fixed[4] value of 3 bytes")
}
