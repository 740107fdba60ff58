// Package values converts the loosely typed values sinks and transforms receive (Connect data, schemaless
// JSON from any converter) to the types a column or a Connect logical type needs, and holds the logical
// types' Go values and wire forms. It follows the JVM's org.apache.kafka.connect.data.Values
// (convertToLong, convertToInteger, convertToDouble, convertToBoolean, convertToString, convertToDecimal,
// convertToDate, convertToTime, convertToTimestamp) with one difference on purpose: nothing is truncated,
// wrapped or rounded silently; a value that does not convert exactly is an *Error, so that a record a sink
// cannot map goes to the error handler instead of corrupting a row.
package values

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Error is a value that does not convert: the JVM's "Unable to convert <value> (<type>) to <target>".
type Error struct {
	Value any
	To    string // long, int, double, boolean, string, decimal, date, time, timestamp
	Err   error  // why, when more than the type says it (a parse error, a range)
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("Unable to convert %v (%T) to %s", e.Value, e.Value, e.To)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

func fail(v any, to string, err error) error { return &Error{Value: v, To: to, Err: err} }

var (
	errRange       = fmt.Errorf("out of range")
	errNotIntegral = fmt.Errorf("not an integer")
)

// Integer is v as an int64 when v is one of Go's integer types and fits; it parses nothing.
func Integer(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case uint:
		return int64(x), uint64(x) <= math.MaxInt64
	}
	return 0, false
}

// ToLong is convertToLong: integers, integral floats in range, json.Number and decimal text (surrounding
// space ignored), a Decimal with an integral value in range, and a time.Time as epoch milliseconds (a
// Timestamp's long). Booleans are not numbers here, as in the JVM.
func ToLong(v any) (int64, error) {
	if n, ok := Integer(v); ok {
		return n, nil
	}
	switch x := v.(type) {
	case float64:
		return floatToLong(v, x)
	case float32:
		return floatToLong(v, float64(x))
	case json.Number:
		return parseLong(v, string(x))
	case string:
		return parseLong(v, x)
	case Decimal:
		if x.Unscaled == nil {
			return 0, nil
		}
		d, err := x.Rescale(0)
		if err != nil {
			return 0, fail(v, "long", errNotIntegral)
		}
		if !d.Unscaled.IsInt64() {
			return 0, fail(v, "long", errRange)
		}
		return d.Unscaled.Int64(), nil
	case time.Time:
		return x.UnixMilli(), nil
	case uint64, uint:
		return 0, fail(v, "long", errRange)
	}
	return 0, fail(v, "long", nil)
}

func floatToLong(v any, f float64) (int64, error) {
	if f != math.Trunc(f) { // NaN included; ±Inf fail the range
		return 0, fail(v, "long", errNotIntegral)
	}
	if f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
		return 0, fail(v, "long", errRange)
	}
	return int64(f), nil
}

func parseLong(v any, s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fail(v, "long", numError(err))
	}
	return n, nil
}

// numError is the reason of a strconv error without its repetition of the input.
func numError(err error) error {
	if ne, ok := err.(*strconv.NumError); ok {
		if ne.Err == strconv.ErrRange {
			return errRange
		}
		return fmt.Errorf("not a number")
	}
	return err
}

// ToInt is convertToInteger: ToLong within int32's range.
func ToInt(v any) (int32, error) {
	n, err := ToLong(v)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.To = "int"
		}
		return 0, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fail(v, "int", errRange)
	}
	return int32(n), nil
}

// ToDouble is convertToDouble: floats, integers, json.Number and numeric text (surrounding space ignored),
// and a Decimal (rounded to the nearest double).
func ToDouble(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case json.Number:
		return parseDouble(v, string(x))
	case string:
		return parseDouble(v, x)
	case Decimal:
		if x.Unscaled == nil {
			return 0, nil
		}
		return x.Float64(), nil
	case uint64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	}
	if n, ok := Integer(v); ok {
		return float64(n), nil
	}
	return 0, fail(v, "double", nil)
}

func parseDouble(v any, s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fail(v, "double", numError(err))
	}
	return f, nil
}

// ToBoolean is convertToBoolean: a bool, boolean text as strconv.ParseBool reads it (surrounding space
// ignored), or the integers 0 and 1 (and their other numeric forms).
func ToBoolean(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		if err != nil {
			return false, fail(v, "boolean", nil)
		}
		return b, nil
	}
	n, err := ToLong(v)
	if err != nil || (n != 0 && n != 1) {
		return false, fail(v, "boolean", nil)
	}
	return n == 1, nil
}

