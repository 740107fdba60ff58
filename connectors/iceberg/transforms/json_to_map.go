package transforms

import (
	"fmt"

	"github.com/connectd/connectd/connect"
)

// map<string,string> field "payload".
type JsonToMapTransform struct{ startAtRoot bool }

func (*JsonToMapTransform) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "json.root", Type: connect.ConfigBoolean, Default: false,
		Importance: connect.Medium, Doc: "Boolean value to start at root. False is one level in from the root"})
}

func (j *JsonToMapTransform) Configure(configs map[string]string) error {
	c, err := j.ConfigDef().Parse(configs)
	if err != nil {
		return err
	}
	j.startAtRoot = c.Bool("json.root")
	return nil
}

func (*JsonToMapTransform) Close() error { return nil }

func jsonToMapErr(msg string) error {
	return &jvmError{"org.apache.iceberg.connect.transforms.JsonToMapException", msg}
}

var (
	jsonMapSchema        = connect.MapBuilder(connect.StringSchema, connect.StringSchema).Optional().MustBuild()
	jsonRootSchema       = connect.StructBuilder().Field("payload", jsonMapSchema).MustBuild()
	arrayOptionalString  = connect.ArrayBuilder(connect.OptionalStringSchema).Optional().MustBuild()
	arrayMapOptionalStr  = connect.ArrayBuilder(connect.MapBuilder(connect.OptionalStringSchema, connect.OptionalStringSchema).Optional().MustBuild()).Optional().MustBuild()
	jsonBigIntegerSchema = connect.DecimalBuilder(0).Optional().MustBuild()
)

func (j *JsonToMapTransform) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.Value == nil {
		return r, nil
	}
	s, ok := r.Value.(string)
	if !ok {
		return nil, jsonToMapErr("record value is not a string, use StringConverter")
	}
	details := fmt.Sprintf("topic %s partition %d offset %d", r.Topic, r.Partition, r.Offset)
	node, err := parseJackson(s)
	if err != nil {
		return nil, jsonToMapErr("record.value is not valid json for record.value: " + details)
	}
	if node == nil || node.kind != jObject {
		return nil, jsonToMapErr("Expected json object for record.value after parsing: " + details)
	}
	if j.startAtRoot {
		st := connect.NewStruct(jsonRootSchema)
		st.PutIndex(0, populateMap(node))
		return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, jsonRootSchema, st, r.Timestamp, r.Headers), nil
	}
	b := connect.StructBuilder()
	for i, k := range node.keys {
		if fs := schemaFromNode(node.vals[i]); fs != nil {
			if k == "" {
				return nil, errEmptyFieldName
			}
			b.Field(k, fs)
		}
	}
	schema, err := b.Build()
	if err != nil {
		return nil, err
	}
	st := connect.NewStruct(schema)
	for i, f := range schema.Fields() {
		el := node.get(f.Name)
		var v any
		switch f.Schema.Type {
		case connect.TypeArray:
			v = populateArray(el, f.Schema.ValueSchema())
		case connect.TypeMap:
			v = populateMap(el)
		default:
			v = extractValue(el, f.Schema.Type)
		}
		st.PutIndex(i, v)
	}
	return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, schema, st, r.Timestamp, r.Headers), nil
}
