package icerow

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
)

// Debezium logical type names.
const (
	dbzDate           = "io.debezium.time.Date"
	dbzTime           = "io.debezium.time.Time"
	dbzMicroTime      = "io.debezium.time.MicroTime"
	dbzNanoTime       = "io.debezium.time.NanoTime"
	dbzTimestamp      = "io.debezium.time.Timestamp"
	dbzMicroTimestamp = "io.debezium.time.MicroTimestamp"
	dbzNanoTimestamp  = "io.debezium.time.NanoTimestamp"
	dbzZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	dbzZonedTime      = "io.debezium.time.ZonedTime"
	dbzVarDecimal     = "io.debezium.data.VariableScaleDecimal"
)

// SchemaCache maps Connect schemas (by pointer; converters share them across records) to
// Iceberg struct types, and schemaless shapes (by signature) to inferred struct types.
type SchemaCache struct {
	mu      sync.Mutex
	byConn  map[*connect.Schema]*ice.StructType
	byShape map[string]*ice.StructType
	// lastShape is the schemaless struct returned last: checked first, without a signature
	lastShape *ice.StructType
}

func NewSchemaCache() *SchemaCache {
	return &SchemaCache{byConn: map[*connect.Schema]*ice.StructType{}, byShape: map[string]*ice.StructType{}}
}

func (c *SchemaCache) forConnect(s *connect.Schema) (*ice.StructType, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.byConn[s]; ok {
		return st, nil
	}
	id := 0
	t, err := icebergType(s, &id)
	if err != nil {
		return nil, err
	}
	st, ok := t.(*ice.StructType)
	if !ok {
		return nil, fmt.Errorf("record value schema must be a STRUCT, got %s", s.Type)
	}
	if len(c.byConn) > 10000 {
		clear(c.byConn)
	}
	c.byConn[s] = st
	return st, nil
}

