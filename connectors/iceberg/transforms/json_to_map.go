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
	var fieldNodes []*jNode // by field index: a lookup by name per field is quadratic in wide objects
	for i, k := range node.keys {
		if fs := schemaFromNode(node.vals[i]); fs != nil {
			if k == "" {
				return nil, errEmptyFieldName
			}
			b.Field(k, fs)
			fieldNodes = append(fieldNodes, node.vals[i])
		}
	}
	schema, err := b.Build()
	if err != nil {
		return nil, err
	}
	st := connect.NewStruct(schema)
	for i, f := range schema.Fields() {
		el := fieldNodes[i]
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

func schemaFromNode(n *jNode) *connect.Schema {
	switch n.kind {
	case jNull:
		return nil
	case jArray:
		return arraySchema(n)
	case jObject:
		if len(n.vals) == 0 {
			return nil
		}
		return jsonMapSchema
	}
	return nodeSchema(n.kind)
}

func nodeSchema(k jKind) *connect.Schema {
	switch k {
	case jBool:
		return connect.OptionalBoolSchema
	case jText, jArray:
		return connect.OptionalStringSchema
	case jInt:
		return connect.OptionalInt32Schema
	case jLong:
		return connect.OptionalInt64Schema
	case jDouble:
		return connect.OptionalFloat64Schema
	case jObject:
		return jsonMapSchema
	case jBigInt:
		return jsonBigIntegerSchema
	}
	return nil
}

func arraySchema(n *jNode) *connect.Schema {
	if len(n.vals) == 0 {
		return nil
	}
	kind := n.vals[0].kind
	for _, e := range n.vals[1:] {
		if e.kind != kind {
			return arrayOptionalString // inconsistent element types
		}
	}
	switch kind {
	case jNull:
		return arrayOptionalString
	case jObject:
		return arrayMapOptionalStr
	case jArray:
		var set []*connect.Schema // a HashSet<Schema> (null included)
		for _, e := range n.vals {
			s := schemaFromNode(e)
			found := false
			for _, x := range set {
				if x.Equal(s) {
					found = true
					break
				}
			}
			if !found {
				set = append(set, s)
			}
		}
		if len(set) > 1 {
			return connect.ArrayBuilder(arrayOptionalString).Optional().MustBuild()
		}
		if set[0] == nil {
			return nil
		}
		return connect.ArrayBuilder(set[0]).Optional().MustBuild()
	}
	return connect.ArrayBuilder(nodeSchema(kind)).Optional().MustBuild()
}

func extractValue(n *jNode, t connect.Type) any {
	switch t {
	case connect.TypeString:
		return nodeToText(n)
	case connect.TypeBoolean:
		return n.b
	case connect.TypeInt32:
		return int32(n.i)
	case connect.TypeInt64:
		return n.i
	case connect.TypeFloat64:
		return n.d
	case connect.TypeMap:
		return populateMap(n)
	case connect.TypeBytes:
		return connect.Decimal{Unscaled: n.big, Scale: 0}
	}
	return nil
}

func populateArray(n *jNode, s *connect.Schema) []any {
	out := make([]any, 0, len(n.vals))
	for _, e := range n.vals {
		if s.Type == connect.TypeArray {
			out = append(out, populateArray(e, s.ValueSchema()))
		} else {
			out = append(out, extractValue(e, s.Type))
		}
	}
	return out
}

func populateMap(n *jNode) map[string]any {
	m := make(map[string]any, len(n.keys))
	if n.kind != jObject {
		return m
	}
	for i, k := range n.keys {
		m[k] = nodeToText(n.vals[i])
	}
	return m
}
