package reconcile

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/clickhouse"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// TestTypeMappingOnEngine writes a value of each ClickHouse type on the engine, reads it back through the
// mapping's expression over the native protocol, and checks that it has the canonical text of the Iceberg
// value the Iceberg sink would hold for the same field (what icetable.LiveRows yields), and the same
// canonical text as a different value does not.
func TestTypeMappingOnEngine(t *testing.T) {
	s, srv := clickhouseEngine(t)
	db := chdbtest.Database(t)
	tokyo := time.FixedZone("JST", 9*3600)
	cases := []struct {
		ice     ice.Type
		ch      string
		literal string
		value   any // the Iceberg value that equals it
		other   any // an Iceberg value that differs
	}{
		{ice.BooleanType{}, "Bool", "true", true, false},
		{ice.BooleanType{}, "UInt8", "1", true, false},
		{ice.Int32Type{}, "Int32", "-5", int32(-5), int32(5)},
		{ice.Int64Type{}, "Int64", "-9223372036854775808", int64(-9223372036854775808), int64(0)},
		{ice.Int64Type{}, "UInt32", "4294967295", int64(4294967295), int64(-1)},
		{ice.Int64Type{}, "Nullable(Int64)", "NULL", nil, int64(0)},
		{ice.Int64Type{}, "Int64", "0", nil, int64(1)}, // null in Iceberg = the default of a non-Nullable column
		{ice.Float32Type{}, "Float32", "1.1", float32(1.1), float32(1.1000001)},
		{ice.Float64Type{}, "Float64", "0.1", 0.1, 0.1000000000000001},
		{ice.Float64Type{}, "Float64", "1e300", 1e300, 1e299},
		{ice.DecimalTypeOf(10, 2), "Decimal(10, 2)", "123.40", icerow.Decimal{Unscaled: big.NewInt(12340), Scale: 2}, icerow.Decimal{Unscaled: big.NewInt(12341), Scale: 2}},
		{ice.DecimalTypeOf(10, 2), "Decimal(18, 4)", "-0.5", icerow.Decimal{Unscaled: big.NewInt(-50), Scale: 2}, icerow.Decimal{Unscaled: big.NewInt(50), Scale: 2}},
		{ice.DecimalTypeOf(38, 10), "Decimal(38, 10)", "12345678901234567890.0123456789", icerow.Decimal{Unscaled: mustBig("123456789012345678900123456789"), Scale: 10}, icerow.Decimal{Unscaled: mustBig("123456789012345678900123456788"), Scale: 10}},
		{ice.DecimalTypeOf(10, 2), "Nullable(Decimal(10, 2))", "NULL", nil, icerow.Decimal{Unscaled: big.NewInt(0), Scale: 2}},
		{ice.DecimalTypeOf(10, 2), "Decimal(10, 2)", "0", nil, icerow.Decimal{Unscaled: big.NewInt(1), Scale: 2}},
		{ice.DateType{}, "Date", "'2024-02-29'", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)},
		{ice.DateType{}, "Date32", "'1960-01-01'", time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1960, 1, 2, 0, 0, 0, 0, time.UTC)},
		{ice.TimestampType{}, "DateTime64(3, 'UTC')", "'2024-01-02 03:04:05.678'", time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC), time.Date(2024, 1, 2, 3, 4, 5, 679e6, time.UTC)},
		{ice.TimestampTzType{}, "DateTime64(6, 'Asia/Tokyo')", "'2024-01-02 12:04:05.000001'", time.Date(2024, 1, 2, 12, 4, 5, 1000, tokyo).UTC(), time.Date(2024, 1, 2, 12, 4, 5, 0, tokyo).UTC()},
		{ice.TimestampType{}, "DateTime('UTC')", "'2024-01-02 03:04:05'", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2024, 1, 2, 3, 4, 6, 0, time.UTC)},
		{ice.TimestampType{}, "Nullable(DateTime64(3, 'UTC'))", "NULL", nil, time.Unix(0, 0).UTC()},
		{ice.StringType{}, "LowCardinality(String)", "'Zoë 東京'", "Zoë 東京", "Zoe 東京"},
		{ice.StringType{}, "LowCardinality(Nullable(String))", "NULL", nil, ""},
		{ice.StringType{}, "Nullable(String)", "''", "", nil},
		{ice.StringType{}, "String", "''", nil, "x"},
		{ice.StringType{}, "FixedString(4)", "'ab'", "ab", "ab\x00\x00x"},
		{ice.StringType{}, "Enum8('active' = 1, 'gone' = 2)", "'gone'", "gone", "active"},
		{ice.UUIDType{}, "UUID", "'6F9619FF-8B86-D011-B42D-00C04FC964FF'", uuid.MustParse("6f9619ff-8b86-d011-b42d-00c04fc964ff"), uuid.Nil},
		{ice.BinaryType{}, "String", "'a\\0b'", []byte("a\x00b"), []byte("a\x00c")},
	}
	var cols, vals []string
	for i, c := range cases {
		cols = append(cols, fmt.Sprintf("c%d %s", i, c.ch))
		vals = append(vals, c.literal)
	}
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".types ("+strings.Join(cols, ", ")+") ENGINE = MergeTree ORDER BY tuple()")
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".types VALUES ("+strings.Join(vals, ", ")+")")
	cfg, err := clickhouse.ParseConfig(map[string]string{"hostname": "127.0.0.1", "port": fmt.Sprint(srv.Port()), "database": db})
	require.NoError(t, err)
	conn, err := dialClickHouse(context.Background(), cfg, "test")
	require.NoError(t, err)
	defer conn.Close()
	for i, c := range cases {
		name := fmt.Sprintf("c%d", i)
		m := newMapping(name, c.ice, c.ch)
		require.Empty(t, m.Skipped, "%s %s", c.ice, c.ch)
		var got string
		require.NoError(t, conn.query(context.Background(), "SELECT CAST("+m.expr+" AS Nullable(String)) FROM "+db+".types", 1,
			func(v []string, null []bool) error {
				got, err = m.fromClickHouse(v[0], null[0])
				return err
			}), "%s", m.expr)
		want, err := m.fromIceberg(c.value)
		require.NoError(t, err)
		require.Equal(t, want, got, "Iceberg %s %#v vs ClickHouse %s %s", c.ice, c.value, c.ch, c.literal)
		other, err := m.fromIceberg(c.other)
		require.NoError(t, err)
		require.NotEqual(t, other, got, "Iceberg %s %#v must differ from ClickHouse %s %s", c.ice, c.other, c.ch, c.literal)
	}
}

