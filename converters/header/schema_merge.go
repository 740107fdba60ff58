package header

import (
	"time"

	"github.com/connectd/connectd/connect"
)

// Values.SchemaMerger and convertTo: the common element schema of a parsed array or map, and each entry
// converted to it.

// schemaMerger is Values.SchemaMerger: common stays nil while only nulls were seen or once no common schema
// exists.
type schemaMerger struct {
	common       *connect.Schema
	incompatible bool
}

func (m *schemaMerger) merge(latest sv) {
	if latest.null || latest.schema == nil || m.incompatible {
		return
	}
	if m.common == nil {
		m.common = latest.schema
		return
	}
	m.common = mergeSchemas(m.common, latest.schema)
	m.incompatible = m.common == nil
}

func numericRank(t connect.Type) int {
	switch t {
	case connect.TypeInt8:
		return 1
	case connect.TypeInt16:
		return 2
	case connect.TypeInt32:
		return 3
	case connect.TypeInt64:
		return 4
	case connect.TypeFloat32:
		return 5
	case connect.TypeFloat64:
		return 6
	}
	return 0
}

// mergeSchemas is Values.mergeSchemas: numeric types widen (logical INT32/INT64 schemas included, as the JVM
// compares types only), same types keep the newer schema, anything else has no common schema.
func mergeSchemas(prev, next *connect.Schema) *connect.Schema {
	if prev.Type != next.Type {
		a, b := numericRank(prev.Type), numericRank(next.Type)
		if a == 0 || b == 0 {
			return nil
		}
		if b > a {
			return next
		}
		return prev
	}
	if prev.Optional == next.Optional {
		if prev.Optional {
			return prev
		}
		return next
	}
	if !prev.Equal(next) {
		return nil
	}
	return prev
}

func alignList(elem *connect.Schema, in []any) ([]any, error) {
	for i, v := range in {
		c, err := convertTo(elem, v)
		if err != nil {
			return nil, err
		}
		in[i] = c
	}
	return in, nil
}

const msPerDay = 86400000

// convertTo is Values.convertTo(toSchema, null, value) for the values the parser produces.
func convertTo(to *connect.Schema, v any) (any, error) {
	if v == nil {
		if to.Optional {
			return nil, nil
		}
		return nil, errParse
	}
	switch to.Type {
	case connect.TypeBytes:
		if d, ok := v.(connect.Decimal); ok && to.Name == connect.DecimalName {
			return d, nil
		}
		if b, ok := v.([]byte); ok && to.Name != connect.DecimalName {
			return b, nil
		}
		return nil, errParse
	case connect.TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, errParse
	case connect.TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, errParse
	case connect.TypeInt8:
		n, err := asLong(v)
		return int8(n), err
	case connect.TypeInt16:
		n, err := asLong(v)
		return int16(n), err
	case connect.TypeInt32:
		switch to.Name {
		case connect.DateName:
			if t, ok := v.(time.Time); ok {
				return t, nil
			}
			n, err := asLong(v)
			if err != nil {
				return nil, err
			}
			return time.UnixMilli(int64(int32(n)) * msPerDay).UTC(), nil
		case connect.TimeName:
			if t, ok := v.(time.Time); ok {
				return t, nil
			}
			n, err := asLong(v)
			if err != nil {
				return nil, err
			}
			ms := int32(n)
			if ms < 0 || ms > msPerDay {
				return nil, errParse
			}
			return time.UnixMilli(int64(ms)).UTC(), nil
		}
		n, err := asLong(v)
		return int32(n), err
	case connect.TypeInt64:
		if to.Name == connect.TimestampName {
			if t, ok := v.(time.Time); ok {
				return t, nil
			}
			n, err := asLong(v)
			if err != nil {
				return nil, err
			}
			return time.UnixMilli(n).UTC(), nil
		}
		return asLong(v)
	case connect.TypeFloat32:
		if f, ok := v.(float32); ok {
			return f, nil
		}
		d, err := asDouble(v)
		return float32(d), err
	case connect.TypeFloat64:
		return asDouble(v)
	case connect.TypeArray:
		if l, ok := v.([]any); ok {
			return l, nil
		}
		return nil, errParse
	case connect.TypeMap:
		if m, ok := v.(map[any]any); ok {
			return m, nil
		}
		return nil, errParse
	}
	return nil, errParse
}

func asLong(v any) (int64, error) {
	switch n := v.(type) {
	case int8:
		return int64(n), nil
	case int16:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case int64:
		return n, nil
	case float32:
		return javaD2L(float64(n)), nil
	case float64:
		return javaD2L(n), nil
	}
	// a Decimal never meets an integer or float common schema (BYTES merges with nothing else)
	return 0, errParse
}

// javaD2L is Java's (long) cast of a double.
var javaD2L = connect.JavaDoubleToLong

func asDouble(v any) (float64, error) {
	switch n := v.(type) {
	case int8:
		return float64(n), nil
	case int16:
		return float64(n), nil
	case int32:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case float32:
		return float64(n), nil
	case float64:
		return n, nil
	}
	return 0, errParse
}
