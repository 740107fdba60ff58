package transforms

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// KafkaMetadataTransform adds the record's topic, partition, offset and timestamp, either
// nested under field_name (nested=true) or as field_name_topic, ... at the top level, plus an
// optional constant external_field ("name,value").
type KafkaMetadataTransform struct {
	fieldName string
	nested    bool
	extName   string
	extValue  string
	hasExt    bool
}

func (*KafkaMetadataTransform) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field_name", Type: connect.ConfigString, Default: "_kafka_metadata", Importance: connect.Low,
			Doc: "the field to append Kafka metadata under (or prefix fields with)"}).
		Define(connect.ConfigKey{Name: "nested", Type: connect.ConfigBoolean, Default: false, Importance: connect.Low,
			Doc: "(true/false) to make a nested record under name or prefix names on the top level"}).
		Define(connect.ConfigKey{Name: "external_field", Type: connect.ConfigString, Default: nil, Importance: connect.Low,
			Doc: "key,value representing a String to be injected on Kafka metadata (e.g. Cluster)"})
}

func (k *KafkaMetadataTransform) Configure(configs map[string]string) error {
	c, err := k.ConfigDef().Parse(configs)
	if err != nil {
		return err
	}
	k.fieldName = c.String("field_name")
	k.nested = c.Bool("nested")
	if ext := c.String("external_field"); ext != "" {
		parts := strings.Split(ext, ",")
		if len(parts) != 2 {
			return &connect.ConfigError{Message: fmt.Sprintf("Could not parse %s for external_field", ext)}
		}
		k.extName, k.extValue, k.hasExt = parts[0], parts[1], true
	}
	return nil
}

func (*KafkaMetadataTransform) Close() error { return nil }

func (k *KafkaMetadataTransform) name(n string) string {
	if k.nested {
		return n
	}
	return k.fieldName + "_" + n
}

func (k *KafkaMetadataTransform) metaFields() []connect.Field {
	str := connect.NewSchemaBuilder(connect.TypeString).MustBuild()
	fs := []connect.Field{
		{Name: k.name("topic"), Schema: str},
		{Name: k.name("partition"), Schema: connect.Int32Builder().MustBuild()},
		{Name: k.name("offset"), Schema: connect.Int64Builder().MustBuild()},
		{Name: k.name("timestamp"), Schema: connect.Int64Builder().Optional().MustBuild()},
	}
	if k.hasExt {
		fs = append(fs, connect.Field{Name: k.name(k.extName), Schema: str})
	}
	return fs
}

func (k *KafkaMetadataTransform) metaValues(r *connect.SinkRecord) []any {
	var ts any
	if r.Timestamp != connect.NoTimestamp {
		ts = r.Timestamp
	}
	vs := []any{r.Topic, r.Partition, r.Offset, ts}
	if k.hasExt {
		vs = append(vs, k.extValue)
	}
	return vs
}

func (k *KafkaMetadataTransform) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.Value == nil {
		return r, nil
	}
	fs, vs := k.metaFields(), k.metaValues(r)
	if r.ValueSchema == nil {
		value, ok := r.Value.(map[string]any)
		if !ok {
			return nil, connect.DataErrorf("Only Map objects supported in absence of schema for [KafkaMetadata transform], found: %T", r.Value)
		}
		nv := make(map[string]any, len(value)+len(fs))
		for key, v := range value {
			nv[key] = v
		}
		if k.nested {
			m := map[string]any{}
			for i, f := range fs {
				if vs[i] != nil {
					m[f.Name] = vs[i]
				}
			}
			nv[k.fieldName] = m
		} else {
			for i, f := range fs {
				if vs[i] != nil {
					nv[f.Name] = vs[i]
				}
			}
		}
		return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, nil, nv, r.Timestamp, r.Headers), nil
	}
	value, ok := r.Value.(*connect.Struct)
	if !ok {
		return nil, connect.DataErrorf("Only Struct objects supported for [KafkaMetadataTransform], found: %T", r.Value)
	}
	nb := connect.StructBuilder()
	if r.ValueSchema.Name != "" {
		nb.Name(r.ValueSchema.Name)
	}
	for _, f := range r.ValueSchema.Fields() {
		nb.Field(f.Name, f.Schema)
	}
	var nestedSchema *connect.Schema
	if k.nested {
		b := connect.StructBuilder()
		for _, f := range fs {
			b.Field(f.Name, f.Schema)
		}
		nestedSchema = b.MustBuild()
		nb.Field(k.fieldName, nestedSchema)
	} else {
		for _, f := range fs {
			nb.Field(f.Name, f.Schema)
		}
	}
	ns, err := nb.Build()
	if err != nil {
		return nil, err
	}
	nv := connect.NewStruct(ns)
	n := len(r.ValueSchema.Fields())
	for i := range r.ValueSchema.Fields() {
		nv.PutIndex(i, value.GetIndex(i))
	}
	if k.nested {
		m := connect.NewStruct(nestedSchema)
		for i := range fs {
			m.PutIndex(i, vs[i])
		}
		nv.PutIndex(n, m)
	} else {
		for i := range fs {
			nv.PutIndex(n+i, vs[i])
		}
	}
	return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, ns, nv, r.Timestamp, r.Headers), nil
}
