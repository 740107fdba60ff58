package header

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// A readable sample of the JVM behaviour the golden cases pin down.
func TestToConnectHeaderExamples(t *testing.T) {
	c := &Converter{}
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		in   string
		want connect.SchemaAndValue
	}{
		{"hello", connect.SchemaAndValue{Schema: connect.StringSchema, Value: "hello"}},
		{"", connect.SchemaAndValue{Schema: connect.StringSchema, Value: ""}},
		{"null", connect.NullSchemaAndValue},
		{"true", connect.SchemaAndValue{Schema: connect.BoolSchema, Value: true}},
		{"TRUE", connect.SchemaAndValue{Schema: connect.StringSchema, Value: "TRUE"}},
		{" 12 ", connect.SchemaAndValue{Schema: connect.Int8Schema, Value: int8(12)}},
		{"12,34", connect.SchemaAndValue{Schema: connect.Int8Schema, Value: int8(12)}},
		{"1000", connect.SchemaAndValue{Schema: connect.Int16Schema, Value: int16(1000)}},
		{"1.0", connect.SchemaAndValue{Schema: connect.Int8Schema, Value: int8(1)}},
		{"0.1", connect.SchemaAndValue{Schema: connect.Float32Schema, Value: float32(0.1)}},
		{"1.5e300", connect.SchemaAndValue{Schema: connect.Float64Schema, Value: 1.5e300}},
		{"9223372036854775808", connect.SchemaAndValue{Schema: connect.DecimalSchema(0), Value: connect.Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(1), 63), Scale: 0}}},
		{"2024-01-02", connect.SchemaAndValue{Schema: connect.DateSchema, Value: day(2024, 1, 2)}},
		{"2024-13-01", connect.SchemaAndValue{Schema: connect.DateSchema, Value: day(2025, 1, 1)}},
		{"12:34:56.789Z", connect.SchemaAndValue{Schema: connect.TimeSchema, Value: time.UnixMilli(45296789).UTC()}},
		{"[1,2.5]", connect.SchemaAndValue{Schema: connect.ArrayBuilder(connect.Float32Schema).MustBuild(), Value: []any{float32(1), float32(2.5)}}},
		{`[1,"a"]`, connect.SchemaAndValue{Schema: connect.ArrayBuilder(nil).MustBuild(), Value: []any{int8(1), "a"}}},
		{`[1,null]`, connect.SchemaAndValue{Schema: connect.StringSchema, Value: `[1,null]`}},
		{`{"a":1}`, connect.SchemaAndValue{Schema: connect.MapBuilder(connect.StringSchema, connect.Int8Schema).MustBuild(), Value: map[any]any{"a": int8(1)}}},
		{`{"a":null}`, connect.SchemaAndValue{Schema: connect.MapBuilder(connect.StringSchema, nil).MustBuild(), Value: map[any]any{"a": nil}}},
		{`{[1]:2}`, connect.SchemaAndValue{Schema: connect.StringSchema, Value: `{[1]:2}`}}, // the JVM: MAP keyed by ARRAY
	}
	for _, tc := range cases {
		got, err := c.ToConnectHeader("t", "h", []byte(tc.in))
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	deep := []byte(strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1))
	got, err := c.ToConnectHeader("t", "h", deep)
	require.NoError(t, err)
	assert.Equal(t, connect.SchemaAndValue{Schema: connect.BytesSchema, Value: deep}, got)
	ok := []byte(strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth))
	got, err = c.ToConnectHeader("t", "h", ok)
	require.NoError(t, err)
	assert.Equal(t, connect.TypeArray, got.Schema.Type)
}

func TestFromConnectHeaderExamples(t *testing.T) {
	c := &Converter{}
	cases := []struct {
		schema *connect.Schema
		v      any
		want   string
	}{
		{connect.StringSchema, "plain", "plain"},
		{connect.Float32Schema, float32(435314208), "4.35314208E8"},
		{connect.Float64Schema, 1e23, "9.999999999999999E22"},
		{connect.Float64Schema, 0.001, "0.001"},
		{connect.DecimalSchema(-3), connect.NewDecimal(5, -3), "5E+3"},
		{connect.DateSchema, time.UnixMilli(0).UTC(), "00:00:00.000Z"},
		{connect.TimestampSchema, time.UnixMilli(19724 * 86400000).UTC(), "2024-01-02"},
		{connect.TimestampSchema, time.UnixMilli(-12219379200000).UTC(), "00:00:00.000Z"}, // any instant before 1970-01-02 prints as a time
		{nil, []any{"a\"b", nil, []byte{1}}, `["a\"b",null,"AQ=="]`},
		{nil, map[any]any{"b": int32(1), "a": true}, `{"a":true,"b":1}`},
	}
	for _, tc := range cases {
		got, err := c.FromConnectHeader("t", "h", tc.schema, tc.v)
		require.NoError(t, err)
		assert.Equal(t, tc.want, string(got))
	}
	got, err := c.FromConnectHeader("t", "h", connect.OptionalStringSchema, nil)
	require.NoError(t, err)
	assert.Nil(t, got)
}
