package transforms

import (
	"github.com/connectd/connectd/connect"
)

// CopyValue copies the value of source.field into a new field target.field (appended last).
type CopyValue struct{ source, target string }

func (*CopyValue) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "source.field", Type: connect.ConfigString, Default: connect.NoDefault, Importance: connect.High, Doc: "Source field name."}).
		Define(connect.ConfigKey{Name: "target.field", Type: connect.ConfigString, Default: connect.NoDefault, Importance: connect.High, Doc: "Target field name."})
}

func (c *CopyValue) Configure(configs map[string]string) error {
	cfg, err := c.ConfigDef().Parse(configs)
	if err != nil {
		return err
	}
	c.source, c.target = cfg.String("source.field"), cfg.String("target.field")
	return nil
}

func (*CopyValue) Close() error { return nil }

func (c *CopyValue) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.Value == nil {
		return r, nil
	}
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, "copy value")
		if err != nil {
			return nil, err
		}
		nv := make(map[string]any, len(m)+1)
		for k, v := range m {
			nv[k] = v
		}
		nv[c.target] = m[c.source]
		return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, nil, nv, r.Timestamp, r.Headers), nil
	}
	value, err := requireStruct(r.Value, "copy value")
	if err != nil {
		return nil, err
	}
	s := value.Schema()
	b := connect.StructBuilder() // SchemaUtil.copySchemaBasics: name, version, doc, parameters
	if s.Name != "" {
		b.Name(s.Name)
	}
	if s.Version != nil {
		b.Version(*s.Version)
	}
	if s.Doc != "" {
		b.Doc(s.Doc)
	}
	for k, v := range s.Parameters {
		b.Parameter(k, v)
	}
	for _, f := range s.Fields() {
		b.Field(f.Name, f.Schema)
	}
	sf, ok := s.Field(c.source)
	if !ok {
		return nil, npe(`Cannot invoke "org.apache.kafka.connect.data.Field.schema()" because the return value of "org.apache.kafka.connect.data.Schema.field(String)" is null`)
	}
	if c.target == "" {
		return nil, errEmptyFieldName
	}
	if _, dup := s.Field(c.target); dup {
		return nil, &jvmError{"org.apache.kafka.connect.errors.SchemaBuilderException", "Cannot create field because of field name duplication " + c.target}
	}
	b.Field(c.target, sf.Schema)
	ns, err := b.Build()
	if err != nil {
		return nil, err
	}
	nv := connect.NewStruct(ns)
	for i, f := range s.Fields() {
		nv.PutIndex(i, value.Get(f.Name))
	}
	nv.PutIndex(len(s.Fields()), value.Get(c.source))
	return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, ns, nv, r.Timestamp, r.Headers), nil
}
