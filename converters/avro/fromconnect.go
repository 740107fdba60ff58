package avro

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/avrotype"
)

// ojson is a JSON object that keeps its key order (Avro Java writes type, name, namespace, doc,
// fields... then the properties).
type ojson []kv

type kv struct {
	k string
	v any
}

func (o ojson) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalNoEscape(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func (o ojson) get(k string) (any, bool) {
	for _, e := range o {
		if e.k == k {
			return e.v, true
		}
	}
	return nil, false
}

// fromConnectSchemaJSON converts a Connect schema to the Avro schema text AvroData.fromConnectSchema
// produces (with connect.meta.data=true).
func fromConnectSchemaJSON(s *connect.Schema) (string, error) {
	if s == nil {
		return "", connect.DataErrorf("schemaless values are not supported by the Avro converter")
	}
	c := &fromCtx{}
	v, err := c.from(s, false)
	if err != nil {
		return "", err
	}
	b, err := marshalNoEscape(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

type fromCtx struct {
	nameIndex int
	cache     []cacheEntry
	emitted   map[string]bool
}

type cacheEntry struct {
	s *connect.Schema
	v any
}

func (c *fromCtx) nameOrDefault(name string) (ns, simple string) {
	if name != "" {
		ns, simple = avrotype.SplitName(name)
		return ns, simple
	}
	c.nameIndex++
	if c.nameIndex > 1 {
		return avroNamespace, defaultSchemaName + strconv.Itoa(c.nameIndex)
	}
	return avroNamespace, defaultSchemaName
}

func isUnionSchema(s *connect.Schema) bool { return s.Name == avroTypeUnion }

func isFixedSchema(s *connect.Schema) bool {
	_, ok := s.Parameters[fixedSizeParam]
	return s.Type == connect.TypeBytes && s.Name != "" && ok
}

func nonOptional(s *connect.Schema) *connect.Schema {
	if !s.Optional {
		return s
	}
	c := *s
	c.Optional = false
	return &c
}

// named returns a reference to an already emitted named type, or marks this one emitted.
func (c *fromCtx) named(o ojson) any {
	ns, _ := o.get("namespace")
	nm, _ := o.get("name")
	full := nm.(string)
	if s, _ := ns.(string); s != "" {
		full = s + "." + full
	}
	if c.emitted == nil {
		c.emitted = map[string]bool{}
	}
	if c.emitted[full] {
		return full
	}
	c.emitted[full] = true
	return o
}

func (c *fromCtx) from(s *connect.Schema, ignoreOptional bool) (any, error) {
	if !isUnionSchema(s) && !s.Optional {
		for _, e := range c.cache {
			if e.s == s || e.s.Equal(s) {
				if o, ok := e.v.(ojson); ok {
					if t, _ := o.get("type"); t == "record" || t == "fixed" || t == "enum" {
						return c.named(o), nil
					}
				}
				return e.v, nil
			}
		}
	}
	var base ojson
	var baseUnion []any
	connectType := ""
	switch s.Type {
	case connect.TypeInt8:
		connectType = "int8"
		base = ojson{{"type", "int"}}
	case connect.TypeInt16:
		connectType = "int16"
		base = ojson{{"type", "int"}}
	case connect.TypeInt32:
		base = ojson{{"type", "int"}}
	case connect.TypeInt64:
		base = ojson{{"type", "long"}}
	case connect.TypeFloat32:
		base = ojson{{"type", "float"}}
	case connect.TypeFloat64:
		base = ojson{{"type", "double"}}
	case connect.TypeBoolean:
		base = ojson{{"type", "boolean"}}
	case connect.TypeString:
		base = ojson{{"type", "string"}}
	case connect.TypeBytes:
		if isFixedSchema(s) {
			ns, name := c.nameOrDefault(s.Name)
			size, err := strconv.Atoi(s.Parameters[fixedSizeParam])
			if err != nil {
				return nil, connect.DataErrorf("invalid %s: %v", fixedSizeParam, err)
			}
			base = ojson{{"type", "fixed"}, {"name", name}, {"namespace", ns}, {"size", size}}
		} else {
			base = ojson{{"type", "bytes"}}
		}
		if strings.EqualFold(s.Name, connect.DecimalName) {
			scale, err := strconv.Atoi(s.Parameters[connect.DecimalScaleProp])
			if err != nil {
				return nil, connect.DataErrorf("invalid decimal scale: %v", err)
			}
			prec := defaultDecimalPrec
			if p, ok := s.Parameters[decimalPrecisionParam]; ok {
				if prec, err = strconv.Atoi(p); err != nil {
					return nil, connect.DataErrorf("invalid decimal precision: %v", err)
				}
			}
			base = append(base, kv{"scale", scale}, kv{"precision", prec})
		}
	case connect.TypeArray:
		items, err := c.from(s.ValueSchema(), false)
		if err != nil {
			return nil, err
		}
		base = ojson{{"type", "array"}, {"items", items}}
	case connect.TypeMap:
		ks := s.KeySchema()
		if ks.Type == connect.TypeString && !ks.Optional {
			values, err := c.from(s.ValueSchema(), false)
			if err != nil {
				return nil, err
			}
			base = ojson{{"type", "map"}, {"values", values}}
		} else {
			var rec ojson
			if s.Name == "" {
				rec = ojson{{"type", "record"}, {"name", mapEntryTypeName}, {"namespace", avroNamespace}}
			} else {
				ns, name := c.nameOrDefault(s.Name)
				rec = ojson{{"type", "record"}, {"name", name}, {"namespace", ns}}
			}
			kf, err := c.recordField(keyField, ks, "")
			if err != nil {
				return nil, err
			}
			vf, err := c.recordField(valueField, s.ValueSchema(), "")
			if err != nil {
				return nil, err
			}
			rec = append(rec, kv{"fields", []any{kf, vf}})
			if s.Name != "" {
				rec = append(rec, kv{connectInternalType, mapEntryTypeName})
			}
			base = ojson{{"type", "array"}, {"items", c.named(rec)}}
		}
	case connect.TypeStruct:
		switch {
		case isUnionSchema(s):
			var u []any
			if s.Optional {
				u = append(u, "null")
			}
			for _, f := range s.Fields() {
				m, err := c.from(nonOptional(f.Schema), true)
				if err != nil {
					return nil, err
				}
				u = append(u, m)
			}
			baseUnion = u
		case s.Optional:
			m, err := c.from(nonOptional(s), false)
			if err != nil {
				return nil, err
			}
			baseUnion = []any{"null", m}
		default:
			ns, name := c.nameOrDefault(s.Name)
			rec := ojson{{"type", "record"}, {"name", name}, {"namespace", ns}}
			if d := s.Parameters[avroRecordDocProp]; d != "" {
				rec = append(rec, kv{"doc", d})
			}
			var fields []any
			for _, f := range s.Fields() {
				fd, err := c.recordField(f.Name, f.Schema, s.Parameters[avroFieldDocPrefix+f.Name])
				if err != nil {
					return nil, err
				}
				fields = append(fields, fd)
			}
			if fields == nil {
				fields = []any{}
			}
			base = append(rec, kv{"fields", fields})
		}
	default:
		return nil, connect.DataErrorf("Unknown schema type: %s", s.Type)
	}

	var final any
	if baseUnion != nil {
		final = baseUnion
	} else {
		if s.Doc != "" {
			base = append(base, kv{connectDocProp, s.Doc})
		}
		if s.Version != nil {
			base = append(base, kv{connectVersionProp, int(*s.Version)})
		}
		if len(s.Parameters) > 0 {
			params := ojson{}
			for _, k := range sortedParamKeys(s.Parameters) {
				if k != avroFieldDefaultFlag {
					params = append(params, kv{k, s.Parameters[k]})
				}
			}
			if len(params) > 0 {
				base = append(base, kv{connectParametersProp, params})
			}
		}
		if s.Default != nil {
			if _, flagged := s.Parameters[avroFieldDefaultFlag]; !flagged {
				dv, err := defaultToJSON(s, s.Default)
				if err != nil {
					return nil, err
				}
				base = append(base, kv{connectDefaultProp, dv})
			}
		}
		if s.Name != "" {
			base = append(base, kv{connectNameProp, s.Name})
		}
		if connectType != "" {
			base = append(base, kv{connectTypeProp, connectType})
		}
		switch {
		case strings.EqualFold(s.Name, connect.DecimalName):
			base = append(base, kv{logicalTypeProp, logicalDecimal})
		case strings.EqualFold(s.Name, connect.TimeName):
			base = append(base, kv{logicalTypeProp, logicalTimeMillis})
		case strings.EqualFold(s.Name, connect.TimestampName):
			base = append(base, kv{logicalTypeProp, logicalTimestampMillis})
		case strings.EqualFold(s.Name, connect.DateName):
			base = append(base, kv{logicalTypeProp, logicalDate})
		}
		for _, k := range sortedParamKeys(s.Parameters) {
			if strings.HasPrefix(k, avroPropPrefix) {
				base = append(base, kv{k, s.Parameters[k]})
			}
		}
		var b any = base
		if t, _ := base.get("type"); t == "record" || t == "fixed" || t == "enum" {
			b = c.named(base)
		} else if len(base) == 1 {
			b = base[0].v // a bare primitive: "int"
		}
		final = b
		if !ignoreOptional && s.Optional {
			if s.Default != nil {
				final = []any{b, "null"}
			} else {
				final = []any{"null", b}
			}
		}
	}
	if !s.Optional {
		c.cache = append(c.cache, cacheEntry{s: s, v: final})
	}
	return final, nil
}

func sortedParamKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (c *fromCtx) recordField(name string, fs *connect.Schema, doc string) (ojson, error) {
	t, err := c.from(fs, false)
	if err != nil {
		return nil, err
	}
	f := ojson{{"name", name}, {"type", t}}
	if doc != "" {
		f = append(f, kv{"doc", doc})
	}
	if fs.Default != nil {
		dv, err := defaultToJSON(fs, fs.Default)
		if err == nil {
			f = append(f, kv{"default", dv})
		}
	} else if fs.Optional {
		f = append(f, kv{"default", nil})
	}
	return f, nil
}

// defaultToJSON is AvroData.defaultValueFromConnect.
func defaultToJSON(s *connect.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	v, err := toAvroLogical(s, v)
	if err != nil {
		return nil, err
	}
	bad := func() error {
		return connect.DataErrorf("Invalid type used for default value of %s field: %T", s.Type, v)
	}
	switch s.Type {
	case connect.TypeInt8:
		x, ok := v.(int8)
		if !ok {
			return nil, bad()
		}
		return int(x), nil
	case connect.TypeInt16:
		x, ok := v.(int16)
		if !ok {
			return nil, bad()
		}
		return int(x), nil
	case connect.TypeInt32:
		x, ok := v.(int32)
		if !ok {
			return nil, bad()
		}
		return x, nil
	case connect.TypeInt64:
		x, ok := v.(int64)
		if !ok {
			return nil, bad()
		}
		return x, nil
	case connect.TypeFloat32:
		x, ok := v.(float32)
		if !ok {
			return nil, bad()
		}
		return x, nil
	case connect.TypeFloat64:
		x, ok := v.(float64)
		if !ok {
			return nil, bad()
		}
		return x, nil
	case connect.TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return nil, bad()
		}
		return x, nil
	case connect.TypeString:
		x, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		return x, nil
	case connect.TypeBytes:
		x, ok := v.([]byte)
		if !ok {
			return nil, bad()
		}
		r := make([]rune, len(x))
		for i, c := range x {
			r[i] = rune(c)
		}
		return string(r), nil
	case connect.TypeArray:
		arr, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			j, err := defaultToJSON(s.ValueSchema(), e)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case connect.TypeMap:
		ks := s.KeySchema()
		entries := mapEntries(v)
		if ks.Type == connect.TypeString && !ks.Optional {
			o := ojson{}
			sort.Slice(entries, func(i, j int) bool { return fmt.Sprint(entries[i].k) < fmt.Sprint(entries[j].k) })
			for _, e := range entries {
				j, err := defaultToJSON(s.ValueSchema(), e.v)
				if err != nil {
					return nil, err
				}
				k, _ := e.k.(string)
				o = append(o, kv{k, j})
			}
			return o, nil
		}
		out := []any{}
		for _, e := range entries {
			k, err := defaultToJSON(ks, e.k)
			if err != nil {
				return nil, err
			}
			j, err := defaultToJSON(s.ValueSchema(), e.v)
			if err != nil {
				return nil, err
			}
			out = append(out, []any{k, j})
		}
		return out, nil
	case connect.TypeStruct:
		st, ok := v.(*connect.Struct)
		if !ok {
			return nil, bad()
		}
		o := ojson{}
		for i, f := range s.Fields() {
			j, err := defaultToJSON(f.Schema, st.GetIndex(i))
			if err != nil {
				return nil, err
			}
			if isUnionSchema(s) {
				if j != nil {
					return j, nil
				}
				continue
			}
			o = append(o, kv{f.Name, j})
		}
		if isUnionSchema(s) {
			return nil, nil
		}
		return o, nil
	}
	return nil, connect.DataErrorf("Unknown schema type: %s", s.Type)
}

type entry struct{ k, v any }

func mapEntries(v any) []entry {
	var out []entry
	switch m := v.(type) {
	case map[any]any:
		for k, x := range m {
			out = append(out, entry{k, x})
		}
	case map[string]any:
		for k, x := range m {
			out = append(out, entry{k, x})
		}
	}
	return out
}

// toAvroLogical converts Connect logical values to their Avro primitive form.
func toAvroLogical(s *connect.Schema, v any) (any, error) {
	switch s.Name {
	case connect.DecimalName:
		d, ok := v.(connect.Decimal)
		if !ok {
			return nil, connect.DataErrorf("Invalid type for Decimal, expected BigDecimal but was %T", v)
		}
		scale, err := connect.DecimalScale(s)
		if err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		if d.Scale != scale {
			return nil, connect.DataErrorf("BigDecimal has mismatching scale value for given Decimal schema")
		}
		return connect.DecimalToBytes(d), nil
	case connect.DateName:
		t, ok := v.(time.Time)
		if !ok {
			return nil, connect.DataErrorf("Invalid type for Date, expected Date but was %T", v)
		}
		d, err := connect.DateToDays(t)
		if err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		return d, nil
	case connect.TimeName:
		t, ok := v.(time.Time)
		if !ok {
			return nil, connect.DataErrorf("Invalid type for Time, expected Date but was %T", v)
		}
		ms, err := connect.TimeToMillis(t)
		if err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		return ms, nil
	case connect.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return nil, connect.DataErrorf("Invalid type for Timestamp, expected Date but was %T", v)
		}
		return t.UnixMilli(), nil
	}
	return v, nil
}
