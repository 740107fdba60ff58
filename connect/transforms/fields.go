package transforms

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

func init() {
	registerKV("HeaderFrom", func(s side) connect.Transformation { return &HeaderFrom{side: s} })
	registerKV("InsertField", func(s side) connect.Transformation { return &InsertField{side: s} })
	registerKV("MaskField", func(s side) connect.Transformation { return &MaskField{side: s} })
	registerKV("ReplaceField", func(s side) connect.Transformation { return &ReplaceField{side: s} })
	registerKV("SetSchemaMetadata", func(s side) connect.Transformation { return &SetSchemaMetadata{side: s} })
	registerT(kt+"ValueToKey", func() connect.Transformation { return &ValueToKey{} })
	registerT(kt+"InsertHeader", func() connect.Transformation { return &InsertHeader{} })
	registerT(kt+"DropHeaders", func() connect.Transformation { return &DropHeaders{} })
}

// HeaderFrom is org.apache.kafka.connect.transforms.HeaderFrom$Key / $Value.
type HeaderFrom struct {
	side
	fields, headers []string
	move            bool
	rnwd            bool
	cache           schemaCache
}

func (*HeaderFrom) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.ConfigList, Default: connect.NoDefault, Validator: nonEmptyList, Importance: connect.High,
			Doc: "Field names in the record whose values are to be copied or moved to headers."}).
		Define(connect.ConfigKey{Name: "headers", Type: connect.ConfigList, Default: connect.NoDefault, Validator: nonEmptyList, Importance: connect.High,
			Doc: "Header names, in the same order as the field names listed in the fields configuration property."}).
		Define(connect.ConfigKey{Name: "operation", Type: connect.ConfigString, Default: connect.NoDefault, Validator: connect.In("move", "copy"), Importance: connect.High,
			Doc: "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."}).
		Define(rnwdKey())
}
func (*HeaderFrom) Close() error { return nil }
func (t *HeaderFrom) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.fields, t.headers = cfg.List("fields"), cfg.List("headers")
	if len(t.fields) != len(t.headers) {
		return &connect.ConfigError{Message: "'fields' config must have the same number of elements as 'headers' config."}
	}
	t.move = cfg.String("operation") == "move"
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	return nil
}

func (t *HeaderFrom) op() string {
	if t.move {
		return "move"
	}
	return "copy"
}

func (t *HeaderFrom) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	s, v := t.schema(r), t.value(r)
	hs := r.Headers.Clone()
	if s == nil {
		m, err := requireMap(v, "header "+t.op())
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		for i, f := range t.fields {
			if t.move {
				delete(out, f)
			}
			hs = append(hs, connect.Header{Key: t.headers[i], Value: m[f]})
		}
		return t.withHeaders(r, nil, out, hs), nil
	}
	st, err := requireStruct(v, "header "+t.op())
	if err != nil {
		return nil, err
	}
	us, uv := s, st
	if t.move {
		if us = t.cache.get(s); us == nil {
			b := copySchemaBasics(s, connect.StructBuilder())
			for _, f := range s.Fields() {
				if !contains(t.fields, f.Name) {
					b.Field(f.Name, f.Schema)
				}
			}
			us = b.MustBuild()
			t.cache.put(s, us)
		}
		uv = connect.NewStruct(us)
		for _, f := range us.Fields() {
			if err := uv.Put(f.Name, structGet(st, f.Name, t.rnwd)); err != nil {
				return nil, err
			}
		}
	}
	for i, f := range t.fields {
		fld, ok := s.Field(f)
		if !ok {
			return nil, connect.DataErrorf("Cannot invoke \"org.apache.kafka.connect.data.Field.schema()\" because the return value of \"org.apache.kafka.connect.data.Schema.field(String)\" is null")
		}
		hs = append(hs, connect.Header{Key: t.headers[i], Schema: fld.Schema, Value: structGet(st, f, t.rnwd)})
	}
	return t.withHeaders(r, us, uv, hs), nil
}

