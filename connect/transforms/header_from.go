package transforms

import (
	"github.com/connectd/connectd/connect"
)

// HeaderFrom is org.apache.kafka.connect.transforms.HeaderFrom$Key / $Value.
type HeaderFrom struct {
	side
	fields, headers []string
	move            bool
	rnwd            bool
	cache           schemaCache
}

func (*HeaderFrom) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.ConfigList, Default: connect.NoDefault, Validator: nonEmptyList, Importance: connect.High,
			Doc: "Field names in the record whose values are to be copied or moved to headers."}).
		Define(connect.ConfigKey{Name: "headers", Type: connect.ConfigList, Default: connect.NoDefault, Validator: nonEmptyList, Importance: connect.High,
			Doc: "Header names, in the same order as the field names listed in the fields configuration property."}).
		Define(connect.ConfigKey{Name: "operation", Type: connect.ConfigString, Default: connect.NoDefault, Validator: connect.In("move", "copy"), Importance: connect.High,
			Doc: "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."}).
		Define(rnwdKey())
}
func (*HeaderFrom) Close() error { return nil }
func (t *HeaderFrom) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.fields, t.headers = cfg.List("fields"), cfg.List("headers")
	if len(t.fields) != len(t.headers) {
		return &connect.ConfigError{Message: "'fields' config must have the same number of elements as 'headers' config."}
	}
	t.move = cfg.String("operation") == "move"
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	return nil
}

func (t *HeaderFrom) op() string {
	if t.move {
		return "move"
	}
	return "copy"
}

func (t *HeaderFrom) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	s, v := t.schema(r), t.value(r)
	hs := r.Headers.Clone()
	if s == nil {
		m, err := requireMap(v, "header "+t.op())
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		for i, f := range t.fields {
			if t.move {
				delete(out, f)
			}
			hs = append(hs, connect.Header{Key: t.headers[i], Value: m[f]})
		}
		return t.withHeaders(r, nil, out, hs), nil
	}
	st, err := requireStruct(v, "header "+t.op())
	if err != nil {
		return nil, err
	}
	us, uv := s, st
	if t.move {
		if us = t.cache.get(s); us == nil {
			b := copySchemaBasics(s, connect.StructBuilder())
			for _, f := range s.Fields() {
				if !contains(t.fields, f.Name) {
					b.Field(f.Name, f.Schema)
				}
			}
			us = b.MustBuild()
			t.cache.put(s, us)
		}
		uv = connect.NewStruct(us)
		for _, f := range us.Fields() {
			if err := uv.Put(f.Name, structGet(st, f.Name, t.rnwd)); err != nil {
				return nil, err
			}
		}
	}
	for i, f := range t.fields {
		fld, ok := s.Field(f)
		if !ok {
			return nil, connect.DataErrorf("Cannot invoke \"org.apache.kafka.connect.data.Field.schema()\" because the return value of \"org.apache.kafka.connect.data.Schema.field(String)\" is null")
		}
		hs = append(hs, connect.Header{Key: t.headers[i], Schema: fld.Schema, Value: structGet(st, f, t.rnwd)})
	}
	return t.withHeaders(r, us, uv, hs), nil
}

func (t *HeaderFrom) withHeaders(r *connect.SinkRecord, s *connect.Schema, v any, hs connect.Headers) *connect.SinkRecord {
	out := t.newRecord(r, s, v)
	out.Headers = hs
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
