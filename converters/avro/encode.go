package avro

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/linkedin/goavro/v2"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/avrotype"
	"github.com/connectd/connectd/connect/values"
)

// writer encodes Connect values with one Avro schema: goavro does the binary encoding from a copy of
// the schema without logicalType and default attributes (Connect logical values are converted to their
// Avro primitives here, as AvroData.fromConnectData does, and defaults play no part in writing).
type writer struct {
	text  string
	node  *node
	codec *goavro.Codec
}

func newWriter(text string) (*writer, error) {
	n, err := parseSchema(text)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	stripped, err := json.Marshal(stripForCodec(v, true))
	if err != nil {
		return nil, err
	}
	codec, err := goavro.NewCodec(string(stripped))
	if err != nil {
		return nil, fmt.Errorf("avro schema rejected by goavro: %w", err)
	}
	return &writer{text: text, node: n, codec: codec}, nil
}

// stripForCodec removes logicalType (and field defaults) from schema objects.
func stripForCodec(v any, schemaPos bool) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripForCodec(e, schemaPos)
		}
		return out
	case map[string]any:
		if !schemaPos {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch k {
			case logicalTypeProp:
				continue
			case "type", "items", "values":
				out[k] = stripForCodec(e, true)
			case "fields":
				fs, _ := e.([]any)
				nf := make([]any, len(fs))
				for i, f := range fs {
					fm, ok := f.(map[string]any)
					if !ok {
						nf[i] = f
						continue
					}
					c := make(map[string]any, len(fm))
					for fk, fv := range fm {
						switch fk {
						case "default":
						case "type":
							c[fk] = stripForCodec(fv, true)
						default:
							c[fk] = fv
						}
					}
					nf[i] = c
				}
				out[k] = nf
			default:
				out[k] = e
			}
		}
		return out
	}
	return v
}

func (w *writer) encode(prefix []byte, s *connect.Schema, v any) ([]byte, error) {
	if w.node.kind == avrotype.Bytes {
		// Confluent's serializers write a top-level bytes schema as the raw bytes, without the Avro length.
		x, err := toAvroLogical(s, v)
		if err != nil {
			return nil, err
		}
		b, ok := x.([]byte)
		if !ok {
			return nil, connect.DataErrorf("Unrecognized bytes object of type: %T", x)
		}
		return append(prefix, b...), nil
	}
	native, err := toNative(s, w.node, v)
	if err != nil {
		return nil, err
	}
	out, err := w.codec.BinaryFromNative(prefix, native)
	if err != nil {
		return nil, connect.DataErrorf("avro: %v", err)
	}
	return out, nil
}

