package transforms

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/values"
)

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
	if ms, err := values.ToLong(value.Get("ts_ms")); err == nil { // whatever numeric (or text) form a converter gave it
		cdc.PutIndex(1, values.TimestampFromMillis(ms))
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
