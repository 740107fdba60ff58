package transforms

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// MongoDebeziumTransform turns the extended-JSON before/after strings of Debezium's MongoDB envelope into
// Structs with schemas inferred from the BSON types (the Iceberg copy of Debezium's MongoDataConverter);
// partial updates (updateDescription only) are merged onto before (or an empty document).
type MongoDebeziumTransform struct{ documentMode bool }

func (*MongoDebeziumTransform) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "array_handling_mode", Type: connect.ConfigString, Default: nil,
		Importance: connect.Medium, Doc: "array or document handling for mongodb arrays"})
}

func (m *MongoDebeziumTransform) Configure(configs map[string]string) error {
	// ArrayEncoding.parse(value, "array"): case-insensitive, trimmed, unknown values fall back to array
	m.documentMode = strings.EqualFold(strings.TrimSpace(configs["array_handling_mode"]), "document")
	return nil
}

func (*MongoDebeziumTransform) Close() error { return nil }

func (m *MongoDebeziumTransform) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.Value == nil {
		return r, nil
	}
	if r.KeySchema == nil || !strings.HasSuffix(r.KeySchema.Name, ".Key") || r.ValueSchema == nil || !strings.HasSuffix(r.ValueSchema.Name, ".Envelope") {
		return r.NewRecord(r.Topic, r.Partition, nil, nil, nil, nil, r.Timestamp, r.Headers), nil
	}
	extract := func(s *connect.Schema, v any, field string) (any, error) {
		st, err := requireStruct(v, "field extraction")
		if v == nil {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if _, ok := s.Field(field); !ok {
			return nil, &jvmError{"java.lang.IllegalArgumentException", "Unknown field: " + field}
		}
		return st.Get(field), nil
	}
	keyID, err := extract(r.KeySchema, r.Key, "id")
	if err != nil {
		return nil, err
	}
	after, err := extract(r.ValueSchema, r.Value, "after")
	if err != nil {
		return nil, err
	}
	before, err := extract(r.ValueSchema, r.Value, "before")
	if err != nil {
		return nil, err
	}
	upd, err := extract(r.ValueSchema, r.Value, "updateDescription")
	if err != nil {
		return nil, err
	}
	if before == nil && after == nil && upd == nil {
		return nil, &jvmError{"java.lang.IllegalArgumentException",
			fmt.Sprintf("malformed record topic: %s, partition: %d, offset: %d", r.Topic, r.Partition, r.Offset)}
	}
	keyDoc, err := parseBSONDocument(`{ "id" : ` + connect.JavaString(keyID) + "}")
	if err != nil {
		return nil, err
	}
	var beforeDoc, afterDoc *bDoc
	if before != nil {
		if beforeDoc, err = parseBSONDocument(connect.JavaString(before)); err != nil {
			return nil, err
		}
	}
	if after == nil && upd != nil {
		initial := &bDoc{}
		if beforeDoc != nil {
			initial = beforeDoc.clone()
		}
		us, err := requireStruct(upd, "updateDescription")
		if err != nil {
			return nil, err
		}
		updated, _ := us.Get("updatedFields").(string)
		ud, err := parseBSONDocument(updated)
		if err != nil {
			return nil, err
		}
		for i, k := range ud.keys {
			initial.put(k, ud.vals[i])
		}
		if removed, ok := us.Get("removedFields").([]any); ok {
			names := make(map[string]bool, len(removed))
			for _, f := range removed {
				names[connect.JavaString(f)] = true
			}
			initial.remove(names)
		}
		if initial.get("_id") == nil {
			initial.put("_id", keyDoc.get("id"))
		}
		afterDoc = initial
	} else if after != nil {
		if afterDoc, err = parseBSONDocument(connect.JavaString(after)); err != nil {
			return nil, err
		}
	}

	keySchema, err := m.docSchema(keyDoc, "", false)
	if err != nil {
		return nil, err
	}
	keyStruct := connect.NewStruct(keySchema)
	if err := m.fillStruct(keyDoc, keySchema, keyStruct); err != nil {
		return nil, err
	}
	old, err := requireStruct(r.Value, "copying existing fields besides before/after")
	if err != nil {
		return nil, err
	}
	nb := connect.StructBuilder()
	if r.ValueSchema.Name != "" {
		nb.Name(r.ValueSchema.Name)
	}
	docs := map[string]*bDoc{"after": afterDoc, "before": beforeDoc}
	for _, f := range r.ValueSchema.Fields() {
		if d, special := docs[f.Name]; special {
			if d != nil {
				s, err := m.docSchema(d, "", true)
				if err != nil {
					return nil, err
				}
				nb.Field(f.Name, s)
			}
			continue
		}
		nb.Field(f.Name, f.Schema)
	}
	ns, err := nb.Build()
	if err != nil {
		return nil, err
	}
	nv := connect.NewStruct(ns)
	for i, f := range ns.Fields() {
		if d, special := docs[f.Name]; special {
			st := connect.NewStruct(f.Schema)
			if err := m.fillStruct(d, f.Schema, st); err != nil {
				return nil, err
			}
			nv.PutIndex(i, st)
			continue
		}
		nv.PutIndex(i, old.Get(f.Name))
	}
	return r.NewRecord(r.Topic, r.Partition, keySchema, keyStruct, ns, nv, r.Timestamp, r.Headers), nil
}

