package transforms

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/values"
)

const castPurpose = "cast types"

var castInputTypes = []connect.Type{connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64,
	connect.TypeFloat32, connect.TypeFloat64, connect.TypeBoolean, connect.TypeString, connect.TypeBytes}

func typesString(ts []connect.Type) string {
	p := make([]string, len(ts))
	for i, t := range ts {
		p[i] = t.String()
	}
	return "[" + strings.Join(p, ", ") + "]"
}

// Cast is org.apache.kafka.connect.transforms.Cast$Key / $Value.
type Cast struct {
	side
	casts       map[string]connect.Type
	whole       connect.Type
	rnwd        bool
	schemaCache schemaCache
}

func castConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "spec", Type: connect.ConfigList, Default: connect.NoDefault, Importance: connect.High,
			Validator: connect.ValidatorFunc{Desc: "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>", Fn: func(name string, v any) error {
				l, _ := v.([]string)
				if len(l) == 0 {
					return &connect.ConfigError{Message: "Must specify at least one field to cast."}
				}
				_, _, err := parseCastSpec(l)
				return err
			}},
			Doc: "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string."}).
		Define(rnwdKey())
}

func (c *Cast) ConfigDef() *connect.ConfigDef { return castConfigDef() }
func (c *Cast) Close() error                  { return nil }

func (c *Cast) Configure(props map[string]string) error {
	cfg, err := castConfigDef().Parse(props)
	if err != nil {
		return err
	}
	c.casts, c.whole, err = parseCastSpec(cfg.List("spec"))
	if err != nil {
		return err
	}
	c.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	return nil
}

func parseCastSpec(mappings []string) (map[string]connect.Type, connect.Type, error) {
	m := map[string]connect.Type{}
	var whole connect.Type
	for _, mapping := range mappings {
		parts := javaSplit(mapping, ":")
		if len(parts) > 2 {
			return nil, 0, &connect.ConfigError{Name: "renames", Value: javaList(mappings), Message: "Invalid rename mapping: " + mapping}
		}
		tname := parts[len(parts)-1]
		t, err := connect.ParseType(strings.TrimSpace(tname))
		if err != nil {
			return nil, 0, &connect.ConfigError{Message: "Invalid type found in casting spec: " + strings.TrimSpace(tname)}
		}
		if !t.IsPrimitive() || t == connect.TypeBytes {
			return nil, 0, &connect.ConfigError{Message: fmt.Sprintf("Cast transformation does not support casting to %s; supported types are %s", t, typesString(castInputTypes[:8]))}
		}
		if len(parts) == 1 {
			whole = t
		} else {
			m[strings.TrimSpace(parts[0])] = t
		}
	}
	if whole != 0 && len(mappings) > 1 {
		return nil, 0, &connect.ConfigError{Message: "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec"}
	}
	return m, whole, nil
}

// javaSplit is String.split with a literal separator (trailing empty strings removed).
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 1 && parts[0] == "" {
		return parts
	}
	return parts
}

func (c *Cast) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	v := c.value(r)
	if v == nil {
		return r, nil
	}
	s := c.schema(r)
	if s == nil {
		if c.whole != 0 {
			nv, err := castValueToType(nil, v, c.whole)
			if err != nil {
				return nil, err
			}
			return c.newRecord(r, nil, nv), nil
		}
		m, err := requireMap(v, castPurpose)
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		for _, f := range sortedKeys(c.casts) {
			nv, err := castValueToType(nil, m[f], c.casts[f])
			if err != nil {
				return nil, err
			}
			out[f] = nv
		}
		return c.newRecord(r, nil, out), nil
	}
	us, err := c.buildSchema(s)
	if err != nil {
		return nil, err
	}
	if c.whole != 0 {
		nv, err := castValueToType(s, v, c.whole)
		if err != nil {
			return nil, err
		}
		return c.newRecord(r, us, nv), nil
	}
	st, err := requireStruct(v, castPurpose)
	if err != nil {
		return nil, err
	}
	out := connect.NewStruct(us)
	for _, f := range st.Schema().Fields() {
		orig := structGet(st, f.Name, c.rnwd)
		nv := orig
		if t, ok := c.casts[f.Name]; ok {
			if nv, err = castValueToType(f.Schema, orig, t); err != nil {
				return nil, err
			}
		}
		if err := out.Put(f.Name, nv); err != nil {
			return nil, err
		}
	}
	return c.newRecord(r, us, out), nil
}

