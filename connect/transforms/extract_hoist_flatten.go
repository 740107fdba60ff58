package transforms

import (
	"github.com/connectd/connectd/connect"
)

// ExtractField is org.apache.kafka.connect.transforms.ExtractField$Key / $Value.
type ExtractField struct {
	side
	path     fieldPath
	original string
	rnwd     bool
}

func (*ExtractField) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.ConfigString, Default: connect.NoDefault, Importance: connect.Medium, Doc: "Field name to extract."}).
		Define(rnwdKey()).
		Define(fieldSyntaxKey())
}
func (*ExtractField) Close() error { return nil }

func (t *ExtractField) Configure(props map[string]string) (err error) {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.original = cfg.String("field")
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	t.path, err = newFieldPath(t.original, cfg.String(fieldSyntaxVersionKey))
	return err
}

// UnknownFieldError is the JVM's IllegalArgumentException("Unknown field: ...").
type UnknownFieldError struct{ Msg string }

func (e *UnknownFieldError) Error() string     { return e.Msg }
func (e *UnknownFieldError) ClassName() string { return "java.lang.IllegalArgumentException" }

func (t *ExtractField) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	s := t.schema(r)
	if s == nil {
		m, err := requireMapOrNull(t.value(r), "field extraction")
		if err != nil {
			return nil, err
		}
		if m == nil {
			return t.newRecord(r, nil, nil), nil
		}
		v, err := t.path.valueFromMap(m)
		if err != nil {
			return nil, err
		}
		return t.newRecord(r, nil, v), nil
	}
	st, err := requireStructOrNull(t.value(r), "field extraction")
	if err != nil {
		return nil, err
	}
	f, ok := t.path.fieldFrom(s)
	if !ok {
		return nil, &UnknownFieldError{Msg: "Unknown field: " + t.original}
	}
	v, err := t.path.valueFromStruct(st, t.rnwd)
	if err != nil {
		return nil, err
	}
	return t.newRecord(r, f.Schema, v), nil
}

// HoistField is org.apache.kafka.connect.transforms.HoistField$Key / $Value.
type HoistField struct {
	side
	field string
	cache schemaCache
}

func (*HoistField) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "field", Type: connect.ConfigString, Default: connect.NoDefault, Importance: connect.Medium,
		Doc: "Field name for the single field that will be created in the resulting Struct or Map."})
}
func (*HoistField) Close() error { return nil }
func (t *HoistField) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.field = cfg.String("field")
	return nil
}

func (t *HoistField) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	s, v := t.schema(r), t.value(r)
	if s == nil {
		return t.newRecord(r, nil, map[string]any{t.field: v}), nil
	}
	us := t.cache.get(s)
	if us == nil {
		us = connect.StructBuilder().Field(t.field, s).MustBuild()
		t.cache.put(s, us)
	}
	st := connect.NewStruct(us)
	if err := st.Put(t.field, v); err != nil {
		return nil, err
	}
	return t.newRecord(r, us, st), nil
}

// Flatten is org.apache.kafka.connect.transforms.Flatten$Key / $Value.
type Flatten struct {
	side
	delimiter string
	cache     schemaCache
}

func (*Flatten) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "delimiter", Type: connect.ConfigString, Default: ".", Importance: connect.Medium,
		Doc: "Delimiter to insert between field names from the input record when generating field names for the output record"})
}
func (*Flatten) Close() error { return nil }
func (t *Flatten) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.delimiter = cfg.String("delimiter")
	if raw, ok := props["delimiter"]; ok {
		t.delimiter = raw // STRING values are trimmed by the parser; the JVM keeps them as given
	}
	return nil
}

func (t *Flatten) name(prefix, f string) string {
	if prefix == "" {
		return f
	}
	return prefix + t.delimiter + f
}

func (t *Flatten) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	v := t.value(r)
	if v == nil {
		return r, nil
	}
	s := t.schema(r)
	if s == nil {
		m, err := requireMap(v, "flattening")
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		if err := t.schemaless(m, "", out); err != nil {
			return nil, err
		}
		return t.newRecord(r, nil, out), nil
	}
	st, err := requireStructOrNull(v, "flattening")
	if err != nil {
		return nil, err
	}
	us := t.cache.get(s)
	if us == nil {
		b := copySchemaBasics(s, connect.StructBuilder())
		def, _ := s.Default.(*connect.Struct)
		if err := t.buildSchema(s, "", b, s.Optional, def); err != nil {
			return nil, err
		}
		if us, err = b.Build(); err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		t.cache.put(s, us)
	}
	out := connect.NewStruct(us)
	if err := t.buildValue(st, "", out); err != nil {
		return nil, err
	}
	return t.newRecord(r, us, out), nil
}

func (t *Flatten) schemaless(in map[string]any, prefix string, out map[string]any) error {
	for _, k := range sortedKeys(in) {
		name := t.name(prefix, k)
		v := in[k]
		if v == nil {
			out[name] = nil
			continue
		}
		switch it := inferType(v); it {
		case 0:
			return connect.DataErrorf("Flatten transformation was passed a value of type %s which is not supported by Connect's data API", javaClassOf(v))
		case connect.TypeMap:
			m, err := requireMap(v, "flattening")
			if err != nil {
				return err
			}
			if err := t.schemaless(m, name, out); err != nil {
				return err
			}
		case connect.TypeStruct:
			return connect.DataErrorf("Flatten transformation does not support %s for record without schemas (for field %s).", javaClassOf(v), name)
		default:
			out[name] = v
		}
	}
	return nil
}

func (t *Flatten) buildSchema(s *connect.Schema, prefix string, b *connect.SchemaBuilder, optional bool, parentDefault *connect.Struct) error {
	for _, f := range s.Fields() {
		name := t.name(prefix, f.Name)
		opt := optional || f.Schema.Optional
		var def any
		if f.Schema.Default != nil {
			def = f.Schema.Default
		} else if parentDefault != nil {
			def = parentDefault.Get(f.Name)
		}
		switch f.Schema.Type {
		case connect.TypeStruct:
			ds, _ := def.(*connect.Struct)
			if err := t.buildSchema(f.Schema, name, b, opt, ds); err != nil {
				return err
			}
		case connect.TypeMap:
			return connect.DataErrorf("Flatten transformation does not support %s for record with schemas (for field %s).", f.Schema.Type, name)
		default:
			fb := copySchemaBasics(f.Schema, newBuilderOfType(f.Schema))
			if opt {
				fb.Optional()
			}
			if def != nil {
				fb.DefaultValue(def)
			}
			fs, err := fb.Build()
			if err != nil {
				return connect.DataErrorf("%v", err)
			}
			b.Field(name, fs)
		}
	}
	return nil
}

func (t *Flatten) buildValue(st *connect.Struct, prefix string, out *connect.Struct) error {
	if st == nil {
		return nil
	}
	for _, f := range st.Schema().Fields() {
		name := t.name(prefix, f.Name)
		switch f.Schema.Type {
		case connect.TypeStruct:
			sub, _ := st.Get(f.Name).(*connect.Struct)
			if err := t.buildValue(sub, name, out); err != nil {
				return err
			}
		case connect.TypeMap:
			return connect.DataErrorf("Flatten transformation does not support %s for record with schemas (for field %s).", f.Schema.Type, name)
		default:
			if err := out.Put(name, st.Get(f.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}
