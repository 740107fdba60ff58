package icerow

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect/values"
)

// coerced is one input of a coercion and its expected value (nil: an error).
type coerced struct {
	in   any
	want any // nil: an error
}

func checkCoercions[T any](t *testing.T, name string, conv func(any) (T, error), cases []coerced) {
	t.Helper()
	for _, c := range cases {
		got, err := conv(c.in)
		if c.want == nil {
			require.Error(t, err, "%s(%#v) = %v", name, c.in, got)
			continue
		}
		require.NoError(t, err, "%s(%#v)", name, c.in)
		require.Equal(t, c.want, got, "%s(%#v)", name, c.in)
	}
}

var coerceTime = time.Date(2026, 5, 17, 10, 11, 12, 345678912, time.UTC)

// The row builder's coercions of a value into a column (and of keys and versions): every input the
// builder accepts, with its value, and the inputs it refuses. Inputs beyond the JVM's Values
// conversions (connect/values) keep being accepted as the builder has always accepted them.
func TestRowValueCoercions(t *testing.T) {
	checkCoercions(t, "ToInt64", ToInt64, []coerced{
		{int(7), int64(7)}, {int8(-8), int64(-8)}, {int16(16), int64(16)}, {int32(-32), int64(-32)},
		{int64(math.MaxInt64), int64(math.MaxInt64)}, {uint8(8), int64(8)}, {uint16(16), int64(16)},
		{uint32(math.MaxUint32), int64(math.MaxUint32)}, {uint64(64), int64(64)},
		{float64(3), int64(3)}, {float64(-2), int64(-2)}, {1.5, nil}, {math.NaN(), nil},
		{json.Number("42"), int64(42)}, {json.Number("4.2"), nil}, {json.Number("1e3"), nil},
		{"17", int64(17)}, {" 17 ", int64(17)}, {"x", nil}, {"1.0", nil}, {"99999999999999999999", nil},
		{coerceTime, coerceTime.UnixMilli()},
		{true, nil}, {[]byte("1"), nil}, {map[string]any{}, nil},
		// as Values.convertToLong takes them
		{Decimal{Unscaled: big.NewInt(100), Scale: 2}, int64(1)}, {Decimal{Unscaled: big.NewInt(150), Scale: 2}, nil},
		{json.Number(" 42 "), int64(42)}, {uint(5), int64(5)},
		// beyond Values.convertToLong, as the builder has always read them
		{float32(2.75), int64(2)}, {float32(-2.75), int64(-2)},
		{uint64(math.MaxUint64), int64(-1)},
		// a float outside int64's range is refused, not converted to whatever Go's conversion gives
		{float64(-0x1p63), int64(math.MinInt64)}, {1e20, nil}, {-1e19, nil}, {math.Inf(1), nil},
		{float32(1e20), nil}, {float32(math.NaN()), nil},
	})
	checkCoercions(t, "ToFloat64", ToFloat64, []coerced{
		{1.25, 1.25}, {float32(1.5), 1.5}, {json.Number("2.5e3"), 2500.0}, {"3.25", 3.25}, {"NaN-ish", nil},
		{int64(-4), -4.0}, {int32(4), 4.0}, {uint8(9), 9.0}, {"7", 7.0},
		{true, nil}, {[]byte("1"), nil},
		// as Values.convertToDouble takes them
		{Decimal{Unscaled: big.NewInt(125), Scale: 2}, 1.25}, {" 3.5 ", 3.5}, {uint64(math.MaxUint64), float64(math.MaxUint64)},
		// beyond Values.convertToDouble, as the builder has always read them
		{coerceTime, float64(coerceTime.UnixMilli())},
	})
	checkCoercions(t, "ToBoolean", values.ToBoolean, []coerced{
		{true, true}, {false, false}, {"true", true}, {"FALSE", false}, {"1", true}, {"t", true}, {"yes", nil},
		{"", nil},
		// as Values.convertToBoolean takes them
		{" true ", true}, {int64(1), true}, {int32(0), false}, {int64(2), nil},
	})
	checkCoercions(t, "toTime", toTime, []coerced{
		{coerceTime, coerceTime},
		{"2026-05-17T10:11:12.345678912Z", coerceTime},
		{"2026-05-17T12:11:12.345678912+02:00", coerceTime.In(time.FixedZone("", 2*3600))},
		{"2026-05-17T10:11:12.345678912", coerceTime},
		{"2026-05-17 10:11:12.345678912", coerceTime},
		{"2026-05-17 12:11:12.345678912+02:00", coerceTime.In(time.FixedZone("", 2*3600))},
		{"2026-05-17", time.Date(2026, 5, 17, 0, 0, 0, 0, time.UTC)},
		{"17/05/2026", nil}, {"", nil},
		{coerceTime.UnixMilli(), coerceTime.Truncate(time.Millisecond)},
		{json.Number("0"), time.UnixMilli(0).UTC()}, {true, nil},
		{float32(1.5), time.UnixMilli(1).UTC()},
	})
	checkCoercions(t, "toDays", toDays, []coerced{
		{time.Date(2026, 5, 17, 0, 0, 0, 0, time.UTC), int32(20590)},
		{time.Date(2026, 5, 17, 23, 0, 0, 0, time.UTC), int32(20590)},
		// a time's date in UTC, not in its own zone
		{time.Date(2026, 5, 17, 23, 0, 0, 0, time.FixedZone("", -5*3600)), int32(20591)},
		{time.Date(1969, 12, 31, 12, 0, 0, 0, time.UTC), int32(-1)},
		{"2026-05-17", int32(20590)}, {"2026-05-17T23:00:00-05:00", int32(20591)}, {"x", nil},
		{int32(20590), int32(20590)}, {int64(20590), int32(20590)}, {"20590", nil}, {true, nil},
		// days beyond int32 wrap, as the builder has always written them
		{int64(math.MaxInt32) + 1, int32(math.MinInt32)},
	})
	checkCoercions(t, "toTimeMicros", toTimeMicros, []coerced{
		{time.Date(1970, 1, 1, 10, 11, 12, 345678912, time.UTC), int64(36672345678)},
		{10*time.Hour + 11*time.Minute + 12*time.Second + 345678912*time.Nanosecond, int64(36672345678)},
		// TIME '24:00:00' (PostgreSQL) and negative durations pass as they are
		{24 * time.Hour, int64(86400000000)}, {-time.Second, int64(-1000000)},
		{"10:11:12.345678", int64(36672345678)}, {"10:11", nil},
		// an integer is microseconds (Iceberg's unit), not Values.convertToTime's milliseconds
		{int64(36672345678), int64(36672345678)}, {json.Number("5"), int64(5)}, {true, nil},
	})
	dec := func(s string, scale int32) func(any) (string, error) {
		return func(v any) (string, error) {
			n, err := toDecimal(v, scale)
			if err != nil {
				return "", err
			}
			return n.ToString(scale), nil
		}
	}
	checkCoercions(t, "toDecimal(2)", dec("", 2), []coerced{
		{Decimal{Unscaled: big.NewInt(12345), Scale: 2}, "123.45"},
		{Decimal{Unscaled: big.NewInt(12345), Scale: 0}, "12345.00"},
		// more digits than the column's scale: truncated toward zero
		{Decimal{Unscaled: big.NewInt(123456), Scale: 3}, "123.45"},
		{Decimal{Unscaled: big.NewInt(-123456), Scale: 3}, "-123.45"},
		{big.NewRat(1, 3), "0.33"}, {"12.3", "12.30"}, {json.Number("-0.5"), "-0.50"},
		{1.25, "1.25"}, {int64(7), "7.00"}, {int32(-7), "-7.00"}, {"abc", nil}, {true, nil},
		{float32(2.75), "2.00"},
	})
	checkCoercions(t, "toBytes", toBytes, []coerced{
		{[]byte{1, 2}, []byte{1, 2}}, {"AQI=", []byte{1, 2}}, {"not base64!", []byte("not base64!")}, {int64(1), nil},
	})
	checkCoercions(t, "ToString", func(v any) (string, error) { return ToString(v), nil }, []coerced{
		{"s", "s"}, {[]byte("b"), "b"}, {coerceTime, "2026-05-17T10:11:12.345678912Z"},
		{map[string]any{"a": int64(1)}, `{"a":1}`}, {[]any{"x", 2.5}, `["x",2.5]`},
		{Decimal{Unscaled: big.NewInt(-5), Scale: 2}, "-0.05"}, {int64(3), "3"}, {1.5, "1.5"}, {true, "true"},
		{json.Number("1e2"), "1e2"},
	})
}
