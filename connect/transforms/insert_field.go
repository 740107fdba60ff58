package transforms

import (
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// InsertField is org.apache.kafka.connect.transforms.InsertField$Key / $Value.
type InsertField struct {
	side
	topic, partition, offset, timestamp, static *insertionSpec
	staticValue                                 string
	rnwd                                        bool
	cache                                       schemaCache
}

type insertionSpec struct {
	name     string
	optional bool
}

func parseInsertionSpec(s string, set bool) *insertionSpec {
	if !set {
		return nil
	}
	if strings.HasSuffix(s, "?") {
		return &insertionSpec{s[:len(s)-1], true}
	}
	if strings.HasSuffix(s, "!") {
		return &insertionSpec{s[:len(s)-1], false}
	}
	return &insertionSpec{s, true}
}

const optionalityDoc = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."

func (*InsertField) ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	for _, k := range [][2]string{{"topic.field", "Field name for Kafka topic. " + optionalityDoc},
		{"partition.field", "Field name for Kafka partition. " + optionalityDoc},
		{"offset.field", "Field name for Kafka offset - only applicable to sink connectors.<br/>" + optionalityDoc},
		{"timestamp.field", "Field name for record timestamp. " + optionalityDoc},
		{"static.field", "Field name for static data field. " + optionalityDoc},
		{"static.value", "Static field value, if field name configured."}} {
		d.Define(connect.ConfigKey{Name: k[0], Type: connect.ConfigString, Default: nil, Importance: connect.Medium, Doc: k[1]})
	}
	return d.Define(rnwdKey())
}
func (*InsertField) Close() error { return nil }

func (t *InsertField) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	get := func(k string) *insertionSpec {
		_, set := props[k]
		return parseInsertionSpec(cfg.String(k), set)
	}
	t.topic, t.partition, t.offset, t.timestamp, t.static = get("topic.field"), get("partition.field"), get("offset.field"), get("timestamp.field"), get("static.field")
	_, hasStatic := props["static.value"]
	t.staticValue = cfg.String("static.value")
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	if t.topic == nil && t.partition == nil && t.offset == nil && t.timestamp == nil && t.static == nil {
		return &connect.ConfigError{Message: "No field insertion configured"}
	}
	if t.static != nil && !hasStatic {
		return &connect.ConfigError{Name: "static.value", Value: "null", Message: "No value specified for static field: " + t.static.name}
	}
	return nil
}

func (t *InsertField) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	v := t.value(r)
	if v == nil {
		return r, nil
	}
	s := t.schema(r)
	hasTS := r.Timestamp != connect.NoTimestamp
	if s == nil {
		m, err := requireMap(v, "field insertion")
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		if t.topic != nil {
			out[t.topic.name] = r.Topic
		}
		if t.partition != nil {
			out[t.partition.name] = r.Partition
		}
		if t.offset != nil {
			out[t.offset.name] = r.Offset
		}
		if t.timestamp != nil && hasTS {
			out[t.timestamp.name] = r.Timestamp
		}
		if t.static != nil {
			out[t.static.name] = t.staticValue
		}
		return t.newRecord(r, nil, out), nil
	}
	st, err := requireStruct(v, "field insertion")
	if err != nil {
		return nil, err
	}
	us := t.cache.get(st.Schema())
	if us == nil {
		b := copySchemaBasics(st.Schema(), connect.StructBuilder())
		for _, f := range st.Schema().Fields() {
			b.Field(f.Name, f.Schema)
		}
		add := func(sp *insertionSpec, opt, req *connect.Schema) {
			if sp != nil {
				if sp.optional {
					b.Field(sp.name, opt)
				} else {
					b.Field(sp.name, req)
				}
			}
		}
		add(t.topic, connect.OptionalStringSchema, connect.StringSchema)
		add(t.partition, connect.OptionalInt32Schema, connect.Int32Schema)
		add(t.offset, connect.OptionalInt64Schema, connect.Int64Schema)
		add(t.timestamp, connect.OptionalTimestampSchema, connect.TimestampSchema)
		add(t.static, connect.OptionalStringSchema, connect.StringSchema)
		if us, err = b.Build(); err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		t.cache.put(st.Schema(), us)
	}
	out := connect.NewStruct(us)
	for _, f := range st.Schema().Fields() {
		if err := out.Put(f.Name, structGet(st, f.Name, t.rnwd)); err != nil {
			return nil, err
		}
	}
	put := func(sp *insertionSpec, val any) error {
		if sp == nil {
			return nil
		}
		return out.Put(sp.name, val)
	}
	if err := put(t.topic, r.Topic); err != nil {
		return nil, err
	}
	if err := put(t.partition, r.Partition); err != nil {
		return nil, err
	}
	if err := put(t.offset, r.Offset); err != nil {
		return nil, err
	}
	if hasTS {
		if err := put(t.timestamp, time.UnixMilli(r.Timestamp).UTC()); err != nil {
			return nil, err
		}
	}
	if err := put(t.static, t.staticValue); err != nil {
		return nil, err
	}
	return t.newRecord(r, us, out), nil
}