func (t *HeaderFrom) withHeaders(r *connect.SinkRecord, s *connect.Schema, v any, hs connect.Headers) *connect.SinkRecord {
	out := t.newRecord(r, s, v)
	out.Headers = hs
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

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

// MaskField is org.apache.kafka.connect.transforms.MaskField$Key / $Value.
type MaskField struct {
	side
	fields      []string
	replacement *string
	rnwd        bool
}

func (*MaskField) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.ConfigList, Default: connect.NoDefault, Validator: nonEmptyList, Importance: connect.High, Doc: "Names of fields to mask."}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.ConfigString, Default: nil, Validator: connect.NonEmptyString(), Importance: connect.Low,
			Doc: "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."}).
		Define(rnwdKey())
}
func (*MaskField) Close() error { return nil }
func (t *MaskField) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.fields = cfg.List("fields")
	if _, ok := props["replacement"]; ok {
		s := cfg.String("replacement")
		t.replacement = &s
	}
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	return nil
}

func (t *MaskField) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	s, v := t.schema(r), t.value(r)
	if s == nil {
		m, err := requireMap(v, "mask fields")
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		for _, f := range t.fields {
			mv, err := t.masked(m[f])
			if err != nil {
				return nil, err
			}
			out[f] = mv
		}
		return t.newRecord(r, nil, out), nil
	}
	st, err := requireStruct(v, "mask fields")
	if err != nil {
		return nil, err
	}
	out := connect.NewStruct(st.Schema())
	for _, f := range st.Schema().Fields() {
		fv := structGet(st, f.Name, t.rnwd)
		if contains(t.fields, f.Name) {
			if fv, err = t.masked(fv); err != nil {
				return nil, err
			}
		}
		if err := out.Put(f.Name, fv); err != nil {
			return nil, err
		}
	}
	return t.newRecord(r, s, out), nil
}

func (t *MaskField) masked(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.replacement == nil {
		switch v.(type) {
		case bool:
			return false, nil
		case int8:
			return int8(0), nil
		case int16:
			return int16(0), nil
		case int32:
			return int32(0), nil
		case int64:
			return int64(0), nil
		case float32:
			return float32(0), nil
		case float64:
			return float64(0), nil
		case connect.Decimal:
			return connect.NewDecimal(0, 0), nil
		case time.Time:
			return time.UnixMilli(0).UTC(), nil
		case string:
			return "", nil
		case []any:
			return []any{}, nil
		case map[string]any:
			return map[string]any{}, nil
		case map[any]any:
			return map[any]any{}, nil
		}
		return nil, connect.DataErrorf("Cannot mask value of type: %s", javaClassOf(v))
	}
	rep := *t.replacement
	bad := func() error {
		return connect.DataErrorf("Unable to convert %s (class java.lang.String) to a number", rep)
	}
	switch v.(type) {
	case string:
		return rep, nil
	case int8, int16, int32, int64:
		sv, err := parseValueString(rep)
		if err != nil || sv.Value == nil {
			return nil, bad()
		}
		l, ok := numberLong(sv.Value)
		if !ok {
			return nil, connect.DataErrorf("Unable to convert %s (class java.lang.String) to a number", rep)
		}
		switch v.(type) {
		case int8:
			return int8(l), nil
		case int16:
			return int16(l), nil
		case int32:
			return int32(l), nil
		}
		return l, nil
	case float32, float64:
		sv, err := parseValueString(rep)
		if err != nil || sv.Value == nil {
			return nil, bad()
		}
		d, ok := numberDouble(sv.Value)
		if !ok {
			return nil, bad()
		}
		if _, is32 := v.(float32); is32 {
			return float32(d), nil
		}
		return d, nil
	case connect.Decimal:
		d, err := connect.ParseDecimal(rep)
		if err != nil {
			return nil, connect.DataErrorf("Unable to convert %s (class java.lang.String) to a number", rep)
		}
		return d, nil
	}
	return nil, connect.DataErrorf("Cannot mask value of type %s with custom replacement.", javaClassOf(v))
}