func (c *Cast) buildSchema(s *connect.Schema) (*connect.Schema, error) {
	if u := c.schemaCache.get(s); u != nil {
		return u, nil
	}
	var b *connect.SchemaBuilder
	if c.whole != 0 {
		b = copySchemaBasics(s, connect.NewSchemaBuilder(c.whole))
	} else {
		if s.Type != connect.TypeStruct {
			// The JVM fails on valueSchema.fields() of a non-struct schema.
			return nil, connect.DataErrorf("Cannot list fields on non-struct type")
		}
		b = copySchemaBasics(s, connect.StructBuilder())
		for _, f := range s.Fields() {
			t, ok := c.casts[f.Name]
			if !ok {
				b.Field(f.Name, f.Schema)
				continue
			}
			fb := connect.NewSchemaBuilder(t)
			if f.Schema.Optional {
				fb.Optional()
			}
			if f.Schema.Default != nil {
				dv, err := castValueToType(f.Schema, f.Schema.Default, t)
				if err != nil {
					return nil, err
				}
				fb.DefaultValue(dv)
			}
			fs, err := fb.Build()
			if err != nil {
				return nil, connect.DataErrorf("%v", err)
			}
			b.Field(f.Name, fs)
		}
	}
	if s.Optional {
		b.Optional()
	}
	if s.Default != nil {
		t := connect.TypeStruct
		if c.whole != 0 {
			t = c.whole
		}
		dv, err := castValueToType(s, s.Default, t)
		if err != nil {
			return nil, err
		}
		b.DefaultValue(dv)
	}
	u, err := b.Build()
	if err != nil {
		return nil, connect.DataErrorf("%v", err)
	}
	c.schemaCache.put(s, u)
	return u, nil
}

func javaClassOf(v any) string {
	n := javaClassName(v)
	if n == "[B" {
		return "class [B"
	}
	return "class " + n
}

func castValueToType(s *connect.Schema, v any, target connect.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	var t connect.Type
	if s == nil {
		t = inferType(v)
	} else {
		t = s.Type
	}
	if t == 0 {
		return nil, connect.DataErrorf("Cast transformation was passed a value of type %s which is not supported by Connect's data API", javaClassOf(v))
	}
	if !t.IsPrimitive() {
		return nil, connect.DataErrorf("Cast transformation does not support casting from %s; supported types are %s", t, typesString(castInputTypes))
	}
	orig := v
	if s != nil && s.Name != "" && target != connect.TypeString {
		if tm, ok := v.(time.Time); ok {
			switch s.Name {
			case connect.DateName:
				v = int32(tm.UnixMilli() / 86400000)
			case connect.TimeName:
				v = int32(tm.UnixMilli())
			case connect.TimestampName:
				v = tm.UnixMilli()
			}
		}
	}
	outOfRange := func() error {
		return connect.DataErrorf("Value (%s) was out of range for requested data type", javaToString(orig))
	}
	unexpected := func() error {
		return connect.DataErrorf("Unexpected type in Cast transformation: %s", javaClassOf(v))
	}
	switch target {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		var n int64
		switch x := v.(type) {
		case bool:
			if x {
				n = 1
			}
		case string:
			bits := map[connect.Type]int{connect.TypeInt8: 8, connect.TypeInt16: 16, connect.TypeInt32: 32, connect.TypeInt64: 64}[target]
			p, err := strconv.ParseInt(javaIntString(x), 10, bits)
			if err != nil {
				return nil, outOfRange()
			}
			n = p
		default:
			if target == connect.TypeInt64 {
				l, ok := numberLong(v)
				if !ok {
					return nil, unexpected()
				}
				n = l
			} else {
				i, ok := numberInt(v)
				if !ok {
					return nil, unexpected()
				}
				n = int64(i)
			}
		}
		switch target {
		case connect.TypeInt8:
			return int8(n), nil
		case connect.TypeInt16:
			return int16(n), nil
		case connect.TypeInt32:
			return int32(n), nil
		}
		return n, nil
	case connect.TypeFloat32, connect.TypeFloat64:
		bits := 64
		if target == connect.TypeFloat32 {
			bits = 32
		}
		var f float64
		switch x := v.(type) {
		case bool:
			if x {
				f = 1
			}
		case string:
			p, err := values.ParseJavaFloat(x, bits)
			if err != nil {
				return nil, outOfRange()
			}
			f = p
		default:
			d, ok := numberDouble(v)
			if !ok {
				return nil, unexpected()
			}
			f = d
		}
		if target == connect.TypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case connect.TypeBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			return strings.EqualFold(x, "true"), nil
		}
		l, ok := numberLong(v)
		if !ok {
			return nil, unexpected()
		}
		if f, isF := v.(float64); isF {
			return f2l(f) != 0, nil
		}
		return l != 0, nil
	case connect.TypeString:
		return javaToString(v), nil
	}
	return nil, connect.DataErrorf("%s is not supported in the Cast transformation.", target)
}

// javaIntString accepts what Integer.parseInt accepts (a leading '+' too).
func javaIntString(s string) string { return s }

// inferType is ConnectSchema.schemaType(value.getClass()); a Go int counts as INT64 here.
func inferType(v any) connect.Type {
	if _, ok := v.(int); ok {
		return connect.TypeInt64
	}
	return connect.InferType(v)
}
