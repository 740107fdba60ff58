package values

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
)

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

type customInt int

func TestToLong(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 10_000_000, time.UTC)
	for _, c := range []struct {
		in   any
		want int64
		err  string
	}{
		{int8(-8), -8, ""},
		{int16(16), 16, ""},
		{int32(-32), -32, ""},
		{int64(math.MaxInt64), math.MaxInt64, ""},
		{int(7), 7, ""},
		{uint8(255), 255, ""},
		{uint16(65535), 65535, ""},
		{uint32(math.MaxUint32), math.MaxUint32, ""},
		{uint64(math.MaxInt64), math.MaxInt64, ""},
		{uint(3), 3, ""},
		{uint64(math.MaxInt64 + 1), 0, "Unable to convert 9223372036854775808 (uint64) to long: out of range"},
		{float64(42), 42, ""},
		{float64(-1e18), -1e18, ""},
		{float32(3), 3, ""},
		{1.5, 0, "Unable to convert 1.5 (float64) to long: not an integer"},
		{float32(2.5), 0, "Unable to convert 2.5 (float32) to long: not an integer"},
		{math.NaN(), 0, "Unable to convert NaN (float64) to long: not an integer"},
		{math.Inf(1), 0, "Unable to convert +Inf (float64) to long: out of range"},
		{9.3e18, 0, "Unable to convert 9.3e+18 (float64) to long: out of range"},
		{json.Number("123"), 123, ""},
		{json.Number("1.5"), 0, "Unable to convert 1.5 (json.Number) to long: not a number"},
		{" -77 ", -77, ""},
		{"9223372036854775808", 0, "Unable to convert 9223372036854775808 (string) to long: out of range"},
		{"abc", 0, "Unable to convert abc (string) to long: not a number"},
		{"", 0, "Unable to convert  (string) to long: not a number"},
		{NewDecimal(1200, 2), 12, ""},
		{NewDecimal(1234, 2), 0, "Unable to convert 12.34 (values.Decimal) to long: not an integer"},
		{Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(1), 70)}, 0, "Unable to convert 1180591620717411303424 (values.Decimal) to long: out of range"},
		{Decimal{}, 0, ""},
		{ts, ts.UnixMilli(), ""},
		{true, 0, "Unable to convert true (bool) to long"},
		{customInt(1), 0, "Unable to convert 1 (values.customInt) to long"},
		{[]byte{1}, 0, "Unable to convert [1] ([]uint8) to long"},
		{nil, 0, "Unable to convert <nil> (<nil>) to long"},
	} {
		got, err := ToLong(c.in)
		if got != c.want || errText(err) != c.err {
			t.Errorf("ToLong(%#v) = %d, %q; want %d, %q", c.in, got, errText(err), c.want, c.err)
		}
		var ve *Error
		if err != nil && !errors.As(err, &ve) {
			t.Errorf("ToLong(%#v): error %T is not a *values.Error", c.in, err)
		}
	}
}

