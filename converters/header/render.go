package header

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
)

// appendValue is Values.append(StringBuilder, value, embedded), the body of Values.convertToString.
func appendValue(b []byte, v any, embedded bool) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		if !embedded {
			return append(b, x...), nil
		}
		b = append(b, '"')
		for i := 0; i < len(x); i++ {
			if c := x[i]; c == '\\' || c == '"' {
				b = append(b, '\\', c)
			} else {
				b = append(b, c)
			}
		}
		return append(b, '"'), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case float32:
		return connect.AppendJavaDouble(b, float64(x), 32), nil
	case float64:
		return connect.AppendJavaDouble(b, x, 64), nil
	case connect.Decimal:
		return append(b, connect.JavaBigDecimalString(x)...), nil
	case *big.Int:
		return x.Append(b, 10), nil
	case []byte:
		if embedded {
			b = append(b, '"')
		}
		b = base64.StdEncoding.AppendEncode(b, x)
		if embedded {
			b = append(b, '"')
		}
		return b, nil
	case time.Time:
		return appendJavaDate(b, x.UnixMilli()), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e, true); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[any]any:
		ents := make([]renderedEntry, 0, len(x))
		for k, e := range x {
			kb, err := appendValue(nil, k, true)
			if err != nil {
				return nil, err
			}
			ents = append(ents, renderedEntry{kb, e})
		}
		return appendEntries(b, ents)
	case map[string]any:
		ents := make([]renderedEntry, 0, len(x))
		for k, e := range x {
			kb, _ := appendValue(nil, k, true)
			ents = append(ents, renderedEntry{kb, e})
		}
		return appendEntries(b, ents)
	case *connect.Struct:
		b = append(b, '{')
		for i, f := range x.Schema().Fields() {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = appendValue(b, f.Name, true)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, x.GetIndex(f.Index), true); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("Failed to serialize unexpected value type %T: %v", v, v)
}

type renderedEntry struct {
	key []byte
	val any
}

// appendEntries writes {k:v,...}. Go maps have no order, so entries are sorted by their rendered key (the JVM
// writes a LinkedHashMap in insertion order).
func appendEntries(b []byte, ents []renderedEntry) ([]byte, error) {
	sort.Slice(ents, func(i, j int) bool { return string(ents[i].key) < string(ents[j].key) })
	b = append(b, '{')
	for i, e := range ents {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.key...)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, e.val, true); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
