package icerow

import (
	"strconv"
	"strings"
)

// CloneRow copies a row's top level.
func CloneRow(r Row) Row {
	out := make(Row, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// FieldPath reads a dotted path from a row.
func FieldPath(row map[string]any, path string) (any, bool) {
	var cur any = row
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// KeyOf is the key of row r in a table keyed by the columns ids: their values joined by NUL, integers
// of any width as one (KeyShape.Read makes the same key from a JSON object's bytes).
func KeyOf(r Row, ids []string) string { return string(AppendKey(nil, r, ids)) }

// AppendKey appends KeyOf(r, ids) to dst.
func AppendKey(dst []byte, r Row, ids []string) []byte {
	for i, c := range ids {
		if i > 0 {
			dst = append(dst, 0)
		}
		v := r[c]
		switch x := v.(type) {
		case string:
			dst = append(dst, x...)
		case nil:
			dst = append(dst, "\x01null"...)
		default:
			// normalise integer widths so 1 (int32) and 1 (int64) are one key
			if n, err := ToInt64(x); err == nil {
				if _, isF := x.(float64); !isF {
					dst = strconv.AppendInt(dst, n, 10)
					continue
				}
			}
			dst = append(dst, ToString(x)...)
		}
	}
	return dst
}
