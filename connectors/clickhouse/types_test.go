package clickhouse

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

func mustDec(s string) connect.Decimal {
	d, err := connect.ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

var instant = time.Date(2026, 11, 29, 12, 34, 56, 123456789, time.UTC)

// typeCases: ClickHouse type, value as a record carries it, the engine's TabSeparated rendering of
// what was stored (golden), and the rendering of the type's default when the field is missing.
var typeCases = []struct {
	typ     string
	in      any
	want    string
	missing string
}{
	{"Int8", int8(-128), "-128", "0"},
	{"Int16", int16(-32768), "-32768", "0"},
	{"Int32", int32(2147483647), "2147483647", "0"},
	{"Int64", int64(-9223372036854775808), "-9223372036854775808", "0"},
	{"UInt8", int16(255), "255", "0"},
	{"UInt16", int32(65535), "65535", "0"},
	{"UInt32", int64(4294967295), "4294967295", "0"},
	{"UInt64", "18446744073709551615", "18446744073709551615", "0"},
	{"Int128", "-170141183460469231731687303715884105728", "-170141183460469231731687303715884105728", "0"},
	{"UInt128", "340282366920938463463374607431768211455", "340282366920938463463374607431768211455", "0"},
	{"Int256", "-57896044618658097711785492504343953926634992332820282019728792003956564819968", "-57896044618658097711785492504343953926634992332820282019728792003956564819968", "0"},
	{"UInt256", new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)), "115792089237316195423570985008687907853269984665640564039457584007913129639935", "0"},
	{"Float32", float32(1.5), "1.5", "0"},
	{"Float64", float64(-2.25e-300), "-2.25e-300", "0"},
	{"Float64", float64(12345), "12345", "0"}, // JSON numbers arrive as float64
	{"Bool", true, "true", "false"},
	{"String", "héllo\tworld", `héllo\tworld`, ""},
	{"String", []byte{0, 1, 'x'}, `\0` + "\x01" + `x`, ""},
	{"String", map[string]any{"k": "v", "n": float64(1)}, `{"k":"v","n":1}`, ""},
	{"FixedString(4)", "ab", `ab\0\0`, `\0\0\0\0`},
	{"UUID", "123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000"},
	{"Date", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), "2026-11-29", "1970-01-01"},
	{"Date32", time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), "1900-01-01", "1970-01-01"},
	{"Date32", int32(-1), "1969-12-31", "1970-01-01"}, // epoch days, as the official sink
	{"DateTime('UTC')", instant, "2026-11-29 12:34:56", "1970-01-01 00:00:00"},
	{"DateTime('Asia/Tokyo')", instant, "2026-11-29 21:34:56", "1970-01-01 09:00:00"},
	{"DateTime('UTC')", int64(1764419696), "2025-11-29 12:34:56", "1970-01-01 00:00:00"}, // epoch seconds
	{"DateTime64(3, 'UTC')", instant, "2026-11-29 12:34:56.123", "1970-01-01 00:00:00.000"},
	{"DateTime64(6, 'Europe/Berlin')", instant, "2026-11-29 13:34:56.123456", "1970-01-01 01:00:00.000000"},
	{"DateTime64(9, 'UTC')", instant, "2026-11-29 12:34:56.123456789", "1970-01-01 00:00:00.000000000"},
	{"DateTime64(3, 'UTC')", int64(1764419696123), "2025-11-29 12:34:56.123", "1970-01-01 00:00:00.000"}, // raw ticks
	{"DateTime64(3, 'UTC')", "2026-11-29T12:34:56.5+01:00", "2026-11-29 11:34:56.500", "1970-01-01 00:00:00.000"},
	{"Decimal(9, 2)", connect.NewDecimal(12345, 2), "123.45", "0"},
	{"Decimal(18, 4)", mustDec("-12345678901234.5678"), "-12345678901234.5678", "0"},
	{"Decimal(38, 10)", mustDec("1234567890123456789012345678.0123456789"), "1234567890123456789012345678.0123456789", "0"},
	{"Decimal(76, 20)", mustDec("-12345678901234567890123456789012345678901234567890.12345678901234567890"), "-12345678901234567890123456789012345678901234567890.1234567890123456789", "0"},
	{"Decimal32(3)", float64(1.5), "1.5", "0"},
	{"Enum8('a' = 1, 'b' = 2)", "b", "b", "a"},
	{"Enum16('x,y' = -1000, 'z''q' = 1000)", int16(1000), `z\'q`, "x,y"},
	{"IPv4", "192.168.1.10", "192.168.1.10", "0.0.0.0"},
	{"IPv6", "2001:db8::1", "2001:db8::1", "::"},
	{"Nullable(Int32)", int32(-7), "-7", `\N`},
	{"Nullable(String)", "x", "x", `\N`},
	{"LowCardinality(String)", "lc", "lc", ""},
	{"LowCardinality(Nullable(String))", "lcn", "lcn", `\N`},
	{"Array(Int32)", []any{int32(1), int32(2)}, "[1,2]", "[]"},
	{"Array(Nullable(String))", []any{"a", nil}, "['a',NULL]", "[]"},
	{"Array(LowCardinality(String))", []any{"p", "q", "p"}, "['p','q','p']", "[]"},
	{"Array(Array(UInt8))", []any{[]any{int8(1)}, []any{}, []any{int8(2), int8(3)}}, "[[1],[],[2,3]]", "[]"},
	{"Array(String)", []string{"typed", "slice"}, "['typed','slice']", "[]"},
	{"Map(String, Int64)", map[any]any{"b": int64(2), "a": int64(1)}, "{'a':1,'b':2}", "{}"},
	{"Map(String, Array(String))", map[string]any{"k": []any{"v1", "v2"}}, "{'k':['v1','v2']}", "{}"},
	{"Map(LowCardinality(String), Nullable(Float64))", map[string]any{"x": nil, "y": 2.5}, "{'x':NULL,'y':2.5}", "{}"},
	{"Tuple(Int32, String)", []any{int32(1), "x"}, "(1,'x')", "(0,'')"},
	{"Tuple(a Int32, b Nullable(String))", map[string]any{"a": int32(7)}, "(7,NULL)", "(0,NULL)"},
	{"Array(Tuple(id UInt64, tags Array(String)))", []any{map[string]any{"id": int64(1), "tags": []any{"t"}}}, "[(1,['t'])]", "[]"},
}