// docSchema builds a nameless struct schema for a document (the JVM's SchemaBuilder.struct() without name).
func (m *MongoDebeziumTransform) docSchema(d *bDoc, name string, optional bool) (*connect.Schema, error) {
	b := connect.StructBuilder()
	if name != "" {
		b.Name(name)
	}
	if optional {
		b.Optional()
	}
	for i, k := range d.keys {
		if err := m.addFieldSchema(k, d.vals[i], b, jname(name)); err != nil {
			return nil, err
		}
	}
	return b.Build()
}

// jname is the JVM's builder.name() in a string concatenation.
func jname(n string) string {
	if n == "" {
		return "null"
	}
	return n
}

func timestampOptional() *connect.Schema { return connect.TimestampBuilder().Optional().MustBuild() }

func primitiveBSONSchema(t bType) *connect.Schema {
	switch t {
	case bNull, bString, bJavaScript, bObjectID, bDecimal128:
		return connect.OptionalStringSchema
	case bDouble:
		return connect.OptionalFloat64Schema
	case bBinary:
		return connect.OptionalBytesSchema
	case bInt32:
		return connect.OptionalInt32Schema
	case bInt64:
		return connect.OptionalInt64Schema
	case bDateTime, bTimestamp:
		return timestampOptional()
	case bBoolean:
		return connect.OptionalBoolSchema
	}
	return nil
}

func (m *MongoDebeziumTransform) addFieldSchema(key string, v *bVal, b *connect.SchemaBuilder, bname string) error {
	if key == "" {
		return errEmptyFieldName
	}
	if s := primitiveBSONSchema(v.t); s != nil {
		b.Field(key, s)
		return nil
	}
	switch v.t {
	case bJavaScriptWithScope:
		// as the JVM: a required struct {code, scope}; the scope's fields are built on a builder named <name>.scope
		name := bname + "." + key
		scope := connect.StructBuilder().Name(name + ".scope").Optional()
		for i, k := range v.doc.keys {
			if err := m.addFieldSchema(k, v.doc.vals[i], scope, name+".scope"); err != nil {
				return err
			}
		}
		ss, err := scope.Build()
		if err != nil {
			return err
		}
		b.Field(key, connect.StructBuilder().Name(name).Field("code", connect.OptionalStringSchema).Field("scope", ss).MustBuild())
	case bRegex:
		b.Field(key, connect.StructBuilder().Name("io.debezium.mongodb.regex").Optional().
			Field("regex", connect.OptionalStringSchema).Field("options", connect.OptionalStringSchema).MustBuild())
	case bDocument:
		s, err := m.docSchema(v.doc, bname+"."+key, true)
		if err != nil {
			return err
		}
		b.Field(key, s)
	case bArray:
		if len(v.arr) == 0 {
			if m.documentMode {
				b.Field(key, connect.StructBuilder().Name(bname+"."+key).Optional().MustBuild())
			} else {
				b.Field(key, arrayOptionalString)
			}
			return nil
		}
		if m.documentMode {
			s, err := m.docSchema(arrayAsDoc(v.arr), bname+"."+key, true)
			if err != nil {
				return err
			}
			b.Field(key, s)
			return nil
		}
		vt := v.arr[0].t
		if err := testType(bname, key, v, vt); err != nil {
			return err
		}
		sub, err := m.subSchema(bname, key, vt, v)
		if err != nil {
			return err
		}
		b.Field(key, connect.ArrayBuilder(sub).Optional().MustBuild())
	}
	return nil
}

// arrayAsDoc is the HashMap of "_0", "_1", ... to the elements, in the JVM HashMap's iteration order.
func arrayAsDoc(arr []*bVal) *bDoc {
	type e struct {
		k   string
		v   *bVal
		idx int
	}
	capacity := 16
	for float64(len(arr)) > 0.75*float64(capacity) {
		capacity *= 2
	}
	es := make([]e, len(arr))
	for i, v := range arr {
		k := "_" + strconv.Itoa(i)
		var h int32
		for _, c := range k {
			h = 31*h + c
		}
		hh := uint32(h) ^ (uint32(h) >> 16)
		es[i] = e{k, v, int(hh & uint32(capacity-1))}
	}
	sort.SliceStable(es, func(a, b int) bool { return es[a].idx < es[b].idx })
	d := &bDoc{}
	for _, x := range es {
		d.put(x.k, x.v)
	}
	return d
}

