package transforms

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// javaDouble renders a float as Java's Double.toString (bits=64) or Float.toString (bits=32).
func javaDouble(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(f)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // 1.234E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	exp = strings.TrimPrefix(exp, "+")
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(strings.TrimPrefix(exp, "-"), "0")
	if exp == "" {
		exp = "0"
	}
	if neg {
		exp = "-" + exp
	}
	return mant + "E" + exp
}

// javaToString is String.valueOf for a Connect value (Cast to string, headers, routers).
func javaToString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float32:
		return javaDouble(float64(x), 32)
	case float64:
		return javaDouble(x, 64)
	case bool:
		return strconv.FormatBool(x)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return formatDateISO(x)
	case connect.Decimal:
		return javaBigDecimalString(x)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	}
	return connectValueString(v)
}

// formatDateISO is Values.dateFormatFor(date).format(date) in UTC.
func formatDateISO(t time.Time) string {
	ms := t.UnixMilli()
	t = t.UTC()
	switch {
	case ms < 86400000:
		return t.Format("15:04:05.000Z")
	case ms%86400000 == 0:
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

// javaBigDecimalString is BigDecimal.toString (scientific notation when the exponent is small).
func javaBigDecimalString(d connect.Decimal) string {
	if d.Unscaled == nil {
		return "0"
	}
	digits := d.Unscaled.String()
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	adjusted := -int64(d.Scale) + int64(len(digits)-1)
	if d.Scale >= 0 && adjusted >= -6 {
		return d.String()
	}
	out := digits[:1]
	if len(digits) > 1 {
		out += "." + digits[1:]
	}
	out += "E"
	if adjusted >= 0 {
		out += "+"
	}
	out += strconv.FormatInt(adjusted, 10)
	if neg {
		out = "-" + out
	}
	return out
}

// connectValueString approximates Java's toString of Lists, Maps and Structs.
func connectValueString(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaToString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, k+"="+javaToString(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *connect.Struct:
		return x.String()
	}
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(fmtAny(v)), "\n"))
}
