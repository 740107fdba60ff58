package transforms

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/smtgolden"
)

// A tiny JsonConverter (schemas.enable=true) envelope codec for the golden tests.

func decodeSchema(j any) (*connect.Schema, error) {
	if j == nil {
		return nil, nil
	}
	m := j.(map[string]any)
	tn := m["type"].(string)
	switch tn {
	case "float":
		tn = "float32"
	case "double":
		tn = "float64"
	}
	t, err := connect.ParseType(tn)
	if err != nil {
		return nil, err
	}
	var b *connect.SchemaBuilder
	switch t {
	case connect.TypeArray:
		e, err := decodeSchema(m["items"])
		if err != nil {
			return nil, err
		}
		b = connect.ArrayBuilder(e)
	case connect.TypeMap:
		k, err := decodeSchema(m["keys"])
		if err != nil {
			return nil, err
		}
		v, err := decodeSchema(m["values"])
		if err != nil {
			return nil, err
		}
		b = connect.MapBuilder(k, v)
	case connect.TypeStruct:
		b = connect.StructBuilder()
		for _, f := range m["fields"].([]any) {
			fm := f.(map[string]any)
			fs, err := decodeSchema(fm)
			if err != nil {
				return nil, err
			}
			b.Field(fm["field"].(string), fs)
		}
	default:
		b = connect.NewSchemaBuilder(t)
	}
	if o, _ := m["optional"].(bool); o {
		b.Optional()
	}
	if n, ok := m["name"].(string); ok {
		b.Name(n)
	}
	if v, ok := m["version"].(json.Number); ok {
		n, _ := v.Int64()
		b.Version(int32(n))
	}
	if d, ok := m["doc"].(string); ok {
		b.Doc(d)
	}
	if p, ok := m["parameters"].(map[string]any); ok {
		for k, v := range p {
			b.Parameter(k, v.(string))
		}
	}
	s, err := b.Build()
	if err != nil {
		return nil, err
	}
	if d, ok := m["default"]; ok && d != nil {
		dv, err := decodeValue(s, d)
		if err != nil {
			return nil, err
		}
		s.Default = dv
	}
	return s, nil
}

