package avro

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/avrotype"
)

// jsonToConnect converts a JSON default (Avro field default or connect.default) to a Connect value of s.
func jsonToConnect(s *connect.Schema, n *node, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if _, ok := v.(jsonNull); ok {
		return nil, nil
	}
	num := func() (json.Number, error) {
		x, ok := v.(json.Number)
		if !ok {
			return "", fmt.Errorf("expected a number, got %T", v)
		}
		return x, nil
	}
	switch n.kind {
	case avrotype.Int:
		x, err := num()
		if err != nil {
			return nil, err
		}
		i, err := x.Int64()
		if err != nil {
			return nil, err
		}
		switch s.Name {
		case connect.DateName:
			return connect.DateFromDays(int32(i)), nil
		case connect.TimeName:
			return connect.TimeFromMillis(int32(i)), nil
		}
		switch s.Type {
		case connect.TypeInt8:
			return int8(i), nil
		case connect.TypeInt16:
			return int16(i), nil
		case connect.TypeInt32:
			return int32(i), nil
		}
		return nil, fmt.Errorf("bad int default")
	case avrotype.Long:
		x, err := num()
		if err != nil {
			return nil, err
		}
		i, err := x.Int64()
		if err != nil {
			return nil, err
		}
		if s.Name == connect.TimestampName {
			return time.UnixMilli(i).UTC(), nil
		}
		return i, nil
	case avrotype.Float:
		x, err := num()
		if err != nil {
			return nil, err
		}
		f, err := x.Float64()
		return float32(f), err
	case avrotype.Double:
		x, err := num()
		if err != nil {
			return nil, err
		}
		return x.Float64()
	case avrotype.Boolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("expected boolean")
		}
		return b, nil
	case avrotype.String, avrotype.Enum:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("expected string")
		}
		return str, nil
	case avrotype.Bytes, avrotype.Fixed:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("expected string for bytes")
		}
		b := make([]byte, 0, len(str))
		for _, r := range str {
			b = append(b, byte(r))
		}
		if s.Name == connect.DecimalName {
			scale, err := connect.DecimalScale(s)
			if err != nil {
				return nil, err
			}
			return connect.DecimalFromBytes(b, scale), nil
		}
		return b, nil
	case avrotype.Array:
		arr, ok := v.([]any)
		if !ok || s.Type != connect.TypeArray {
			return nil, fmt.Errorf("invalid JSON for array default value")
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			x, err := jsonToConnect(s.ValueSchema(), n.items, e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case avrotype.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("invalid JSON for map default value")
		}
		out := make(map[any]any, len(m))
		for k, e := range m {
			x, err := jsonToConnect(s.ValueSchema(), n.values, e)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case avrotype.Record:
		m, ok := v.(map[string]any)
		if !ok || s.Type != connect.TypeStruct {
			return nil, fmt.Errorf("invalid JSON for record default value")
		}
		st := connect.NewStruct(s)
		for i, f := range n.fields {
			fv, present := m[f.name]
			if !present && f.hasDef {
				fv = f.def
			}
			x, err := jsonToConnect(s.Fields()[i].Schema, f.typ, fv)
			if err != nil {
				return nil, err
			}
			st.PutIndex(i, x)
		}
		return st, nil
	case avrotype.Union:
		first := n.branches[0]
		if first.kind == avrotype.Null {
			return nil, nil
		}
		if s.Type == connect.TypeStruct && s.Name == avroTypeUnion {
			f, ok := s.Field(unionMemberFieldName(first))
			if !ok {
				return nil, fmt.Errorf("no union field for default")
			}
			x, err := jsonToConnect(f.Schema, first, v)
			if err != nil {
				return nil, err
			}
			st := connect.NewStruct(s)
			st.PutIndex(f.Index, x)
			return st, nil
		}
		return jsonToConnect(s, first, v)
	}
	return nil, nil
}