// icebergType maps a Connect schema to an Iceberg type (field ids are assigned sequentially;
// they are replaced at table create/evolve).
func icebergType(s *connect.Schema, id *int) (ice.Type, error) {
	switch s.Name {
	case connect.DecimalName:
		scale, _ := connect.DecimalScale(s)
		prec := 38
		if p, ok := s.Parameters["connect.decimal.precision"]; ok {
			fmt.Sscan(p, &prec)
		}
		return ice.DecimalTypeOf(prec, int(scale)), nil
	case connect.DateName, dbzDate:
		return ice.PrimitiveTypes.Date, nil
	case connect.TimeName, dbzTime, dbzMicroTime, dbzNanoTime:
		return ice.PrimitiveTypes.Time, nil
	case connect.TimestampName, dbzZonedTimestamp:
		// an instant: the Apache sink maps Connect's Timestamp to timestamptz too
		return ice.PrimitiveTypes.TimestampTz, nil
	case dbzTimestamp, dbzMicroTimestamp:
		// the wall clock of a TIMESTAMP WITHOUT TIME ZONE column
		return ice.PrimitiveTypes.Timestamp, nil
	case dbzNanoTimestamp:
		// timestamp (microseconds) on a table before format v3: TypeForFormat
		return ice.PrimitiveTypes.TimestampNs, nil
	case dbzVarDecimal, dbzZonedTime:
		return ice.PrimitiveTypes.String, nil
	}
	switch s.Type {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32:
		return ice.PrimitiveTypes.Int32, nil
	case connect.TypeInt64:
		return ice.PrimitiveTypes.Int64, nil
	case connect.TypeFloat32:
		return ice.PrimitiveTypes.Float32, nil
	case connect.TypeFloat64:
		return ice.PrimitiveTypes.Float64, nil
	case connect.TypeBoolean:
		return ice.PrimitiveTypes.Bool, nil
	case connect.TypeString:
		return ice.PrimitiveTypes.String, nil
	case connect.TypeBytes:
		return ice.PrimitiveTypes.Binary, nil
	case connect.TypeArray:
		*id++
		eid := *id
		et, err := icebergType(s.ValueSchema(), id)
		if err != nil {
			return nil, err
		}
		return &ice.ListType{ElementID: eid, Element: et, ElementRequired: !s.ValueSchema().IsOptional()}, nil
	case connect.TypeMap:
		*id++
		kid := *id
		*id++
		vid := *id
		kt, err := icebergType(s.KeySchema(), id)
		if err != nil {
			return nil, err
		}
		vt, err := icebergType(s.ValueSchema(), id)
		if err != nil {
			return nil, err
		}
		return &ice.MapType{KeyID: kid, KeyType: kt, ValueID: vid, ValueType: vt, ValueRequired: !s.ValueSchema().IsOptional()}, nil
	case connect.TypeStruct:
		fs := s.Fields()
		ids := make([]int, len(fs))
		for i := range fs {
			*id++
			ids[i] = *id
		}
		out := &ice.StructType{}
		for i, f := range fs {
			t, err := icebergType(f.Schema, id)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			out.FieldList = append(out.FieldList, ice.NestedField{ID: ids[i], Name: f.Name, Type: t, Required: !f.Schema.IsOptional()})
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported connect type %s", s.Type)
}

// ConnectValue converts a Connect value of schema s into the table layer's Go value.
func ConnectValue(s *connect.Schema, v any) any {
	if v == nil {
		return nil
	}
	if s == nil {
		return schemalessValue(v)
	}
	switch s.Name {
	case dbzDate:
		n, _ := ToInt64(v)
		return time.Unix(n*86400, 0).UTC()
	case dbzTime:
		n, _ := ToInt64(v)
		return time.Duration(n) * time.Millisecond
	case dbzMicroTime:
		n, _ := ToInt64(v)
		return time.Duration(n) * time.Microsecond
	case dbzNanoTime:
		n, _ := ToInt64(v)
		return time.Duration(n)
	case dbzTimestamp:
		n, _ := ToInt64(v)
		return time.UnixMilli(n).UTC()
	case dbzMicroTimestamp:
		n, _ := ToInt64(v)
		return time.UnixMicro(n).UTC()
	case dbzNanoTimestamp:
		n, _ := ToInt64(v)
		return time.Unix(0, n).UTC()
	case dbzVarDecimal:
		if st, ok := v.(*connect.Struct); ok {
			scale, _ := ToInt64(st.Get("scale"))
			if b, ok := st.Get("value").([]byte); ok {
				return connect.DecimalFromBytes(b, int32(scale)).String()
			}
		}
	}
	switch x := v.(type) {
	case *connect.Struct:
		fs := s.Fields()
		m := make(map[string]any, len(fs))
		for _, f := range fs {
			m[f.Name] = ConnectValue(f.Schema, x.GetIndex(f.Index))
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ConnectValue(s.ValueSchema(), e)
		}
		return out
	case map[any]any:
		out := make([][2]any, 0, len(x))
		for k, e := range x {
			out = append(out, [2]any{ConnectValue(s.KeySchema(), k), ConnectValue(s.ValueSchema(), e)})
		}
		return out
	}
	return v // a Decimal (connect.Decimal) as it is
}

// SchemalessRow is the row of a schemaless value's map (a JSON object the converter made), as
// RecordValue makes it.
func SchemalessRow(m map[string]any) Row { return schemalessValue(m).(map[string]any) }

func schemalessValue(v any) any {
	if plainJSON(v) {
		return v // nothing to convert: no copy
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = schemalessValue(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = schemalessValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = schemalessValue(e)
		}
		return out
	case *connect.Struct:
		return ConnectValue(x.Schema(), x)
	}
	return v
}

// plainJSON reports whether v holds only values schemalessValue keeps as they are.
func plainJSON(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	case map[any]any, *connect.Struct:
		return false
	}
	return true
}

// inferType infers an Iceberg type from a schemaless (JSON) value; nil when unknown (null).
func inferType(v any, id *int) ice.Type {
	switch x := v.(type) {
	case nil:
		return nil
	case bool:
		return ice.PrimitiveTypes.Bool
	case int, int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return ice.PrimitiveTypes.Int64
	case float32, float64:
		return ice.PrimitiveTypes.Float64
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return ice.PrimitiveTypes.Int64
		}
		return ice.PrimitiveTypes.Float64
	case string:
		return ice.PrimitiveTypes.String
	case []byte:
		return ice.PrimitiveTypes.Binary
	case time.Time:
		return ice.PrimitiveTypes.TimestampTz
	case Decimal:
		return ice.DecimalTypeOf(38, int(x.Scale))
	case []any:
		*id++
		eid := *id
		var et ice.Type
		for _, e := range x {
			if et = inferType(e, id); et != nil {
				break
			}
		}
		if et == nil {
			et = ice.PrimitiveTypes.String
		}
		return &ice.ListType{ElementID: eid, Element: et}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := &ice.StructType{}
		for _, k := range keys {
			*id++
			fid := *id
			t := inferType(x[k], id)
			if t == nil {
				continue // unknown type for null values: added when a non-null value shows up
			}
			out.FieldList = append(out.FieldList, ice.NestedField{ID: fid, Name: k, Type: t})
		}
		return out
	}
	return ice.PrimitiveTypes.String
}

func shapeSig(v any, sb *strings.Builder) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteByte('{')
		for _, k := range keys {
			sb.WriteString(k)
			sb.WriteByte(':')
			shapeSig(x[k], sb)
			sb.WriteByte(',')
		}
		sb.WriteByte('}')
	case []any:
		sb.WriteByte('[')
		if len(x) > 0 {
			shapeSig(x[0], sb)
		}
		sb.WriteByte(']')
	case nil:
		sb.WriteByte('n')
	default:
		fmt.Fprintf(sb, "%T", v)
	}
}