// AppendString is convertToString for scalars, appended to dst: text and bytes as they are, booleans and
// numbers in their plain form (floats in the shortest form that reads back, a Decimal as
// BigDecimal.toPlainString), a time.Time as RFC 3339 in UTC. ok is false for anything else (lists, maps,
// structs): how those render is the caller's choice.
func AppendString(dst []byte, v any) (out []byte, ok bool) {
	switch x := v.(type) {
	case string:
		return append(dst, x...), true
	case []byte:
		return append(dst, x...), true
	case bool:
		return strconv.AppendBool(dst, x), true
	case float64:
		return strconv.AppendFloat(dst, x, 'g', -1, 64), true
	case float32:
		return strconv.AppendFloat(dst, float64(x), 'g', -1, 32), true
	case json.Number:
		return append(dst, x...), true
	case Decimal:
		return append(dst, x.String()...), true
	case time.Time:
		return x.UTC().AppendFormat(dst, time.RFC3339Nano), true
	case uint64:
		return strconv.AppendUint(dst, x, 10), true
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), true
	}
	if n, ok := Integer(v); ok {
		return strconv.AppendInt(dst, n, 10), true
	}
	return dst, false
}

// ToDecimal is convertToDecimal at a scale: a Decimal, decimal text and json.Number (exponents allowed),
// floats by their shortest decimal form, and integers, rescaled to scale; digits beyond the scale are an
// error, not rounded. Bytes need the schema's scale: see DecimalFromBytes.
func ToDecimal(v any, scale int32) (Decimal, error) {
	var d Decimal
	switch x := v.(type) {
	case Decimal:
		d = x
	case string:
		p, err := ParseDecimal(x)
		if err != nil {
			return Decimal{}, fail(v, "decimal", fmt.Errorf("not a number"))
		}
		d = p
	case json.Number:
		return ToDecimal(string(x), scale)
	case float64, float32:
		f, _ := ToDouble(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return Decimal{}, fail(v, "decimal", nil)
		}
		p, err := ParseDecimal(strconv.FormatFloat(f, 'f', -1, 64))
		if err != nil {
			return Decimal{}, fail(v, "decimal", err)
		}
		d = p
	case []byte:
		return Decimal{}, fail(v, "decimal", fmt.Errorf("decimal bytes need a Decimal schema"))
	default:
		n, ok := Integer(v)
		if !ok {
			return Decimal{}, fail(v, "decimal", nil)
		}
		d = NewDecimal(n, 0)
	}
	if d.Unscaled == nil {
		return NewDecimal(0, scale), nil
	}
	if diff := int64(scale) - int64(d.Scale); diff > maxRescale || diff < -maxRescale {
		return Decimal{}, fail(v, fmt.Sprintf("decimal of scale %d", scale), errRange)
	}
	r, err := d.Rescale(scale)
	if err != nil {
		return Decimal{}, fail(v, fmt.Sprintf("decimal of scale %d", scale), fmt.Errorf("digits would be lost"))
	}
	return r, nil
}

// maxRescale bounds the powers of ten ToDecimal multiplies or divides by: "1e999999999" is a short text
// but a large number, and no decimal column holds more than 76 digits.
const maxRescale = 1024

// Layouts is what ToTimestamp reads text in, first match wins: RFC 3339 with a space or a T, with or
// without a zone, and a plain date.
var Layouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// ToTimestamp is convertToTimestamp: a time.Time as it is, text in one of Layouts (surrounding space
// ignored; a text without a zone is in loc), or a long (ToLong) as epoch milliseconds.
func ToTimestamp(v any, loc *time.Location) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		for _, l := range Layouts {
			if t, err := time.ParseInLocation(l, s, loc); err == nil {
				return t, nil
			}
		}
		return time.Time{}, fail(v, "timestamp", nil)
	}
	ms, err := ToLong(v)
	if err != nil {
		return time.Time{}, fail(v, "timestamp", nil)
	}
	return TimestampFromMillis(ms), nil
}

// ToDate is convertToDate as days since the epoch: a time.Time's calendar date (in its own location),
// text as ToTimestamp reads it in UTC, or a long (ToLong) as the days themselves.
func ToDate(v any) (int64, error) {
	switch x := v.(type) {
	case time.Time:
		y, m, d := x.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400, nil
	case string:
		t, err := ToTimestamp(x, time.UTC)
		if err != nil {
			return 0, fail(v, "date", nil)
		}
		return ToDate(t)
	}
	n, err := ToLong(v)
	if err != nil {
		return 0, fail(v, "date", nil)
	}
	return n, nil
}

// ToTime is convertToTime as the time since midnight: a time.Time's clock (in its own location), a
// time.Duration within a day, text "15:04:05[.fraction]", or a long (ToLong) as milliseconds (the Time
// wire value).
func ToTime(v any) (time.Duration, error) {
	var d time.Duration
	switch x := v.(type) {
	case time.Time:
		h, m, s := x.Clock()
		return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second +
			time.Duration(x.Nanosecond()), nil
	case time.Duration:
		d = x
	case string:
		t, err := time.Parse("15:04:05.999999999", strings.TrimSpace(x))
		if err != nil {
			return 0, fail(v, "time", nil)
		}
		return ToTime(t)
	default:
		ms, err := ToLong(v)
		if err != nil || ms < 0 || ms >= MillisPerDay {
			return 0, fail(v, "time", nil)
		}
		d = time.Duration(ms) * time.Millisecond
	}
	if d < 0 || d >= 24*time.Hour {
		return 0, fail(v, "time", errRange)
	}
	return d, nil
}