func decodeValue(s *connect.Schema, j any) (any, error) {
	if s == nil {
		return decodeSchemaless(j), nil
	}
	if j == nil {
		if s.Default != nil {
			return s.Default, nil
		}
		return nil, nil
	}
	switch s.Name {
	case connect.DecimalName:
		b, err := base64.StdEncoding.DecodeString(j.(string))
		if err != nil {
			return nil, err
		}
		sc, _ := connect.DecimalScale(s)
		return connect.DecimalFromBytes(b, sc), nil
	case connect.DateName:
		n, _ := j.(json.Number).Int64()
		return connect.DateFromDays(int32(n)), nil
	case connect.TimeName:
		n, _ := j.(json.Number).Int64()
		return connect.TimeFromMillis(int32(n)), nil
	case connect.TimestampName:
		n, _ := j.(json.Number).Int64()
		return time.UnixMilli(n).UTC(), nil
	}
	switch s.Type {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		n, err := j.(json.Number).Int64()
		if err != nil {
			return nil, err
		}
		switch s.Type {
		case connect.TypeInt8:
			return int8(n), nil
		case connect.TypeInt16:
			return int16(n), nil
		case connect.TypeInt32:
			return int32(n), nil
		}
		return n, nil
	case connect.TypeFloat32, connect.TypeFloat64:
		f, err := j.(json.Number).Float64()
		if err != nil {
			return nil, err
		}
		if s.Type == connect.TypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case connect.TypeBoolean, connect.TypeString:
		return j, nil
	case connect.TypeBytes:
		return base64.StdEncoding.DecodeString(j.(string))
	case connect.TypeArray:
		var out []any
		for _, e := range j.([]any) {
			v, err := decodeValue(s.ValueSchema(), e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case connect.TypeMap:
		out := map[any]any{}
		if obj, ok := j.(map[string]any); ok {
			for k, e := range obj {
				v, err := decodeValue(s.ValueSchema(), e)
				if err != nil {
					return nil, err
				}
				out[k] = v
			}
			return out, nil
		}
		for _, pair := range j.([]any) {
			p := pair.([]any)
			k, err := decodeValue(s.KeySchema(), p[0])
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(s.ValueSchema(), p[1])
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case connect.TypeStruct:
		st := connect.NewStruct(s)
		obj := j.(map[string]any)
		for _, f := range s.Fields() {
			v, err := decodeValue(f.Schema, obj[f.Name])
			if err != nil {
				return nil, err
			}
			st.PutIndex(f.Index, v)
		}
		return st, nil
	}
	return nil, fmt.Errorf("cannot decode %v", s)
}

func decodeSchemaless(j any) any {
	switch x := j.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = decodeSchemaless(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = decodeSchemaless(e)
		}
		return out
	}
	return j
}

func decodeEnvelope(j any) (connect.SchemaAndValue, error) {
	if j == nil {
		return connect.SchemaAndValue{}, nil
	}
	m := j.(map[string]any)
	s, err := decodeSchema(m["schema"])
	if err != nil {
		return connect.SchemaAndValue{}, err
	}
	v, err := decodeValue(s, m["payload"])
	return connect.SchemaAndValue{Schema: s, Value: v}, err
}

// encodeSchema / encodeValue produce the envelope as generic JSON (numbers as json.Number strings).

func encodeSchema(s *connect.Schema) any {
	if s == nil {
		return nil
	}
	tn := s.Type.Lower()
	switch s.Type {
	case connect.TypeFloat32:
		tn = "float"
	case connect.TypeFloat64:
		tn = "double"
	}
	m := map[string]any{"type": tn, "optional": s.Optional}
	if s.Name != "" {
		m["name"] = s.Name
	}
	if s.Version != nil {
		m["version"] = json.Number(fmt.Sprint(*s.Version))
	}
	if s.Doc != "" {
		m["doc"] = s.Doc
	}
	if len(s.Parameters) > 0 {
		p := map[string]any{}
		for k, v := range s.Parameters {
			p[k] = v
		}
		m["parameters"] = p
	}
	switch s.Type {
	case connect.TypeArray:
		m["items"] = encodeSchema(s.ValueSchema())
	case connect.TypeMap:
		m["keys"] = encodeSchema(s.KeySchema())
		m["values"] = encodeSchema(s.ValueSchema())
	case connect.TypeStruct:
		fs := []any{}
		for _, f := range s.Fields() {
			fm := encodeSchema(f.Schema).(map[string]any)
			fm["field"] = f.Name
			fs = append(fs, fm)
		}
		m["fields"] = fs
	}
	if s.Default != nil {
		m["default"] = encodeValue(s, s.Default)
	}
	return m
}

func encodeValue(s *connect.Schema, v any) any {
	if v == nil {
		if s != nil && s.Default != nil {
			return encodeValue(s, s.Default)
		}
		return nil
	}
	switch x := v.(type) {
	case connect.Decimal:
		return base64.StdEncoding.EncodeToString(connect.DecimalToBytes(x))
	case time.Time:
		if s != nil {
			switch s.Name {
			case connect.DateName:
				d, _ := connect.DateToDays(x)
				return json.Number(fmt.Sprint(d))
			case connect.TimeName:
				ms, _ := connect.TimeToMillis(x)
				return json.Number(fmt.Sprint(ms))
			}
		}
		return json.Number(fmt.Sprint(x.UnixMilli()))
	case int8, int16, int32, int64, int:
		return json.Number(fmt.Sprint(x))
	case float32:
		return json.Number(connect.JavaDouble(float64(x), 32))
	case float64:
		return json.Number(connect.JavaDouble(x, 64))
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case []any:
		var es *connect.Schema
		if s != nil {
			es = s.ValueSchema()
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = encodeValue(es, e)
		}
		return out
	case map[string]any:
		var vs *connect.Schema
		if s != nil {
			vs = s.ValueSchema()
		}
		out := map[string]any{}
		for k, e := range x {
			out[k] = encodeValue(vs, e)
		}
		return out
	case map[any]any:
		var ks, vs *connect.Schema
		if s != nil {
			ks, vs = s.KeySchema(), s.ValueSchema()
		}
		if ks == nil || ks.Type == connect.TypeString {
			out := map[string]any{}
			for k, e := range x {
				out[fmt.Sprint(k)] = encodeValue(vs, e)
			}
			return out
		}
		out := []any{}
		for k, e := range x {
			out = append(out, []any{encodeValue(ks, k), encodeValue(vs, e)})
		}
		return out
	case *connect.Struct:
		out := map[string]any{}
		for _, f := range x.Schema().Fields() {
			out[f.Name] = encodeValue(f.Schema, x.GetWithoutDefault(f.Name))
		}
		return out
	}
	return v
}

func encodeEnvelope(s *connect.Schema, v any) any {
	if s == nil && v == nil {
		return nil
	}
	return map[string]any{"schema": encodeSchema(s), "payload": encodeValue(s, v)}
}

// normalizeJSON makes numbers comparable (json.Number → big.Float string).
var normalizeJSON = smtgolden.Normalize