func TestInteger(t *testing.T) {
	for _, c := range []struct {
		in   any
		want int64
		ok   bool
	}{
		{int8(1), 1, true}, {int16(2), 2, true}, {int32(3), 3, true}, {int64(4), 4, true}, {int(5), 5, true},
		{uint8(6), 6, true}, {uint16(7), 7, true}, {uint32(8), 8, true}, {uint64(9), 9, true}, {uint(10), 10, true},
		{uint64(math.MaxUint64), 0, false}, {1.0, 0, false}, {"1", 0, false}, {json.Number("1"), 0, false}, {nil, 0, false},
	} {
		got, ok := Integer(c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("Integer(%#v) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestToInt(t *testing.T) {
	for _, c := range []struct {
		in   any
		want int32
		err  string
	}{
		{int64(math.MaxInt32), math.MaxInt32, ""},
		{"-2147483648", math.MinInt32, ""},
		{int64(math.MaxInt32 + 1), 0, "Unable to convert 2147483648 (int64) to int: out of range"},
		{"x", 0, "Unable to convert x (string) to int: not a number"},
		{2.0, 2, ""},
	} {
		got, err := ToInt(c.in)
		if got != c.want || errText(err) != c.err {
			t.Errorf("ToInt(%#v) = %d, %q; want %d, %q", c.in, got, errText(err), c.want, c.err)
		}
	}
}

func TestToDouble(t *testing.T) {
	for _, c := range []struct {
		in   any
		want float64
		err  string
	}{
		{1.25, 1.25, ""},
		{float32(0.5), 0.5, ""},
		{int32(-3), -3, ""},
		{uint64(math.MaxUint64), math.MaxUint64, ""},
		{uint(4), 4, ""},
		{json.Number("1e3"), 1000, ""},
		{" 2.5 ", 2.5, ""},
		{NewDecimal(-125, 2), -1.25, ""},
		{Decimal{}, 0, ""},
		{"1e400", 0, "Unable to convert 1e400 (string) to double: out of range"},
		{"one", 0, "Unable to convert one (string) to double: not a number"},
		{true, 0, "Unable to convert true (bool) to double"},
		{time.Time{}, 0, "Unable to convert 0001-01-01 00:00:00 +0000 UTC (time.Time) to double"},
	} {
		got, err := ToDouble(c.in)
		if got != c.want || errText(err) != c.err {
			t.Errorf("ToDouble(%#v) = %v, %q; want %v, %q", c.in, got, errText(err), c.want, c.err)
		}
	}
}

func TestToBoolean(t *testing.T) {
	for _, c := range []struct {
		in   any
		want bool
		err  string
	}{
		{true, true, ""},
		{" false ", false, ""},
		{"TRUE", true, ""},
		{"1", true, ""},
		{int64(0), false, ""},
		{uint8(1), true, ""},
		{1.0, true, ""},
		{json.Number("0"), false, ""},
		{int32(2), false, "Unable to convert 2 (int32) to boolean"},
		{"yes", false, "Unable to convert yes (string) to boolean"},
		{0.5, false, "Unable to convert 0.5 (float64) to boolean"},
		{[]any{}, false, "Unable to convert [] ([]interface {}) to boolean"},
	} {
		got, err := ToBoolean(c.in)
		if got != c.want || errText(err) != c.err {
			t.Errorf("ToBoolean(%#v) = %v, %q; want %v, %q", c.in, got, errText(err), c.want, c.err)
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
		ok   bool
	}{
		{"text", "text", true},
		{[]byte("raw"), "raw", true},
		{true, "true", true},
		{int8(-1), "-1", true},
		{uint64(math.MaxUint64), "18446744073709551615", true},
		{uint(9), "9", true},
		{0.1, "0.1", true},
		{1e21, "1e+21", true},
		{float32(0.1), "0.1", true},
		{json.Number("1.50"), "1.50", true},
		{NewDecimal(-5, 3), "-0.005", true},
		{time.Date(2024, 1, 2, 3, 4, 5, 600, time.FixedZone("X", 3600)), "2024-01-02T02:04:05.0000006Z", true},
		{map[string]any{}, "", false},
		{nil, "", false},
	} {
		got, ok := AppendString([]byte(">"), c.in)
		if ok != c.ok || (ok && string(got) != ">"+c.want) || (!ok && string(got) != ">") {
			t.Errorf("AppendString(%#v) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestToDecimal(t *testing.T) {
	for _, c := range []struct {
		in    any
		scale int32
		want  string
		err   string
	}{
		{NewDecimal(1234, 2), 4, "12.3400", ""},
		{"12.5", 2, "12.50", ""},
		{" -1E+3 ", 0, "-1000", ""},
		{json.Number("0.125"), 3, "0.125", ""},
		{0.1, 2, "0.10", ""},
		{float32(0.5), 1, "0.5", ""},
		{int64(7), 2, "7.00", ""},
		{uint16(7), 0, "7", ""},
		{Decimal{}, 2, "0.00", ""},
		{"12.345", 2, "", "Unable to convert 12.345 (string) to decimal of scale 2: digits would be lost"},
		{0.125, 2, "", "Unable to convert 0.125 (float64) to decimal of scale 2: digits would be lost"},
		{"x", 2, "", "Unable to convert x (string) to decimal: not a number"},
		{math.NaN(), 2, "", "Unable to convert NaN (float64) to decimal"},
		{[]byte{1}, 2, "", "Unable to convert [1] ([]uint8) to decimal: decimal bytes need a Decimal schema"},
		{true, 2, "", "Unable to convert true (bool) to decimal"},
		{"1e9999999", 2, "", "Unable to convert 1e9999999 (string) to decimal of scale 2: out of range"},
		{"1e-9999999", 2, "", "Unable to convert 1e-9999999 (string) to decimal of scale 2: out of range"},
		{"1e1000", 2, "1" + strings.Repeat("0", 1000) + ".00", ""},
	} {
		got, err := ToDecimal(c.in, c.scale)
		if errText(err) != c.err || (err == nil && (got.String() != c.want || got.Scale != c.scale)) {
			t.Errorf("ToDecimal(%#v, %d) = %v, %q; want %s, %q", c.in, c.scale, got, errText(err), c.want, c.err)
		}
	}
}

func TestToTimestamp(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	for _, c := range []struct {
		in   any
		loc  *time.Location
		want time.Time
		err  string
	}{
		{time.Date(2024, 1, 2, 3, 4, 5, 0, berlin), time.UTC, time.Date(2024, 1, 2, 3, 4, 5, 0, berlin), ""},
		{"2024-01-02T03:04:05.123Z", time.UTC, time.Date(2024, 1, 2, 3, 4, 5, 123e6, time.UTC), ""},
		{" 2024-01-02 03:04:05+01:00 ", time.UTC, time.Date(2024, 1, 2, 2, 4, 5, 0, time.UTC), ""},
		{"2024-01-02T03:04:05", berlin, time.Date(2024, 1, 2, 3, 4, 5, 0, berlin), ""},
		{"2024-01-02 03:04:05.5", time.UTC, time.Date(2024, 1, 2, 3, 4, 5, 5e8, time.UTC), ""},
		{"2024-01-02", time.UTC, time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), ""},
		{int64(1_700_000_000_123), time.UTC, time.UnixMilli(1_700_000_000_123).UTC(), ""},
		{"1700000000123", time.UTC, time.Time{}, "Unable to convert 1700000000123 (string) to timestamp"},
		{"02/01/2024", time.UTC, time.Time{}, "Unable to convert 02/01/2024 (string) to timestamp"},
		{1.5, time.UTC, time.Time{}, "Unable to convert 1.5 (float64) to timestamp"},
	} {
		got, err := ToTimestamp(c.in, c.loc)
		if errText(err) != c.err || !got.Equal(c.want) {
			t.Errorf("ToTimestamp(%#v) = %v, %q; want %v, %q", c.in, got, errText(err), c.want, c.err)
		}
	}
}

func TestToDate(t *testing.T) {
	for _, c := range []struct {
		in   any
		want int64
		err  string
	}{
		{time.Date(1970, 1, 2, 23, 0, 0, 0, time.UTC), 1, ""},
		{time.Date(1970, 1, 2, 23, 0, 0, 0, time.FixedZone("X", -5*3600)), 1, ""}, // its own calendar date
		{time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), -1, ""},
		{"2024-01-02", 19724, ""},
		{"2024-01-02T23:59:59Z", 19724, ""},
		{int32(19724), 19724, ""},
		{"soon", 0, "Unable to convert soon (string) to date"},
		{false, 0, "Unable to convert false (bool) to date"},
	} {
		got, err := ToDate(c.in)
		if got != c.want || errText(err) != c.err {
			t.Errorf("ToDate(%#v) = %d, %q; want %d, %q", c.in, got, errText(err), c.want, c.err)
		}
	}
}

func TestToTime(t *testing.T) {
	for _, c := range []struct {
		in   any
		want time.Duration
		err  string
	}{
		{time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC), 3*time.Hour + 4*time.Minute + 5*time.Second + 6*time.Microsecond, ""},
		{90 * time.Minute, 90 * time.Minute, ""},
		{"13:14:15.5", 13*time.Hour + 14*time.Minute + 15*time.Second + 500*time.Millisecond, ""},
		{int32(1500), 1500 * time.Millisecond, ""},
		{int64(MillisPerDay), 0, "Unable to convert 86400000 (int64) to time"},
		{-time.Second, 0, "Unable to convert -1s (time.Duration) to time: out of range"},
		{25 * time.Hour, 0, "Unable to convert 25h0m0s (time.Duration) to time: out of range"},
		{"25:00:00", 0, "Unable to convert 25:00:00 (string) to time"},
	} {
		got, err := ToTime(c.in)
		if got != c.want || errText(err) != c.err {
			t.Errorf("ToTime(%#v) = %v, %q; want %v, %q", c.in, got, errText(err), c.want, c.err)
		}
	}
}