func mustBig(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return n
}

// TestTypeMappingRefusesUnmapped: pairs without a rule are not compared, and say why.
func TestTypeMappingRefusesUnmapped(t *testing.T) {
	for _, c := range []struct {
		ice ice.Type
		ch  string
	}{
		{ice.StringType{}, "Array(String)"},
		{ice.Int64Type{}, "String"},
		{ice.TimestampType{}, "Int64"},
		{ice.DecimalTypeOf(10, 2), "Float64"},
		{ice.DateType{}, "DateTime"},
		{&ice.ListType{ElementID: 2, Element: ice.StringType{}}, "Array(String)"},
	} {
		m := newMapping("c", c.ice, c.ch)
		require.NotEmpty(t, m.Skipped, "%s %s", c.ice, c.ch)
	}
}

// TestTypeMappingNestedAndQuotedTypes: wrapped, nested and quoted ClickHouse types map by their base type's
// name, and a Nullable wrapper reads NULL as NULL.
func TestTypeMappingNestedAndQuotedTypes(t *testing.T) {
	for _, c := range []struct {
		ice      ice.Type
		ch       string
		kind     kind
		nullable bool
	}{
		{ice.TimestampTzType{}, "Nullable(DateTime64(3, 'UTC'))", kindTimestamp, true},
		{ice.TimestampType{}, "DateTime('Asia/Tokyo')", kindTimestamp, false},
		{ice.StringType{}, "Enum8('a,b' = 1, 'c(' = 2)", kindString, false},
		{ice.StringType{}, "LowCardinality(Nullable(String))", kindString, true},
		{ice.DecimalTypeOf(18, 4), "Nullable(Decimal(18, 4))", kindDecimal, true},
	} {
		m := newMapping("c", c.ice, c.ch)
		require.Empty(t, m.Skipped, c.ch)
		require.Equal(t, c.kind, m.kind, c.ch)
		require.Equal(t, c.nullable, m.ch.Nullable, c.ch)
		require.Equal(t, c.nullable, strings.HasPrefix(m.expr, "if(isNull("), c.ch)
	}
	m := newMapping("c", ice.StringType{}, "Tuple(a String, b Array(Decimal(18, 4)))")
	require.Equal(t, "Tuple", m.ch.Name)
	require.Equal(t, []string{"a String", "b Array(Decimal(18, 4))"}, m.ch.Args)
	require.NotEmpty(t, m.Skipped)
}

// TestCDCVersionDecoding: the Iceberg sink's stored source positions against the ClickHouse sink's numbers.
func TestCDCVersionDecoding(t *testing.T) {
	for in, want := range map[string]string{"041010": "1010", "010": "0", "2099999999999999999999": "99999999999999999999", "0242.03758.010": "0242.03758.010", "": ""} {
		require.Equal(t, want, versionText(in), in)
	}
	require.Equal(t, "42", versionText(int64(42)))
	require.True(t, versionLess("999", "1000"))
	require.True(t, versionLess("", "0"))
	require.False(t, versionLess("1000", "999"))
}