func typeErr(expected, actual bType) error {
	return &jvmError{"org.bson.BsonInvalidOperationException", fmt.Sprintf("Value expected to be of type %s is of unexpected type %s", expected, actual)}
}

func testType(bname, key string, v *bVal, vt bType) error {
	switch vt {
	case bDocument:
		union := map[string]bType{}
		for _, el := range v.arr {
			if el.t != bDocument {
				return typeErr(bDocument, el.t)
			}
			for i, k := range el.doc.keys {
				if err := testArrayElementType(bname, k, el.doc.vals[i], union); err != nil {
					return err
				}
			}
		}
	case bArray:
		for _, el := range v.arr {
			if el.t != bArray {
				return typeErr(bArray, el.t)
			}
			if len(el.arr) == 0 {
				return &jvmError{"java.lang.IndexOutOfBoundsException", "Index 0 out of bounds for length 0"}
			}
			if err := testType(bname, key, el, el.arr[0].t); err != nil {
				return err
			}
		}
	default:
		for _, el := range v.arr {
			if el.t != vt {
				return runtimeErr("Field " + key + " of schema " + bname + " is not a homogenous array.\nCheck option 'struct' of parameter 'array.encoding'")
			}
		}
	}
	return nil
}

func testArrayElementType(bname, key string, v *bVal, union map[string]bType) error {
	prev, had := union[key]
	if !had {
		union[key] = v.t
		return nil
	}
	cur := v.t
	if (prev == bNull || cur == bNull) && prev != cur {
		if prev == bNull {
			union[key] = cur
		}
	} else if prev != cur {
		return runtimeErr("Field " + key + " of schema " + bname + " is not the same type for all documents in the array.\nCheck option 'struct' of parameter 'array.encoding'")
	}
	return nil
}

func (m *MongoDebeziumTransform) subSchema(bname, key string, vt bType, v *bVal) (*connect.Schema, error) {
	if s := primitiveBSONSchema(vt); s != nil {
		return s, nil
	}
	switch vt {
	case bDocument:
		name := bname + "." + key
		b := connect.StructBuilder().Name(name).Optional()
		union := map[string]bType{}
		n := 0
		add := func(d *bDoc, emptyChecker bool) error {
			for i, k := range d.keys {
				el := d.vals[i]
				if emptyChecker && ((el.t == bDocument && len(el.doc.keys) == 0) || (el.t == bArray && len(el.arr) == 0)) {
					continue
				}
				if _, had := union[k]; !had {
					union[k] = el.t
					if err := m.addFieldSchema(k, el, b, name); err != nil {
						return err
					}
					n++
				} else if err := testArrayElementType(name, k, el, union); err != nil {
					return err
				}
			}
			return nil
		}
		if v.t == bArray {
			for _, el := range v.arr {
				if el.t != bDocument {
					return nil, typeErr(bDocument, el.t)
				}
				if err := add(el.doc, true); err != nil {
					return nil, err
				}
			}
			if n == 0 {
				for _, el := range v.arr {
					if err := add(el.doc, false); err != nil {
						return nil, err
					}
				}
			}
		} else if err := add(v.doc, false); err != nil {
			return nil, err
		}
		return b.Build()
	case bArray:
		first := v.arr[0]
		if len(first.arr) == 0 {
			return nil, &jvmError{"java.lang.IndexOutOfBoundsException", "Index 0 out of bounds for length 0"}
		}
		sub, err := m.subSchema(bname, key, first.arr[0].t, first)
		if err != nil {
			return nil, err
		}
		return connect.ArrayBuilder(sub).Optional().MustBuild(), nil
	}
	return nil, &jvmError{"java.lang.IllegalArgumentException", "The value type '" + vt.String() + " is not yet supported inside for a subSchema."}
}

func (m *MongoDebeziumTransform) fillStruct(d *bDoc, s *connect.Schema, st *connect.Struct) error {
	for i, k := range d.keys {
		if err := m.convertFieldValue(k, d.vals[i], st, s); err != nil {
			return err
		}
	}
	return nil
}

