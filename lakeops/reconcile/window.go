package reconcile

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// windowFilter is a rebuild window on one compared column: an SQL condition for the ClickHouse rows and a
// test for the Iceberg rows, both over the column's canonical value.
type windowFilter struct {
	m        mapping
	numeric  bool
	from, to string // canonical bounds; "" = open
	sql      string
}

func (p *pair) newWindowFilter(w Window) (*windowFilter, error) {
	var m *mapping
	for i := range p.cols {
		if p.cols[i].Name == w.Column {
			m = &p.cols[i]
		}
	}
	if m == nil {
		return nil, fmt.Errorf("%s=%s: not a column of both tables", KeyWindowColumn, w.Column)
	}
	f := &windowFilter{m: *m}
	col := quoteIdent(m.Name)
	var x string
	switch m.kind {
	case kindInt:
		f.numeric, x = true, col
	case kindDate:
		f.numeric, x = true, "toInt32("+col+")"
	case kindTimestamp:
		f.numeric = true
		if m.ch.Name == "DateTime64" {
			x = "toUnixTimestamp64Micro(" + col + ")"
		} else {
			x = "toInt64(toUnixTimestamp(" + col + ")) * 1000000"
		}
	case kindString:
		x = "toString(" + col + ")"
	default:
		return nil, fmt.Errorf("%s=%s: a window needs an integer, date, timestamp or string column, not %s", KeyWindowColumn, w.Column, m.kind)
	}
	bound := func(s string) (string, error) {
		if s == "" {
			return "", nil
		}
		switch m.kind {
		case kindInt:
			if _, ok := new(big.Int).SetString(s, 10); !ok {
				return "", fmt.Errorf("window bound %q: not an integer", s)
			}
			return s, nil
		case kindDate:
			t, err := time.Parse("2006-01-02", s)
			if err != nil {
				return "", fmt.Errorf("window bound %q: want 2006-01-02", s)
			}
			return strconv.FormatInt(floorDiv(t.Unix(), 86400), 10), nil
		case kindTimestamp:
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return "", fmt.Errorf("window bound %q: want RFC 3339 (2006-01-02T15:04:05Z)", s)
			}
			return strconv.FormatInt(t.UnixMicro(), 10), nil
		}
		return s, nil
	}
	var err error
	if f.from, err = bound(w.From); err != nil {
		return nil, err
	}
	if f.to, err = bound(w.To); err != nil {
		return nil, err
	}
	lit := func(s string) string {
		if f.numeric {
			return s
		}
		return quoteString(s)
	}
	cond := "1"
	if f.from != "" {
		cond += " AND " + x + " >= " + lit(f.from)
	}
	if f.to != "" {
		cond += " AND " + x + " < " + lit(f.to)
	}
	f.sql = "ifNull(" + cond + ", 0)"
	return f, nil
}

// contains reports whether an Iceberg row lies in the window (a null never does).
func (f *windowFilter) contains(row map[string]any) (bool, error) {
	v := row[f.m.Name]
	if v == nil {
		return false, nil
	}
	t, err := f.m.fromIceberg(v)
	if err != nil {
		return false, err
	}
	compare := func(a, b string) int {
		if f.numeric {
			x, _ := new(big.Int).SetString(a, 10)
			y, _ := new(big.Int).SetString(b, 10)
			return x.Cmp(y)
		}
		return strings.Compare(a, b)
	}
	if f.from != "" && compare(t, f.from) < 0 {
		return false, nil
	}
	if f.to != "" && compare(t, f.to) >= 0 {
		return false, nil
	}
	return true, nil
}
