package transforms

import (
	"github.com/connectd/connectd/connect"
)

// SetSchemaMetadata is org.apache.kafka.connect.transforms.SetSchemaMetadata$Key / $Value.
type SetSchemaMetadata struct {
	side
	name    *string
	version *int32
	rnwd    bool
}

func (*SetSchemaMetadata) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "schema.name", Type: connect.ConfigString, Default: nil, Importance: connect.High, Doc: "Schema name to set."}).
		Define(connect.ConfigKey{Name: "schema.version", Type: connect.ConfigInt, Default: nil, Importance: connect.High, Doc: "Schema version to set."}).
		Define(rnwdKey())
}
func (*SetSchemaMetadata) Close() error { return nil }
func (t *SetSchemaMetadata) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	if _, ok := props["schema.name"]; ok {
		n := cfg.String("schema.name")
		t.name = &n
	}
	if _, ok := props["schema.version"]; ok {
		v := int32(cfg.Int("schema.version"))
		t.version = &v
	}
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	if t.name == nil && t.version == nil {
		return &connect.ConfigError{Message: "Neither schema name nor version configured"}
	}
	return nil
}

func (t *SetSchemaMetadata) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	s, v := t.schema(r), t.value(r)
	if s == nil && v == nil {
		return r, nil
	}
	if err := requireSchema(s, "updating schema metadata"); err != nil {
		return nil, err
	}
	if s.Type != connect.TypeStruct {
		// The JVM builds the new schema from schema.fields(), which fails for non-struct schemas.
		return nil, connect.DataErrorf("Cannot list fields on non-struct type")
	}
	b := connect.BuilderFrom(s)
	if t.name != nil {
		b.Name(*t.name)
	}
	if t.version != nil {
		b.Version(*t.version)
	}
	us, err := b.Build()
	if err != nil {
		return nil, connect.DataErrorf("%v", err)
	}
	if st, ok := v.(*connect.Struct); ok {
		ns := connect.NewStruct(us)
		for _, f := range us.Fields() {
			ns.PutIndex(f.Index, structGet(st, f.Name, t.rnwd))
		}
		v = ns
	}
	return t.newRecord(r, us, v), nil
}

// ValueToKey is org.apache.kafka.connect.transforms.ValueToKey.
type ValueToKey struct {
	fields []string
	rnwd   bool
	cache  schemaCache
}

func (*ValueToKey) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.ConfigList, Default: connect.NoDefault, Validator: nonNullNonEmptyList, Importance: connect.High,
			Doc: "Field names on the record value to extract as the record key."}).
		Define(rnwdKey())
}
func (*ValueToKey) Close() error { return nil }
func (t *ValueToKey) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.fields = cfg.List("fields")
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	return nil
}

func (t *ValueToKey) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, "copying fields from value to key")
		if err != nil {
			return nil, err
		}
		key := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			key[f] = m[f]
		}
		return r.WithKey(nil, key), nil
	}
	st, err := requireStruct(r.Value, "copying fields from value to key")
	if err != nil {
		return nil, err
	}
	ks := t.cache.get(st.Schema())
	if ks == nil {
		b := connect.StructBuilder()
		for _, f := range t.fields {
			fv, ok := st.Schema().Field(f)
			if !ok {
				return nil, connect.DataErrorf("Field does not exist: %s", f)
			}
			b.Field(f, fv.Schema)
		}
		if ks, err = b.Build(); err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		t.cache.put(st.Schema(), ks)
	}
	key := connect.NewStruct(ks)
	for _, f := range t.fields {
		if err := key.Put(f, structGet(st, f, t.rnwd)); err != nil {
			return nil, err
		}
	}
	return r.NewRecord(r.Topic, r.Partition, ks, key, st.Schema(), st, r.Timestamp, r.Headers), nil
}
