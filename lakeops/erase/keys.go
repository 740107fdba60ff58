package erase

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// Key is one key to erase: the value of each key column, as given.
type Key struct {
	Values map[string]string
}

// ParseKey reads a key as given on the command line or in a keys file: the value of a single key
// column, or a JSON object of the key columns' values for a composite key.
func ParseKey(s string, columns []string) (Key, error) {
	s = strings.TrimSpace(s)
	k := Key{Values: map[string]string{}}
	if strings.HasPrefix(s, "{") {
		m, err := keyObject(s)
		if err != nil {
			return k, fmt.Errorf("key %s: %w", s, err)
		}
		for _, c := range columns {
			v, ok := m[c]
			if !ok {
				return k, fmt.Errorf("key %s: no value for key column %s", s, c)
			}
			k.Values[c] = v
		}
		if len(m) != len(columns) {
			return k, fmt.Errorf("key %s: want exactly the key columns %s", s, strings.Join(columns, ","))
		}
		return k, nil
	}
	if len(columns) != 1 {
		return k, fmt.Errorf("key %q: the key has columns %s: give it as a JSON object", s, strings.Join(columns, ","))
	}
	if s == "" {
		return k, fmt.Errorf("empty key")
	}
	k.Values[columns[0]] = s
	return k, nil
}

// ReadKeys reads one key per line (blank lines and lines starting with # are skipped).
func ReadKeys(r io.Reader, columns []string) ([]Key, error) {
	var out []Key
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 1
	for ; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := ParseKey(line, columns)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n, err)
	}
	return out, nil
}

// Text is the key for display: the single value, else col=value pairs.
func (k Key) Text(columns []string) string {
	if len(columns) == 1 {
		return k.Values[columns[0]]
	}
	parts := make([]string, len(columns))
	for i, c := range columns {
		parts[i] = c + "=" + k.Values[c]
	}
	return strings.Join(parts, ",")
}

// literal converts a key value to the Iceberg literal of the column's type.
func literal(typ ice.Type, col, v string) (ice.BooleanExpression, error) {
	ref := ice.Reference(col)
	switch typ.(type) {
	case ice.StringType:
		return ice.EqualTo(ref, v), nil
	case ice.Int32Type:
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: not an int", col, v)
		}
		return ice.EqualTo(ref, int32(n)), nil
	case ice.Int64Type:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: not a long", col, v)
		}
		return ice.EqualTo(ref, n), nil
	case ice.UUIDType:
		u, err := uuid.Parse(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: not a uuid", col, v)
		}
		return ice.EqualTo(ref, u), nil
	}
	return nil, fmt.Errorf("key column %s has type %s: erase takes string, int, long and uuid keys", col, typ)
}

// keyFilter is the Iceberg filter matching any of keys on the columns (types from the schema).
func keyFilter(sc *ice.Schema, columns []string, keys []Key) (ice.BooleanExpression, error) {
	var any ice.BooleanExpression = ice.AlwaysFalse{}
	for _, k := range keys {
		var all ice.BooleanExpression = ice.AlwaysTrue{}
		for _, c := range columns {
			f, ok := sc.FindFieldByName(c)
			if !ok {
				return nil, fmt.Errorf("no column %s", c)
			}
			e, err := literal(f.Type, c, k.Values[c])
			if err != nil {
				return nil, err
			}
			all = ice.NewAnd(all, e)
		}
		any = ice.NewOr(any, all)
	}
	return any, nil
}

// jsonValue is the key value as the sink writes it in JSON (history primary_key, payloads): a number
// for numeric columns, else a string.
func jsonValue(sc *ice.Schema, col, v string) any {
	if f, ok := sc.FindFieldByName(col); ok {
		switch f.Type.(type) {
		case ice.Int32Type, ice.Int64Type:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return v
}

// historyKey is the raw history's primary_key of the key: the JSON of the record key's columns.
func historyKey(sc *ice.Schema, columns []string, k Key) string {
	m := map[string]any{}
	for _, c := range columns {
		m[c] = jsonValue(sc, c, k.Values[c])
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// matcher tells whether a cell's text holds one of a key's values: equal to it, or, in JSON text, the
// value as a JSON string or number.
type matcher struct {
	value string
	quote string         // the JSON string of value
	num   *regexp.Regexp // the value as a JSON number inside JSON text, for numeric values
}

func newMatcher(v string) matcher {
	q, _ := json.Marshal(v)
	m := matcher{value: v, quote: string(q)}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		m.num = regexp.MustCompile(`[:\[,]\s*` + regexp.QuoteMeta(v) + `\s*[,\]}]`)
	}
	return m
}

func (m matcher) in(cell string) bool {
	if cell == m.value {
		return true
	}
	if strings.Contains(cell, m.quote) {
		return true
	}
	return m.num != nil && strings.ContainsAny(cell, "{[") && m.num.MatchString(cell)
}

// historyFilter matches the raw history rows of the keys: primary_key is the JSON of the record key.
func historyFilter(sc *ice.Schema, columns []string, keys []Key) (ice.BooleanExpression, error) {
	var any ice.BooleanExpression = ice.AlwaysFalse{}
	for _, k := range keys {
		any = ice.NewOr(any, ice.EqualTo(ice.Reference("primary_key"), historyKey(sc, columns, k)))
	}
	return any, nil
}

// scdFilter matches the SCD rows of the keys on the SCD table's key column: the key column's value for a
// single-column key, the JSON of the key for a composite one.
func scdFilter(scd, cur *ice.Schema, col string, columns []string, keys []Key) (ice.BooleanExpression, error) {
	f, ok := scd.FindFieldByName(col)
	if !ok {
		return nil, fmt.Errorf("the SCD table has no column %s (%s)", col, KeySCDKeyColumn)
	}
	var any ice.BooleanExpression = ice.AlwaysFalse{}
	for _, k := range keys {
		v := historyKey(cur, columns, k)
		if len(columns) == 1 {
			v = k.Values[columns[0]]
		}
		e, err := literal(f.Type, col, v)
		if err != nil {
			return nil, err
		}
		any = ice.NewOr(any, e)
	}
	return any, nil
}

// keyObject reads a key given as one JSON object of scalar members. A nested value, a null, a name given twice
// or anything after the object is refused: a key that matches no row would erase nothing without a word.
func keyObject(s string) (map[string]string, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if _, err := d.Token(); err != nil { // '{': the caller saw it
		return nil, err
	}
	m := map[string]string{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("column %s given twice", name)
		}
		if t, err = d.Token(); err != nil {
			return nil, err
		}
		switch v := t.(type) {
		case string:
			m[name] = v
		case json.Number:
			m[name] = v.String()
		case bool:
			m[name] = fmt.Sprint(v)
		case nil:
			return nil, fmt.Errorf("no value for key column %s", name)
		default:
			return nil, fmt.Errorf("column %s: want a string, a number or a boolean", name)
		}
	}
	if _, err := d.Token(); err != nil { // '}'
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON object")
	}
	return m, nil
}