func (m *MongoDebeziumTransform) convertFieldValue(key string, v *bVal, st *connect.Struct, s *connect.Schema) error {
	var col any
	switch v.t {
	case bNull:
	case bString, bJavaScript, bObjectID, bDecimal128:
		col = v.s
	case bDouble:
		col = v.d
	case bBinary:
		col = v.bin
	case bInt32:
		col = int32(v.i)
	case bInt64:
		col = v.i
	case bBoolean:
		col = v.b
	case bDateTime:
		col = time.UnixMilli(v.i).UTC()
	case bTimestamp:
		col = time.UnixMilli(1000 * v.i).UTC()
	case bJavaScriptWithScope:
		f, ok := s.Field(key)
		if !ok {
			return npe("javascript field " + key)
		}
		sf, _ := f.Schema.Field("scope")
		js, scope := connect.NewStruct(f.Schema), connect.NewStruct(sf.Schema)
		js.PutIndex(0, v.s)
		for i, k := range v.doc.keys { // the JVM passes the {code, scope} schema, not the scope's, for lookups
			if err := m.convertFieldValue(k, v.doc.vals[i], scope, f.Schema); err != nil {
				return err
			}
		}
		js.PutIndex(1, scope)
		col = js
	case bRegex:
		f, ok := s.Field(key)
		if !ok {
			return npe("regex field " + key)
		}
		rs := connect.NewStruct(f.Schema)
		rs.PutIndex(0, v.s)
		rs.PutIndex(1, v.opts)
		col = rs
	case bDocument:
		f, ok := s.Field(key)
		if !ok {
			return connect.DataErrorf("Failed to find field '%s' in schema %s", key, jname(s.Name))
		}
		ds := connect.NewStruct(f.Schema)
		if err := m.fillStruct(v.doc, f.Schema, ds); err != nil {
			return err
		}
		col = ds
	case bArray:
		f, ok := s.Field(key)
		switch {
		case len(v.arr) == 0 && !m.documentMode:
			col = []any{}
		case len(v.arr) == 0:
			if !ok {
				return npe("array field " + key)
			}
			col = connect.NewStruct(f.Schema)
		case m.documentMode:
			if !ok {
				return npe("array field " + key)
			}
			as := connect.NewStruct(f.Schema)
			if err := m.fillStruct(arrayAsDoc(v.arr), f.Schema, as); err != nil {
				return err
			}
			col = as
		default:
			vt := v.arr[0].t
			var vs *connect.Schema
			if vt == bArray || vt == bDocument {
				if !ok {
					return npe("array field " + key)
				}
				vs = f.Schema.ValueSchema()
			}
			list := []any{}
			for _, el := range v.arr {
				var err error
				if list, err = m.convertListValue(vs, vt, el, list); err != nil {
					return err
				}
			}
			col = list
		}
	default:
		return nil
	}
	return mongoPut(st, key, col)
}

func (m *MongoDebeziumTransform) convertListValue(vs *connect.Schema, vt bType, v *bVal, list []any) ([]any, error) {
	if v.t != vt {
		return list, nil
	}
	switch vt {
	case bString, bJavaScript, bObjectID, bDecimal128:
		return append(list, v.s), nil
	case bDouble:
		return append(list, v.d), nil
	case bBinary:
		return append(list, v.bin), nil
	case bInt32:
		return append(list, int32(v.i)), nil
	case bInt64:
		return append(list, v.i), nil
	case bDateTime:
		return append(list, time.UnixMilli(v.i).UTC()), nil
	case bTimestamp:
		return append(list, time.UnixMilli(1000*v.i).UTC()), nil
	case bBoolean:
		return append(list, v.b), nil
	case bDocument:
		st := connect.NewStruct(vs)
		if err := m.fillStruct(v.doc, vs, st); err != nil {
			return nil, err
		}
		return append(list, st), nil
	case bArray:
		var sub *connect.Schema
		if len(v.arr) > 0 && (v.arr[0].t == bArray || v.arr[0].t == bDocument) {
			sub = vs.ValueSchema()
		}
		subList := []any{}
		for _, el := range v.arr {
			var err error
			if subList, err = m.convertListValue(sub, el.t, el, subList); err != nil {
				return nil, err
			}
		}
		return append(list, subList), nil
	}
	return list, nil
}

// mongoPut is Struct.put(String, Object) with the JVM's validation messages.
func mongoPut(st *connect.Struct, key string, v any) error {
	f, ok := st.Schema().Field(key)
	if !ok {
		return connect.DataErrorf("%s is not a valid field name", key)
	}
	if v != nil {
		if err := connect.ValidateValue(f.Schema, v); err != nil {
			return connect.DataErrorf("Invalid Java object for schema with type %s: class %s for field: \"%s\"", f.Schema.Type, javaClassOf(v), key)
		}
	}
	st.PutIndex(f.Index, v)
	return nil
}