func (c *SchemaCache) ForSchemaless(m map[string]any) *ice.StructType {
	c.mu.Lock()
	last := c.lastShape
	c.mu.Unlock()
	if last != nil && matchesShape(last, m) {
		return last // records of a topic mostly share one shape: no signature to build
	}
	var sb strings.Builder
	shapeSig(m, &sb)
	sig := sb.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.byShape[sig]; ok {
		c.lastShape = st
		return st
	}
	id := 0
	st := inferType(m, &id).(*ice.StructType)
	if len(c.byShape) > 10000 {
		clear(c.byShape)
	}
	c.byShape[sig] = st
	c.lastShape = st
	return st
}

// matchesShape reports whether inferType(v) would give exactly t (same fields, same types, same
// order of field ids), without building a signature.
func matchesShape(t ice.Type, v any) bool {
	switch x := v.(type) {
	case map[string]any:
		st, ok := t.(*ice.StructType)
		if !ok {
			return false
		}
		n := 0
		for _, e := range x {
			if e != nil {
				n++
			}
		}
		if n != len(st.FieldList) {
			return false
		}
		prev := ""
		for i, f := range st.FieldList {
			e, ok := x[f.Name]
			if !ok || e == nil || (i > 0 && f.Name <= prev) || !matchesShape(f.Type, e) {
				return false
			}
			prev = f.Name
		}
		return true
	case []any:
		lt, ok := t.(*ice.ListType)
		if !ok {
			return false
		}
		for _, e := range x {
			if e != nil {
				return matchesShape(lt.Element, e)
			}
		}
		return lt.Element == ice.PrimitiveTypes.String
	case nil, map[any]any:
		return false
	}
	var id int
	return t == inferType(v, &id) // a primitive type: comparable
}

// Record is one Kafka record as rows take it: its value's row (nil: a tombstone) with the struct type
// the row takes, and its converted key.
type Record struct {
	Value  Row
	Struct *ice.StructType
	Key    any
}

// Read converts a record's value (the bytes of a jsonvalue.Value too) and key.
func (c *SchemaCache) Read(r *connect.SinkRecord) (Record, error) {
	var rec Record
	v := r.Value
	if jv, ok := v.(*jsonvalue.Value); ok {
		var err error
		if v, err = jv.Value(); err != nil {
			return rec, err
		}
	}
	if v != nil {
		row, st, err := c.RecordValue(r.ValueSchema, v)
		if err != nil {
			return rec, err
		}
		rec.Value, rec.Struct = row, st
	}
	if r.Key != nil {
		rec.Key = ConnectValue(r.KeySchema, r.Key)
	}
	return rec, nil
}

// RecordValue returns the record value as a row map and its Iceberg struct type.
func (c *SchemaCache) RecordValue(s *connect.Schema, v any) (Row, *ice.StructType, error) {
	if s != nil {
		if s.Type != connect.TypeStruct {
			return nil, nil, connect.DataErrorf("iceberg sink needs STRUCT values, got %s", s.Type)
		}
		st, err := c.forConnect(s)
		if err != nil {
			return nil, nil, err
		}
		m, _ := ConnectValue(s, v).(map[string]any)
		return m, st, nil
	}
	switch x := v.(type) {
	case map[string]any:
		m := schemalessValue(x).(map[string]any)
		return m, c.ForSchemaless(m), nil
	case *connect.Struct:
		return c.RecordValue(x.Schema(), x)
	}
	return nil, nil, connect.DataErrorf("iceberg sink needs map or struct values, got %T", v)
}

// DebeziumEnvelope reports whether a row looks like a raw Debezium change event.
func DebeziumEnvelope(row Row) bool {
	if row == nil {
		return false
	}
	op, ok := row["op"].(string)
	if !ok || len(op) != 1 {
		return false
	}
	_, hasAfter := row["after"]
	_, hasBefore := row["before"]
	_, hasSource := row["source"]
	return hasAfter && hasBefore && hasSource
}

func StructField(st *ice.StructType, name string) *ice.StructType {
	if st == nil {
		return nil
	}
	for _, f := range st.FieldList {
		if f.Name == name {
			if s, ok := f.Type.(*ice.StructType); ok {
				return s
			}
		}
	}
	return nil
}

// JSONString renders a value for the raw history table's payload columns.
func JSONString(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(jsonable(v))
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case [][2]any:
		out := make(map[string]any, len(x))
		for _, kv := range x {
			out[fmt.Sprint(kv[0])] = jsonable(kv[1])
		}
		return out
	case Decimal:
		return json.Number(x.String())
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case time.Duration:
		return x.String()
	}
	return v
}
