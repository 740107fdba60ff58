package apacheevents

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connect/avrotype"
)

// Decode reads an event as Java's AvroUtil.decode does: by the writer's schema embedded in b, with fields
// matched by field id and the ones it does not know skipped. The files of a DataWritten event stay in raw
// form until Files; Event.PartitionType is the writer's partition type.
func Decode(b []byte) (*Event, error) {
	if !IsEvent(b) {
		return nil, ErrNotEvent
	}
	text, n, err := readJavaUTF(b[len(magic):])
	if err != nil {
		return nil, fmt.Errorf("apacheevents: decode: writer schema: %w", err)
	}
	sch, err := parseSchema([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("apacheevents: decode: writer schema: %w", err)
	}
	if sch.kind != avrotype.Record {
		return nil, fmt.Errorf("apacheevents: decode: writer schema is a %v, not a record", sch.kind)
	}
	r := newReader(b[len(magic)+n:])
	v, err := r.value(sch, 0)
	if err != nil {
		return nil, fmt.Errorf("apacheevents: decode %s: %w", sch.fullName(), err)
	}
	e, err := eventFromRecord(v.(*record))
	if err != nil {
		return nil, fmt.Errorf("apacheevents: decode %s: %w", sch.fullName(), err)
	}
	// Java ignores what follows the datum; so does this, but for the extension.
	if rest := r.b[r.pos:]; bytes.HasPrefix(rest, extMarker) {
		r.pos += len(extMarker)
		ext, err := r.bytes()
		if err != nil {
			return nil, fmt.Errorf("apacheevents: decode %s: extension: %w", sch.fullName(), err)
		}
		e.Ext = bytes.Clone(ext)
	}
	return e, nil
}

func eventFromRecord(r *record) (*Event, error) {
	g := getter{r: r}
	e := &Event{
		ID:        g.uuid(idEventID),
		Type:      PayloadType(g.int(idEventType)),
		Timestamp: g.time(idEventTimestamp),
		GroupID:   g.str(idEventGroupID),
	}
	p := g.record(idEventPayload)
	if g.err != nil {
		return nil, g.err
	}
	if _, ok := payloadNames[e.Type]; !ok {
		return nil, fmt.Errorf("unknown payload type %d", e.Type)
	}
	if p == nil {
		return nil, errors.New("no payload")
	}
	pg := getter{r: p}
	e.CommitID = pg.uuid(commitIDField[e.Type])
	switch e.Type {
	case DataWritten:
		e.Table = pg.table(idDataWrittenTable)
		e.rawData, e.hasRawData = pg.records(idDataWrittenData)
		e.rawDeletes, e.hasRawDeletes = pg.records(idDataWrittenDeletes)
		pt, err := partitionTypeOf(p)
		if err != nil {
			return nil, err
		}
		e.PartitionType = pt
	case DataComplete:
		if recs, ok := pg.records(idDataCompleteAssigns); ok {
			e.Assignments = make([]TopicPartitionOffset, len(recs))
			for i, a := range recs {
				ag := getter{r: a}
				e.Assignments[i] = TopicPartitionOffset{Topic: ag.str(idTPOTopic), Partition: ag.int(idTPOPartition)}
				if v, ok := ag.optLong(idTPOOffset); ok {
					e.Assignments[i].Offset = &v
				}
				if v, ok := ag.optTime(idTPOTimestamp); ok {
					e.Assignments[i].Timestamp = &v
				}
				if ag.err != nil {
					return nil, fmt.Errorf("assignments[%d]: %w", i, ag.err)
				}
			}
		}
	case CommitToTable:
		e.Table = pg.table(idCommitToTableTable)
		if v, ok := pg.optLong(idCommitToTableSnapshot); ok {
			e.SnapshotID = &v
		}
		if v, ok := pg.optTime(idCommitToTableValid); ok {
			e.ValidThrough = &v
		}
	case CommitComplete:
		if v, ok := pg.optTime(idCommitCompleteValid); ok {
			e.ValidThrough = &v
		}
	}
	if pg.err != nil {
		return nil, fmt.Errorf("%s: %w", p.n.name, pg.err)
	}
	return e, nil
}

// partitionTypeOf reads the partition type from the writer schema of a DataWritten payload: the partition
// record of its data file record.
func partitionTypeOf(payload *record) (iceberg.StructType, error) {
	for _, id := range []int{idDataWrittenData, idDataWrittenDeletes} {
		i := payload.n.fieldByID(id)
		if i < 0 {
			continue
		}
		arr, _ := payload.n.fields[i].typ.optionOf()
		if arr.kind != avrotype.Array || arr.items.kind != avrotype.Record {
			return iceberg.StructType{}, fmt.Errorf("%s is not a list of records", payload.n.fields[i].name)
		}
		j := arr.items.fieldByID(idPartition)
		if j < 0 {
			return iceberg.StructType{}, nil // written without partitions
		}
		part := arr.items.fields[j].typ
		if part.kind != avrotype.Record {
			return iceberg.StructType{}, fmt.Errorf("partition is a %v, not a record", part.kind)
		}
		st := iceberg.StructType{FieldList: make([]iceberg.NestedField, 0, len(part.fields))}
		for _, f := range part.fields {
			typ, optional := f.typ.optionOf()
			if f.typ.kind == avrotype.Null {
				optional = true
			}
			it, err := icebergType(typ)
			if err != nil {
				return iceberg.StructType{}, fmt.Errorf("partition field %s: %w", f.name, err)
			}
			name := f.name
			if orig, ok := f.prop("iceberg-field-name").(string); ok {
				name = orig
			}
			st.FieldList = append(st.FieldList, iceberg.NestedField{ID: f.id, Name: name, Type: it, Required: !optional, Doc: f.doc})
		}
		return st, nil
	}
	return iceberg.StructType{}, nil
}

// icebergType is AvroSchemaUtil's conversion of a primitive Avro schema to its Iceberg type.
func icebergType(n *node) (iceberg.Type, error) {
	l := n.logical()
	utc, _ := n.prop("adjust-to-utc").(bool)
	switch n.kind {
	case avrotype.Null:
		return iceberg.UnknownType{}, nil
	case avrotype.Boolean:
		return iceberg.PrimitiveTypes.Bool, nil
	case avrotype.Int:
		if l == "date" {
			return iceberg.PrimitiveTypes.Date, nil
		}
		return iceberg.PrimitiveTypes.Int32, nil
	case avrotype.Long:
		switch {
		case l == "time-micros":
			return iceberg.PrimitiveTypes.Time, nil
		case l == "timestamp-micros" && utc:
			return iceberg.PrimitiveTypes.TimestampTz, nil
		case l == "timestamp-micros":
			return iceberg.PrimitiveTypes.Timestamp, nil
		case l == "timestamp-nanos" && utc:
			return iceberg.PrimitiveTypes.TimestampTzNs, nil
		case l == "timestamp-nanos":
			return iceberg.PrimitiveTypes.TimestampNs, nil
		}
		return iceberg.PrimitiveTypes.Int64, nil
	case avrotype.Float:
		return iceberg.PrimitiveTypes.Float32, nil
	case avrotype.Double:
		return iceberg.PrimitiveTypes.Float64, nil
	case avrotype.String:
		return iceberg.PrimitiveTypes.String, nil
	case avrotype.Bytes, avrotype.Fixed:
		if l == "decimal" {
			p, _ := n.prop("precision").(int)
			s, _ := n.prop("scale").(int)
			if p < 1 || p > 38 || s < 0 || s > p {
				return nil, fmt.Errorf("invalid decimal(%d, %d)", p, s)
			}
			return iceberg.DecimalTypeOf(p, s), nil
		}
		if n.kind == avrotype.Bytes {
			return iceberg.PrimitiveTypes.Binary, nil
		}
		if l == "uuid" && n.size == 16 {
			return iceberg.PrimitiveTypes.UUID, nil
		}
		return iceberg.FixedTypeOf(n.size), nil
	}
	return nil, fmt.Errorf("%v is not a partition type", n.kind)
}

// getter reads typed fields of a decoded record by field id; the first error sticks.
type getter struct {
	r   *record
	err error
}

func (g *getter) fail(id int, format string, args ...any) {
	if g.err == nil {
		name := fmt.Sprint(id)
		if i := g.r.n.fieldByID(id); i >= 0 {
			name = g.r.n.fields[i].name
		}
		g.err = fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
}

// required returns a field's value; a missing field or null is an error.
func (g *getter) required(id int) any {
	v, ok := g.r.get(id)
	if !ok {
		g.fail(id, "missing")
		return nil
	}
	if v == nil {
		g.fail(id, "null")
	}
	return v
}

func (g *getter) uuid(id int) uuid.UUID {
	switch v := g.required(id).(type) {
	case []byte:
		if len(v) == 16 {
			return uuid.UUID(v)
		}
	case string:
		if u, err := uuid.Parse(v); err == nil {
			return u
		}
	case nil:
		return uuid.UUID{}
	}
	g.fail(id, "not a UUID")
	return uuid.UUID{}
}

func (g *getter) int(id int) int32 {
	switch v := g.required(id).(type) {
	case int32:
		return v
	case nil:
		return 0
	}
	g.fail(id, "not an int")
	return 0
}

func (g *getter) long(id int) int64 {
	v, _ := g.longValue(id, g.required(id))
	return v
}

func (g *getter) longValue(id int, v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case nil:
		return 0, false
	}
	g.fail(id, "not a long")
	return 0, false
}

func (g *getter) optLong(id int) (int64, bool) {
	v, _ := g.r.get(id)
	return g.longValue(id, v)
}

func (g *getter) optInt(id int) (int32, bool) {
	v, _ := g.r.get(id)
	switch x := v.(type) {
	case int32:
		return x, true
	case nil:
		return 0, false
	}
	g.fail(id, "not an int")
	return 0, false
}

func (g *getter) time(id int) time.Time {
	return time.UnixMicro(g.long(id)).UTC()
}

func (g *getter) optTime(id int) (time.Time, bool) {
	us, ok := g.optLong(id)
	if !ok {
		return time.Time{}, false
	}
	return time.UnixMicro(us).UTC(), true
}

func (g *getter) str(id int) string {
	switch v := g.required(id).(type) {
	case string:
		return v
	case nil:
		return ""
	}
	g.fail(id, "not a string")
	return ""
}

func (g *getter) optStr(id int) (string, bool) {
	v, _ := g.r.get(id)
	switch x := v.(type) {
	case string:
		return x, true
	case nil:
		return "", false
	}
	g.fail(id, "not a string")
	return "", false
}

func (g *getter) optBytes(id int) []byte {
	v, _ := g.r.get(id)
	switch x := v.(type) {
	case []byte:
		return x
	case nil:
		return nil
	}
	g.fail(id, "not bytes")
	return nil
}

func (g *getter) record(id int) *record {
	switch v := g.required(id).(type) {
	case *record:
		return v
	case nil:
		return nil
	}
	g.fail(id, "not a record")
	return nil
}

// records reads an optional list of records; ok is false for null.
func (g *getter) records(id int) ([]*record, bool) {
	v, _ := g.r.get(id)
	if v == nil {
		return nil, false
	}
	items, ok := v.([]any)
	if !ok {
		g.fail(id, "not a list")
		return nil, false
	}
	out := make([]*record, len(items))
	for i, it := range items {
		if out[i], ok = it.(*record); !ok {
			g.fail(id, "element %d is not a record", i)
			return nil, false
		}
	}
	return out, true
}

func (g *getter) table(id int) TableReference {
	r := g.record(id)
	if r == nil {
		return TableReference{}
	}
	tg := getter{r: r}
	t := TableReference{Catalog: tg.str(idTableCatalog), Name: tg.str(idTableName)}
	ns, _ := tg.required(idTableNamespace).([]any)
	t.Namespace = make([]string, 0, len(ns))
	for _, s := range ns {
		str, ok := s.(string)
		if !ok {
			tg.fail(idTableNamespace, "not a list of strings")
			break
		}
		t.Namespace = append(t.Namespace, str)
	}
	if tg.err != nil && g.err == nil {
		g.err = fmt.Errorf("table_reference: %w", tg.err)
	}
	return t
}

func (g *getter) list(id int) ([]any, bool) {
	v, _ := g.r.get(id)
	if v == nil {
		return nil, false
	}
	items, ok := v.([]any)
	if !ok {
		g.fail(id, "not a list")
	}
	return items, ok
}

func (g *getter) longs(id int) []int64 {
	items, ok := g.list(id)
	if !ok {
		return nil
	}
	out := make([]int64, len(items))
	for i, it := range items {
		if out[i], ok = g.longValue(id, it); !ok {
			g.fail(id, "null element")
		}
	}
	return out
}

func (g *getter) ints(id int) []int {
	items, ok := g.list(id)
	if !ok {
		return nil
	}
	out := make([]int, len(items))
	for i, it := range items {
		v, ok := it.(int32)
		if !ok {
			g.fail(id, "element %d is not an int", i)
		}
		out[i] = int(v)
	}
	return out
}

// kv reads an int-keyed map, an array of key/value records (or an Avro map would not have int keys).
func (g *getter) kv(id int, each func(k int32, v any)) bool {
	items, ok := g.list(id)
	if !ok {
		return false
	}
	for _, it := range items {
		r, ok := it.(*record)
		if !ok || len(r.vals) != 2 {
			g.fail(id, "not a list of key/value records")
			return false
		}
		k, ok := r.vals[0].(int32)
		if !ok {
			g.fail(id, "key is not an int")
			return false
		}
		each(k, r.vals[1])
	}
	return true
}

func (g *getter) longMap(id int) map[int]int64 {
	m := map[int]int64{}
	if !g.kv(id, func(k int32, v any) {
		if l, ok := g.longValue(id, v); ok {
			m[int(k)] = l
		}
	}) {
		return nil
	}
	return m
}

func (g *getter) bytesMap(id int) map[int][]byte {
	m := map[int][]byte{}
	if !g.kv(id, func(k int32, v any) {
		b, ok := v.([]byte)
		if !ok {
			g.fail(id, "value is not bytes")
			return
		}
		m[int(k)] = b
	}) {
		return nil
	}
	return m
}
