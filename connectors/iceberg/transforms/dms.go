package transforms

import (
	"github.com/connectd/connectd/connect"
)

// DmsTransform promotes AWS DMS `data` to the top level and adds `_cdc` {op, ts, source} from `metadata`.
type DmsTransform struct{}

func (*DmsTransform) ConfigDef() *connect.ConfigDef     { return connect.NewConfigDef() }
func (*DmsTransform) Configure(map[string]string) error { return nil }
func (*DmsTransform) Close() error                      { return nil }

func (*DmsTransform) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.Value == nil {
		return r, nil
	}
	if r.ValueSchema != nil {
		return nil, &jvmError{"java.lang.UnsupportedOperationException", "Schema not support for DMS records"}
	}
	value, err := requireMap(r.Value, "DMS transform")
	if err != nil {
		return nil, err
	}
	data, ok1 := asStringMap(value["data"])
	metadata, ok2 := asStringMap(value["metadata"])
	if !ok1 || !ok2 {
		return nil, nil // "Unable to transform DMS record, skipping..."
	}
	opv, ok := metadata["operation"]
	if !ok || opv == nil {
		return nil, npe(`Cannot invoke "Object.toString()" because the return value of "java.util.Map.get(Object)" is null`)
	}
	op := "I"
	switch connect.JavaString(opv) {
	case "update":
		op = "U"
	case "delete":
		op = "D"
	}
	cdc := map[string]any{"op": op, "ts": metadata["timestamp"],
		"source": connect.JavaString(metadata["schema-name"]) + "." + connect.JavaString(metadata["table-name"])}
	nv := make(map[string]any, len(data)+1)
	for k, v := range data {
		nv[k] = v
	}
	nv["_cdc"] = cdc
	return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, nil, nv, r.Timestamp, r.Headers), nil
}

func asStringMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[connect.JavaString(k)] = e
		}
		return out, true
	}
	return nil, false
}

// JsonToMapTransform parses a JSON string value into a Struct (one field per top-level key with an inferred
