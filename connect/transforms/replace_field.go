package transforms

import (
	"github.com/connectd/connectd/connect"
)

// ReplaceField is org.apache.kafka.connect.transforms.ReplaceField$Key / $Value.
type ReplaceField struct {
	side
	exclude, include []string
	renames, reverse map[string]string
	rnwd             bool
	cache            schemaCache
}

func parseRenames(l []string) (map[string]string, error) {
	m := map[string]string{}
	for _, mapping := range l {
		parts := javaSplit(mapping, ":")
		if len(parts) != 2 {
			return nil, &connect.ConfigError{Name: "renames", Value: javaList(l), Message: "Invalid rename mapping: " + mapping}
		}
		m[parts[0]] = parts[1]
	}
	return m, nil
}

func (*ReplaceField) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "exclude", Type: connect.ConfigList, Default: "", Importance: connect.Medium, Doc: "Fields to exclude. This takes precedence over the fields to include."}).
		Define(connect.ConfigKey{Name: "include", Type: connect.ConfigList, Default: "", Importance: connect.Medium, Doc: "Fields to include. If specified, only these fields will be used."}).
		Define(connect.ConfigKey{Name: "renames", Type: connect.ConfigList, Default: "", Importance: connect.Medium, Doc: "Field rename mappings.",
			Validator: connect.ValidatorFunc{Desc: "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>", Fn: func(_ string, v any) error {
				l, _ := v.([]string)
				_, err := parseRenames(l)
				return err
			}}}).
		Define(rnwdKey())
}
func (*ReplaceField) Close() error { return nil }
func (t *ReplaceField) Configure(props map[string]string) (err error) {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.exclude, t.include = cfg.List("exclude"), cfg.List("include")
	if t.renames, err = parseRenames(cfg.List("renames")); err != nil {
		return err
	}
	t.reverse = map[string]string{}
	for k, v := range t.renames {
		t.reverse[v] = k
	}
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	return nil
}

func (t *ReplaceField) keep(f string) bool {
	return !contains(t.exclude, f) && (len(t.include) == 0 || contains(t.include, f))
}

func (t *ReplaceField) renamed(f string) string {
	if n, ok := t.renames[f]; ok {
		return n
	}
	return f
}

func (t *ReplaceField) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	v := t.value(r)
	if v == nil {
		return r, nil
	}
	s := t.schema(r)
	if s == nil {
		m, err := requireMap(v, "field replacement")
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for _, k := range sortedKeys(m) {
			if t.keep(k) {
				out[t.renamed(k)] = m[k]
			}
		}
		return t.newRecord(r, nil, out), nil
	}
	st, err := requireStruct(v, "field replacement")
	if err != nil {
		return nil, err
	}
	us := t.cache.get(st.Schema())
	if us == nil {
		b := copySchemaBasics(st.Schema(), connect.StructBuilder())
		for _, f := range st.Schema().Fields() {
			if t.keep(f.Name) {
				b.Field(t.renamed(f.Name), f.Schema)
			}
		}
		if us, err = b.Build(); err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		t.cache.put(st.Schema(), us)
	}
	out := connect.NewStruct(us)
	for _, f := range us.Fields() {
		orig := f.Name
		if o, ok := t.reverse[f.Name]; ok {
			orig = o
		}
		if err := out.Put(f.Name, structGet(st, orig, t.rnwd)); err != nil {
			return nil, err
		}
	}
	return t.newRecord(r, us, out), nil
}
