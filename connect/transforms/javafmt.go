package transforms

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// javaToString is String.valueOf for a Connect value (Cast to string, headers, routers).
func javaToString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float32:
		return connect.JavaDouble(float64(x), 32)
	case float64:
		return connect.JavaDouble(x, 64)
	case bool:
		return strconv.FormatBool(x)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return formatDateISO(x)
	case connect.Decimal:
		return connect.JavaBigDecimalString(x)
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