// parseValueString is a subset of the JVM's Values.parseString: booleans, null, numbers (smallest
// integer type, float32/float64, Decimal), ISO dates; anything else is a STRING.
func parseValueString(s string) (connect.SchemaAndValue, error) {
	if s == "" {
		return connect.SchemaAndValue{Schema: connect.StringSchema, Value: s}, nil
	}
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "true":
		return connect.SchemaAndValue{Schema: connect.BoolSchema, Value: true}, nil
	case "false":
		return connect.SchemaAndValue{Schema: connect.BoolSchema, Value: false}, nil
	case "null":
		return connect.SchemaAndValue{}, nil
	}
	if d, err := connect.ParseDecimal(t); err == nil && t != "" && strings.IndexFunc(t, func(r rune) bool { return r == ' ' }) < 0 {
		r := new(big.Rat).SetFrac(d.Unscaled, big.NewInt(1))
		if d.Scale > 0 {
			r.SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
		} else if d.Scale < 0 {
			r.SetInt(new(big.Int).Mul(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil)))
		}
		abs := new(big.Rat).Abs(r)
		if abs.Cmp(new(big.Rat).SetInt64(0)) == 0 || abs.Cmp(big.NewRat(1, 1)) >= 0 && abs.Cmp(new(big.Rat).SetFloat64(1e19)) <= 0 {
			if r.IsInt() && r.Num().IsInt64() {
				n := r.Num().Int64()
				switch {
				case n == int64(int8(n)):
					return connect.SchemaAndValue{Schema: connect.Int8Schema, Value: int8(n)}, nil
				case n == int64(int16(n)):
					return connect.SchemaAndValue{Schema: connect.Int16Schema, Value: int16(n)}, nil
				case n == int64(int32(n)):
					return connect.SchemaAndValue{Schema: connect.Int32Schema, Value: int32(n)}, nil
				}
				return connect.SchemaAndValue{Schema: connect.Int64Schema, Value: n}, nil
			}
		}
		f64, _ := r.Float64()
		f32, _ := r.Float32()
		if d.Scale != 0 && !math.IsInf(float64(f32), 0) {
			return connect.SchemaAndValue{Schema: connect.Float32Schema, Value: f32}, nil
		}
		if d.Scale != 0 && !math.IsInf(f64, 0) {
			return connect.SchemaAndValue{Schema: connect.Float64Schema, Value: f64}, nil
		}
		return connect.SchemaAndValue{Schema: connect.DecimalSchema(d.Scale), Value: d}, nil
	}
	if len(t) == 10 {
		if tm, err := time.Parse("2006-01-02", t); err == nil {
			return connect.SchemaAndValue{Schema: connect.DateSchema, Value: tm.UTC()}, nil
		}
	}
	return connect.SchemaAndValue{Schema: connect.StringSchema, Value: s}, nil
}

// ReplaceField is org.apache.kafka.connect.transforms.ReplaceField$Key / $Value.
type ReplaceField struct {
	side
	exclude, include []string
	renames, reverse map[string]string
	rnwd             bool
	cache            schemaCache
}

func parseRenames(l []string) (map[string]string, error) {
	m := map[string]string{}
	for _, mapping := range l {
		parts := javaSplit(mapping, ":")
		if len(parts) != 2 {
			return nil, &connect.ConfigError{Name: "renames", Value: javaList(l), Message: "Invalid rename mapping: " + mapping}
		}
		m[parts[0]] = parts[1]
	}
	return m, nil
}

