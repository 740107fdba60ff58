package icerow

import (
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