func TestTypeRoundTripAndDLQ(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	var cols []string
	for i, c := range typeCases {
		cols = append(cols, fmt.Sprintf("c%d %s", i, c.typ))
	}
	chdbtest.MustExec(t, s, fmt.Sprintf("CREATE TABLE %s.types (id UInt32, %s, d String DEFAULT 'dflt', m UInt64 MATERIALIZED id * 2) ENGINE = MergeTree ORDER BY id",
		db, strings.Join(cols, ", ")))

	full := map[string]any{"id": int64(1)}
	for i, c := range typeCases {
		full[fmt.Sprintf("c%d", i)] = c.in
	}
	missing := map[string]any{"id": int64(2)} // every other field missing
	nulls := map[string]any{"id": int64(3)}   // every other field explicitly null
	for i := range typeCases {
		nulls[fmt.Sprintf("c%d", i)] = nil
	}
	bad := []map[string]any{
		{"id": int64(10), "c0": int64(1000)},                      // Int8 out of range
		{"id": int64(11), "c21": "not a date"},                    // Date
		{"id": int64(12), "c37": "zzz"},                           // Enum8 value
		{"id": int64(13), "c45": "not an array"},                  // Array(Int32)
		{"id": int64(14), "c19": "too long for a FixedString(4)"}, // FixedString
	}
	var recs []*connect.SinkRecord
	for i, v := range append([]map[string]any{full, missing}, append(bad, nulls)...) {
		recs = append(recs, &connect.SinkRecord{Topic: "types", Partition: 0, Offset: int64(i), Value: v})
	}
	dlq := &deadLetters{}
	task := startTask(t, props(db), dlq)
	ctx := context.Background()
	require.NoError(t, task.Put(ctx, recs))
	offs, err := task.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{{Topic: "types"}: {Offset: int64(len(recs))}})
	require.NoError(t, err)
	require.Equal(t, int64(len(recs)), offs[connect.TopicPartition{Topic: "types"}].Offset)

	for i, c := range typeCases {
		got, err := s.Query(fmt.Sprintf("SELECT c%d FROM %s.types ORDER BY id", i, db), "TabSeparated")
		require.NoError(t, err)
		require.Equal(t, c.want+"\n"+c.missing+"\n"+c.missing+"\n", string(got), "c%d %s from %T %v", i, c.typ, c.in, c.in)
	}
	// DEFAULT columns absent from every record get the server's default expression; MATERIALIZED are computed.
	require.Equal(t, "1\tdflt\t2\n2\tdflt\t4\n3\tdflt\t6", query(t, s, "SELECT id, d, m FROM "+db+".types ORDER BY id"))

	// Unmappable records went to the DLQ with context; nothing else was affected.
	require.Len(t, dlq.recs, len(bad))
	for i, want := range []string{"column c0 (Int8): 1000 out of range", "column c21 (Date)", "column c37 (Enum8", "column c45 (Array(Int32))", "column c19 (FixedString(4))"} {
		require.Equal(t, int64(2+i), dlq.recs[i].Offset)
		require.Contains(t, dlq.errs[i].Error(), want)
		require.Contains(t, dlq.errs[i].Error(), fmt.Sprintf("types-0@%d", 2+i))
		require.Contains(t, dlq.errs[i].Error(), db+".types")
		require.True(t, connect.IsDataError(dlq.errs[i]))
	}
}

// Without an error reporter (errors.tolerance=none) an unmappable record fails the task.
func TestUnmappableFailsWithoutDLQ(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".t (id Int8) ENGINE = MergeTree ORDER BY id")
	task := startTask(t, props(db), nil)
	err := task.Put(context.Background(), []*connect.SinkRecord{{Topic: "t", Value: map[string]any{"id": int64(300)}}})
	require.Error(t, err)
	require.False(t, connect.IsRetriable(err))
	require.Contains(t, err.Error(), "out of range for Int8")
	require.Equal(t, "0", query(t, s, "SELECT count() FROM "+db+".t"))
}