func (*ReplaceField) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "exclude", Type: connect.ConfigList, Default: "", Importance: connect.Medium, Doc: "Fields to exclude. This takes precedence over the fields to include."}).
		Define(connect.ConfigKey{Name: "include", Type: connect.ConfigList, Default: "", Importance: connect.Medium, Doc: "Fields to include. If specified, only these fields will be used."}).
		Define(connect.ConfigKey{Name: "renames", Type: connect.ConfigList, Default: "", Importance: connect.Medium, Doc: "Field rename mappings.",
			Validator: connect.ValidatorFunc{Desc: "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>", Fn: func(_ string, v any) error {
				l, _ := v.([]string)
				_, err := parseRenames(l)
				return err
			}}}).
		Define(rnwdKey())
}
func (*ReplaceField) Close() error { return nil }
func (t *ReplaceField) Configure(props map[string]string) (err error) {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.exclude, t.include = cfg.List("exclude"), cfg.List("include")
	if t.renames, err = parseRenames(cfg.List("renames")); err != nil {
		return err
	}
	t.reverse = map[string]string{}
	for k, v := range t.renames {
		t.reverse[v] = k
	}
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	return nil
}

func (t *ReplaceField) keep(f string) bool {
	return !contains(t.exclude, f) && (len(t.include) == 0 || contains(t.include, f))
}

func (t *ReplaceField) renamed(f string) string {
	if n, ok := t.renames[f]; ok {
		return n
	}
	return f
}

func (t *ReplaceField) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	v := t.value(r)
	if v == nil {
		return r, nil
	}
	s := t.schema(r)
	if s == nil {
		m, err := requireMap(v, "field replacement")
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for _, k := range sortedKeys(m) {
			if t.keep(k) {
				out[t.renamed(k)] = m[k]
			}
		}
		return t.newRecord(r, nil, out), nil
	}
	st, err := requireStruct(v, "field replacement")
	if err != nil {
		return nil, err
	}
	us := t.cache.get(st.Schema())
	if us == nil {
		b := copySchemaBasics(st.Schema(), connect.StructBuilder())
		for _, f := range st.Schema().Fields() {
			if t.keep(f.Name) {
				b.Field(t.renamed(f.Name), f.Schema)
			}
		}
		if us, err = b.Build(); err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		t.cache.put(st.Schema(), us)
	}
	out := connect.NewStruct(us)
	for _, f := range us.Fields() {
		orig := f.Name
		if o, ok := t.reverse[f.Name]; ok {
			orig = o
		}
		if err := out.Put(f.Name, structGet(st, orig, t.rnwd)); err != nil {
			return nil, err
		}
	}
	return t.newRecord(r, us, out), nil
}

// SetSchemaMetadata is org.apache.kafka.connect.transforms.SetSchemaMetadata$Key / $Value.
type SetSchemaMetadata struct {
	side
	name    *string
	version *int32
	rnwd    bool
}

func (*SetSchemaMetadata) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "schema.name", Type: connect.ConfigString, Default: nil, Importance: connect.High, Doc: "Schema name to set."}).
		Define(connect.ConfigKey{Name: "schema.version", Type: connect.ConfigInt, Default: nil, Importance: connect.High, Doc: "Schema version to set."}).
		Define(rnwdKey())
}
func (*SetSchemaMetadata) Close() error { return nil }
func (t *SetSchemaMetadata) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	if _, ok := props["schema.name"]; ok {
		n := cfg.String("schema.name")
		t.name = &n
	}
	if _, ok := props["schema.version"]; ok {
		v := int32(cfg.Int("schema.version"))
		t.version = &v
	}
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	if t.name == nil && t.version == nil {
		return &connect.ConfigError{Message: "Neither schema name nor version configured"}
	}
	return nil
}

func (t *SetSchemaMetadata) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	s, v := t.schema(r), t.value(r)
	if s == nil && v == nil {
		return r, nil
	}
	if err := requireSchema(s, "updating schema metadata"); err != nil {
		return nil, err
	}
	if s.Type != connect.TypeStruct {
		// The JVM builds the new schema from schema.fields(), which fails for non-struct schemas.
		return nil, connect.DataErrorf("Cannot list fields on non-struct type")
	}
	b := connect.BuilderFrom(s)
	if t.name != nil {
		b.Name(*t.name)
	}
	if t.version != nil {
		b.Version(*t.version)
	}
	us, err := b.Build()
	if err != nil {
		return nil, connect.DataErrorf("%v", err)
	}
	if st, ok := v.(*connect.Struct); ok {
		ns := connect.NewStruct(us)
		for _, f := range us.Fields() {
			ns.PutIndex(f.Index, structGet(st, f.Name, t.rnwd))
		}
		v = ns
	}
	return t.newRecord(r, us, v), nil
}

