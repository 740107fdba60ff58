package connect

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect/jvm"
)

// Rendering of Connect values the way the JVM prints them, shared by converters, SMTs and sinks that must
// produce the same text as their JVM counterparts.

// AppendJavaDouble appends Double.toString (bits 64) or Float.toString (bits 32) of f as JDK 17 prints it
// (jvm.AppendDouble): plain notation for 1e-3 <= |f| < 1e7, else d.dddEn.
func AppendJavaDouble(out []byte, f float64, bits int) []byte {
	return jvm.AppendDouble(out, f, bits == 32)
}

// JavaDouble is Double.toString (bits 64) or Float.toString (bits 32) of f.
func JavaDouble(f float64, bits int) string { return string(AppendJavaDouble(nil, f, bits)) }

// JavaBigDecimalString is java.math.BigDecimal.toString (jvm.BigDecimalString).
func JavaBigDecimalString(d Decimal) string { return jvm.BigDecimalString(d.Unscaled, int64(d.Scale)) }

// JavaString renders a Connect value as the JVM's Object.toString() would (Struct, List and Map forms
// included, map entries sorted); []byte has no useful JVM form ("[B@hash"), so it is written as its bytes.
// StringConverter and the file sink write values this way.
func JavaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case []byte:
		return string(x)
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
	case float32:
		return JavaDouble(float64(x), 32)
	case float64:
		return JavaDouble(x, 64)
	case bool:
		return strconv.FormatBool(x)
	case Decimal:
		return JavaBigDecimalString(x)
	case time.Time:
		return x.UTC().Format("Mon Jan 02 15:04:05 UTC 2006") // java.util.Date.toString in a UTC JVM
	case *Struct:
		var sb strings.Builder
		sb.WriteString("Struct{")
		first := true
		for _, f := range x.Schema().Fields() {
			fv := x.GetWithoutDefault(f.Name)
			if fv == nil {
				continue
			}
			if !first {
				sb.WriteByte(',')
			}
			first = false
			sb.WriteString(f.Name)
			sb.WriteByte('=')
			sb.WriteString(JavaString(fv))
		}
		sb.WriteByte('}')
		return sb.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = JavaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + JavaString(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[any]any:
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, JavaString(k)+"="+JavaString(e))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// JavaClassName is what the JVM's value.getClass().getName() gives for a Connect value.
func JavaClassName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case int8:
		return "java.lang.Byte"
	case int16:
		return "java.lang.Short"
	case int32:
		return "java.lang.Integer"
	case int64, int:
		return "java.lang.Long"
	case float32:
		return "java.lang.Float"
	case float64:
		return "java.lang.Double"
	case bool:
		return "java.lang.Boolean"
	case string:
		return "java.lang.String"
	case []byte:
		return "[B"
	case []any:
		return "java.util.ArrayList"
	case map[string]any, map[any]any:
		return "java.util.HashMap"
	case *Struct:
		return "org.apache.kafka.connect.data.Struct"
	case Decimal:
		return "java.math.BigDecimal"
	case time.Time:
		return "java.util.Date"
	}
	return fmt.Sprintf("%T", v)
}

// JavaDoubleToLong is Java's (long) cast of a double (Number.longValue of a Double): NaN is 0, values out of
// range saturate.
func JavaDoubleToLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