// toNative converts a Connect value of schema s to goavro's native form for Avro schema n.
func toNative(s *connect.Schema, n *node, v any) (any, error) {
	if n.kind == avrotype.Union {
		return unionNative(s, n, v)
	}
	if v == nil && s != nil && s.Default != nil {
		v = s.Default
	}
	if v == nil {
		return nil, connect.DataErrorf("Invalid value: null used for required field, schema type: %s", n.kind)
	}
	if s == nil {
		return nil, connect.DataErrorf("schemaless values are not supported by the Avro converter")
	}
	v, err := toAvroLogical(s, v)
	if err != nil {
		return nil, err
	}
	bad := func() error { return connect.DataErrorf("Invalid type for %s: %T", s.Type, v) }
	switch n.kind {
	case avrotype.Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case avrotype.Int:
		switch x := v.(type) {
		case int8:
			return int32(x), nil
		case int16:
			return int32(x), nil
		case int32:
			return x, nil
		}
	case avrotype.Long:
		switch x := v.(type) {
		case int8:
			return int64(x), nil
		case int16:
			return int64(x), nil
		case int32:
			return int64(x), nil
		case int64:
			return x, nil
		}
	case avrotype.Float:
		switch x := v.(type) {
		case float32:
			return x, nil
		}
	case avrotype.Double:
		switch x := v.(type) {
		case float32:
			return float64(x), nil
		case float64:
			return x, nil
		}
	case avrotype.String:
		if x, ok := v.(string); ok {
			return x, nil
		}
	case avrotype.Enum:
		if x, ok := v.(string); ok {
			for _, sym := range n.symbols {
				if sym == x {
					return x, nil
				}
			}
			return nil, connect.DataErrorf("%q is not a symbol of enum %s", x, n.fullName)
		}
	case avrotype.Bytes:
		if x, ok := v.([]byte); ok {
			return x, nil
		}
	case avrotype.Fixed:
		if x, ok := v.([]byte); ok {
			if s.Name == connect.DecimalName && len(x) < n.size {
				x, _ = values.SignExtend(x, n.size)
			}
			if len(x) != n.size {
				return nil, connect.DataErrorf("fixed %s needs %d bytes, got %d", n.fullName, n.size, len(x))
			}
			return x, nil
		}
	case avrotype.Array:
		arr, ok := v.([]any)
		if !ok {
			if s.Type == connect.TypeMap && isMapEntry(n.items) {
				return mapEntriesNative(s, n.items, v)
			}
			return nil, bad()
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			x, err := toNative(s.ValueSchema(), n.items, e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case avrotype.Map:
		out := map[string]any{}
		for _, e := range mapEntries(v) {
			k, ok := e.k.(string)
			if !ok {
				return nil, connect.DataErrorf("Avro map keys must be strings, got %T", e.k)
			}
			x, err := toNative(s.ValueSchema(), n.values, e.v)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		if len(out) == 0 {
			if _, ok := v.(map[any]any); !ok {
				if _, ok := v.(map[string]any); !ok {
					return nil, bad()
				}
			}
		}
		return out, nil
	case avrotype.Record:
		st, ok := v.(*connect.Struct)
		if !ok {
			return nil, bad()
		}
		out := make(map[string]any, len(n.fields))
		for _, f := range n.fields {
			cf, ok := st.Schema().Field(f.name)
			if !ok {
				if f.hasDef {
					x, err := jsonToNative(f.typ, f.def)
					if err != nil {
						return nil, connect.DataErrorf("default of field %s: %v", f.name, err)
					}
					out[f.name] = x
					continue
				}
				return nil, connect.DataErrorf("field %s of Avro record %s is missing from the Connect struct", f.name, n.fullName)
			}
			x, err := toNative(cf.Schema, f.typ, st.GetIndex(cf.Index))
			if err != nil {
				return nil, connect.DataErrorf("field %s: %v", f.name, err)
			}
			out[f.name] = x
		}
		return out, nil
	}
	return nil, bad()
}

func mapEntriesNative(s *connect.Schema, entry *node, v any) (any, error) {
	kf := entry.fields[entry.fieldIdx[keyField]]
	vf := entry.fields[entry.fieldIdx[valueField]]
	ents := mapEntries(v)
	if ents == nil {
		if _, ok := v.(map[any]any); !ok {
			if _, ok := v.(map[string]any); !ok {
				return nil, connect.DataErrorf("Invalid type for MAP: %T", v)
			}
		}
	}
	out := make([]any, 0, len(ents))
	for _, e := range ents {
		k, err := toNative(s.KeySchema(), kf.typ, e.k)
		if err != nil {
			return nil, err
		}
		x, err := toNative(s.ValueSchema(), vf.typ, e.v)
		if err != nil {
			return nil, err
		}
		out = append(out, map[string]any{keyField: k, valueField: x})
	}
	return out, nil
}

func unionNative(s *connect.Schema, n *node, v any) (any, error) {
	if v == nil && s != nil && s.Default != nil {
		v = s.Default
	}
	if v == nil {
		for _, b := range n.branches {
			if b.kind == avrotype.Null {
				return nil, nil
			}
		}
		return nil, connect.DataErrorf("Invalid value: null used for required field")
	}
	if s != nil && isUnionSchema(s) {
		st, ok := v.(*connect.Struct)
		if !ok {
			return nil, connect.DataErrorf("Invalid type for union: %T", v)
		}
		for i, f := range s.Fields() {
			fv := st.GetIndex(i)
			if fv == nil {
				continue
			}
			for _, b := range n.branches {
				if b.kind != avrotype.Null && unionMemberFieldName(b) == f.Name {
					x, err := toNative(f.Schema, b, fv)
					if err != nil {
						return nil, err
					}
					return goavro.Union(b.typeName(), x), nil
				}
			}
		}
		return nil, connect.DataErrorf("Did not find matching union field for data")
	}
	// An optional Connect schema: the first non-null branch that accepts the value.
	var firstErr error
	for _, b := range n.branches {
		if b.kind == avrotype.Null {
			continue
		}
		x, err := toNative(s, b, v)
		if err == nil {
			return goavro.Union(b.typeName(), x), nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = connect.DataErrorf("no union branch for %T", v)
	}
	return nil, firstErr
}

// jsonToNative converts a JSON field default to goavro's native form.
func jsonToNative(n *node, v any) (any, error) {
	switch n.kind {
	case avrotype.Null:
		return nil, nil
	case avrotype.Union:
		first := n.branches[0]
		if first.kind == avrotype.Null {
			return nil, nil
		}
		x, err := jsonToNative(first, v)
		if err != nil {
			return nil, err
		}
		return goavro.Union(first.typeName(), x), nil
	case avrotype.Int, avrotype.Long, avrotype.Float, avrotype.Double:
		num, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("expected a number")
		}
		switch n.kind {
		case avrotype.Int:
			i, err := num.Int64()
			return int32(i), err
		case avrotype.Long:
			return num.Int64()
		case avrotype.Float:
			f, err := num.Float64()
			return float32(f), err
		}
		return num.Float64()
	case avrotype.Boolean, avrotype.String, avrotype.Enum:
		return v, nil
	case avrotype.Bytes, avrotype.Fixed:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("expected a string")
		}
		b := make([]byte, 0, len(s))
		for _, r := range s {
			b = append(b, byte(r))
		}
		return b, nil
	case avrotype.Array:
		arr, _ := v.([]any)
		out := make([]any, len(arr))
		for i, e := range arr {
			x, err := jsonToNative(n.items, e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case avrotype.Map:
		m, _ := v.(map[string]any)
		out := make(map[string]any, len(m))
		for k, e := range m {
			x, err := jsonToNative(n.values, e)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case avrotype.Record:
		m, _ := v.(map[string]any)
		out := make(map[string]any, len(n.fields))
		for _, f := range n.fields {
			e, ok := m[f.name]
			if !ok {
				e = f.def
			}
			x, err := jsonToNative(f.typ, e)
			if err != nil {
				return nil, err
			}
			out[f.name] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported default")
}
