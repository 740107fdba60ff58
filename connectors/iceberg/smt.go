package iceberg

import (
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// SMT class names (the Iceberg sink's own transforms, and Tabular's older package).
const (
	DebeziumTransformClass      = "org.apache.iceberg.connect.transforms.DebeziumTransform"
	KafkaMetadataTransformClass = "org.apache.iceberg.connect.transforms.KafkaMetadataTransform"
	// tabularTransforms is the package of the same SMTs in Tabular's iceberg-kafka-connect, accepted as aliases.
	tabularTransforms = "io.tabular.iceberg.connect.transforms."
)

// tabularAlias is the Tabular class name of an Apache Iceberg SMT class, for those Tabular shipped (all but
// CopyValue).
func tabularAlias(class string) []string {
	if class == CopyValueClass {
		return nil
	}
	return []string{tabularTransforms + class[strings.LastIndexByte(class, '.')+1:]}
}

func init() {
	registerMoreSMTs()
	connect.Register(connect.Plugin{Class: DebeziumTransformClass, Aliases: tabularAlias(DebeziumTransformClass),
		Type: connect.PluginTransformation, Version: Version, New: func() any { return &DebeziumTransform{} }})
	connect.Register(connect.Plugin{Class: KafkaMetadataTransformClass, Aliases: tabularAlias(KafkaMetadataTransformClass), Type: connect.PluginTransformation,
		Version: Version, New: func() any { return &KafkaMetadataTransform{} }})
}

// DebeziumTransform promotes `after` (or `before` for deletes) to the top level and adds a
// `_cdc` struct: op (I/U/D), ts, offset, source (db.table), target (cdc.target.pattern), key.
type DebeziumTransform struct {
	targetPattern string
}

func (*DebeziumTransform) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "cdc.target.pattern", Type: connect.ConfigString, Default: nil,
		Importance: connect.Medium, Doc: "Pattern to use for setting the CDC target field value."})
}

func (d *DebeziumTransform) Configure(configs map[string]string) error {
	d.targetPattern = configs["cdc.target.pattern"]
	return nil
}

func (*DebeziumTransform) Close() error { return nil }

func mapDebeziumOp(op string) string {
	switch op {
	case "u":
		return "U"
	case "d":
		return "D"
	}
	return "I"
}

func (d *DebeziumTransform) target(db, table string) string {
	if d.targetPattern == "" {
		return db + "." + table
	}
	return strings.ReplaceAll(strings.ReplaceAll(d.targetPattern, "{db}", db), "{table}", table)
}

func (d *DebeziumTransform) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.Value == nil {
		return r, nil
	}
	if r.ValueSchema == nil {
		return d.applySchemaless(r)
	}
	value, ok := r.Value.(*connect.Struct)
	if !ok {
		return nil, connect.DataErrorf("Only Struct objects supported for [Debezium transform], found: %T", r.Value)
	}
	op := mapDebeziumOp(fmt.Sprint(value.Get("op")))
	payloadField := "after"
	if op == "D" {
		payloadField = "before"
	}
	pf, ok := value.Schema().Field(payloadField)
	if !ok {
		return nil, connect.DataErrorf("Debezium transform: no %s field", payloadField)
	}
	payload, _ := value.Get(payloadField).(*connect.Struct)
	payloadSchema := pf.Schema

	cb := connect.StructBuilder().
		Field("op", connect.NewSchemaBuilder(connect.TypeString).MustBuild()).
		Field("ts", connect.TimestampSchema).
		Field("offset", connect.Int64Builder().Optional().MustBuild()).
		Field("source", connect.NewSchemaBuilder(connect.TypeString).MustBuild()).
		Field("target", connect.NewSchemaBuilder(connect.TypeString).MustBuild())
	if r.KeySchema != nil {
		cb.Field("key", r.KeySchema)
	}
	cdcSchema, err := cb.Build()
	if err != nil {
		return nil, err
	}
	cdc := connect.NewStruct(cdcSchema)
	cdc.PutIndex(0, op)
	if ms, err := toInt64(value.Get("ts_ms")); err == nil && value.Get("ts_ms") != nil {
		cdc.PutIndex(1, time.UnixMilli(ms).UTC())
	}
	cdc.PutIndex(2, r.Offset)
	src, _ := value.Get("source").(*connect.Struct)
	var db, table string
	if src != nil {
		if _, ok := src.Schema().Field("schema"); ok {
			db = fmt.Sprint(src.Get("schema"))
		} else {
			db = fmt.Sprint(src.Get("db"))
		}
		table = fmt.Sprint(src.Get("table"))
	}
	cdc.PutIndex(3, db+"."+table)
	cdc.PutIndex(4, d.target(db, table))
	if r.KeySchema != nil {
		cdc.PutIndex(5, r.Key)
	}

	nb := connect.StructBuilder()
	if payloadSchema.Name != "" {
		nb.Name(payloadSchema.Name)
	}
	for _, f := range payloadSchema.Fields() {
		nb.Field(f.Name, f.Schema)
	}
	nb.Field("_cdc", cdcSchema)
	newSchema, err := nb.Build()
	if err != nil {
		return nil, err
	}
	nv := connect.NewStruct(newSchema)
	for i, f := range payloadSchema.Fields() {
		if payload != nil {
			nv.PutIndex(i, payload.GetIndex(f.Index))
		}
	}
	nv.PutIndex(len(payloadSchema.Fields()), cdc)
	return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, newSchema, nv, r.Timestamp, r.Headers), nil
}

func (d *DebeziumTransform) applySchemaless(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	value, ok := r.Value.(map[string]any)
	if !ok {
		return nil, connect.DataErrorf("Only Map objects supported in absence of schema for [Debezium transform], found: %T", r.Value)
	}
	op := mapDebeziumOp(fmt.Sprint(value["op"]))
	var payload any
	if op == "D" {
		payload = value["before"]
	} else {
		payload = value["after"]
	}
	pm, ok := payload.(map[string]any)
	if !ok {
		return nil, nil // as the JVM: not a map, skip the record
	}
	cdc := map[string]any{"op": op, "ts": value["ts_ms"], "offset": r.Offset}
	src, ok := value["source"].(map[string]any)
	if !ok {
		return nil, connect.DataErrorf("Only Map objects supported in absence of schema for [Debezium transform], found: %T", value["source"])
	}
	var db string
	if s, ok := src["schema"]; ok {
		db = fmt.Sprint(s)
	} else {
		db = fmt.Sprint(src["db"])
	}
	table := fmt.Sprint(src["table"])
	cdc["source"] = db + "." + table
	cdc["target"] = d.target(db, table)
	if km, ok := r.Key.(map[string]any); ok {
		cdc["key"] = km
	}
	nv := make(map[string]any, len(pm)+1)
	for k, v := range pm {
		nv[k] = v
	}
	nv["_cdc"] = cdc
	return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, nil, nv, r.Timestamp, r.Headers), nil
}

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