// ValueToKey is org.apache.kafka.connect.transforms.ValueToKey.
type ValueToKey struct {
	fields []string
	rnwd   bool
	cache  schemaCache
}

func (*ValueToKey) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.ConfigList, Default: connect.NoDefault, Validator: nonNullNonEmptyList, Importance: connect.High,
			Doc: "Field names on the record value to extract as the record key."}).
		Define(rnwdKey())
}
func (*ValueToKey) Close() error { return nil }
func (t *ValueToKey) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.fields = cfg.List("fields")
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	return nil
}

func (t *ValueToKey) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, "copying fields from value to key")
		if err != nil {
			return nil, err
		}
		key := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			key[f] = m[f]
		}
		return r.WithKey(nil, key), nil
	}
	st, err := requireStruct(r.Value, "copying fields from value to key")
	if err != nil {
		return nil, err
	}
	ks := t.cache.get(st.Schema())
	if ks == nil {
		b := connect.StructBuilder()
		for _, f := range t.fields {
			fv, ok := st.Schema().Field(f)
			if !ok {
				return nil, connect.DataErrorf("Field does not exist: %s", f)
			}
			b.Field(f, fv.Schema)
		}
		if ks, err = b.Build(); err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		t.cache.put(st.Schema(), ks)
	}
	key := connect.NewStruct(ks)
	for _, f := range t.fields {
		if err := key.Put(f, structGet(st, f, t.rnwd)); err != nil {
			return nil, err
		}
	}
	return r.NewRecord(r.Topic, r.Partition, ks, key, st.Schema(), st, r.Timestamp, r.Headers), nil
}

// InsertHeader is org.apache.kafka.connect.transforms.InsertHeader.
type InsertHeader struct {
	header  string
	literal connect.SchemaAndValue
}

func (*InsertHeader) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "header", Type: connect.ConfigString, Default: connect.NoDefault, Validator: nonNull, Importance: connect.High, Doc: "The name of the header."}).
		Define(connect.ConfigKey{Name: "value.literal", Type: connect.ConfigString, Default: connect.NoDefault, Validator: nonNull, Importance: connect.High,
			Doc: "The literal value that is to be set as the header value on all records."})
}

var nonNull = connect.ValidatorFunc{Desc: "non-null string", Fn: func(name string, v any) error {
	if v == nil {
		return &connect.ConfigError{Name: name, Value: nil, Message: "entry must be non null"}
	}
	return nil
}}

func (*InsertHeader) Close() error { return nil }
func (t *InsertHeader) Configure(props map[string]string) (err error) {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.header = cfg.String("header")
	t.literal, err = parseValueString(cfg.String("value.literal"))
	return err
}

func (t *InsertHeader) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	out := r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, r.ValueSchema, r.Value, r.Timestamp, r.Headers.With(t.header, t.literal.Schema, t.literal.Value))
	return out, nil
}

// DropHeaders is org.apache.kafka.connect.transforms.DropHeaders.
type DropHeaders struct{ headers []string }

func (*DropHeaders) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "headers", Type: connect.ConfigList, Default: connect.NoDefault, Validator: nonNullNonEmptyList,
		Importance: connect.High, Doc: "The name of the headers to be removed."})
}
func (*DropHeaders) Close() error { return nil }
func (t *DropHeaders) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.headers = cfg.List("headers")
	return nil
}

func (t *DropHeaders) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	hs := connect.Headers{}
	for _, h := range r.Headers {
		if !contains(t.headers, h.Key) {
			hs = append(hs, h)
		}
	}
	return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, r.ValueSchema, r.Value, r.Timestamp, hs), nil
}

var _ = strconv.Itoa
var _ = fmt.Sprint
