package transforms

import (
	"time"

	"github.com/connectd/connectd/connect"
)

// TimestampConverter is org.apache.kafka.connect.transforms.TimestampConverter$Key / $Value.
type TimestampConverter struct {
	side
	field, target, precision string
	format                   *javaDateFormat
	rnwd                     bool
	cache                    schemaCache
}

func (*TimestampConverter) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.ConfigString, Default: "", Importance: connect.High,
			Doc: "The field containing the timestamp, or empty if the entire value is a timestamp"}).
		Define(connect.ConfigKey{Name: "target.type", Type: connect.ConfigString, Default: connect.NoDefault,
			Validator: connect.In("string", "unix", "Date", "Time", "Timestamp"), Importance: connect.High,
			Doc: "The desired timestamp representation: string, unix, Date, Time, or Timestamp"}).
		Define(connect.ConfigKey{Name: "format", Type: connect.ConfigString, Default: "", Importance: connect.Medium,
			Doc: "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."}).
		Define(connect.ConfigKey{Name: "unix.precision", Type: connect.ConfigString, Default: "milliseconds",
			Validator: connect.In("nanoseconds", "microseconds", "milliseconds", "seconds"), Importance: connect.Low,
			Doc: "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components."}).
		Define(rnwdKey())
}
func (*TimestampConverter) Close() error { return nil }

func (t *TimestampConverter) Configure(props map[string]string) error {
	cfg, err := t.ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.field, t.target, t.precision = cfg.String("field"), cfg.String("target.type"), cfg.String("unix.precision")
	t.rnwd = cfg.Bool(replaceNullWithDefaultKey)
	f := cfg.String("format")
	if t.target == "string" && f == "" {
		return &connect.ConfigError{Message: "TimestampConverter requires format option to be specified when using string timestamps"}
	}
	if f != "" {
		if t.format, err = newJavaDateFormat(f); err != nil {
			return &connect.ConfigError{Message: "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: " + f}
		}
	}
	return nil
}

func (t *TimestampConverter) typeSchema(typ string, optional bool) *connect.Schema {
	switch typ {
	case "string":
		return connect.PrimitiveSchema(connect.TypeString, optional)
	case "unix":
		return connect.PrimitiveSchema(connect.TypeInt64, optional)
	case "Date":
		if optional {
			return connect.OptionalDateSchema
		}
		return connect.DateSchema
	case "Time":
		if optional {
			return connect.OptionalTimeSchema
		}
		return connect.TimeSchema
	}
	if optional {
		return connect.OptionalTimestampSchema
	}
	return connect.TimestampSchema
}

func tsTypeFromSchema(s *connect.Schema) (string, error) {
	switch {
	case s.Name == connect.TimestampName:
		return "Timestamp", nil
	case s.Name == connect.DateName:
		return "Date", nil
	case s.Name == connect.TimeName:
		return "Time", nil
	case s.Type == connect.TypeString:
		return "string", nil
	case s.Type == connect.TypeInt64:
		return "unix", nil
	}
	return "", connect.DataErrorf("Schema %s does not correspond to a known timestamp type format", s)
}

func (t *TimestampConverter) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	s, v := t.schema(r), t.value(r)
	if s == nil {
		if v == nil || t.field == "" {
			nv, err := t.convert(v, "")
			if err != nil {
				return nil, err
			}
			return t.newRecord(r, nil, nv), nil
		}
		m, err := requireMap(v, "converting timestamp formats")
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		nv, err := t.convert(m[t.field], "")
		if err != nil {
			return nil, err
		}
		out[t.field] = nv
		return t.newRecord(r, nil, out), nil
	}
	if t.field == "" {
		from, err := tsTypeFromSchema(s)
		if err != nil {
			return nil, err
		}
		nv, err := t.convert(v, from)
		if err != nil {
			return nil, err
		}
		return t.newRecord(r, t.typeSchema(t.target, s.Optional), nv), nil
	}
	st, err := requireStructOrNull(v, "converting timestamp formats")
	if err != nil {
		return nil, err
	}
	us := t.cache.get(s)
	if us == nil {
		b := copySchemaBasics(s, connect.StructBuilder())
		for _, f := range s.Fields() {
			if f.Name == t.field {
				b.Field(f.Name, t.typeSchema(t.target, f.Schema.Optional))
			} else {
				b.Field(f.Name, f.Schema)
			}
		}
		if s.Optional {
			b.Optional()
		}
		if ds, ok := s.Default.(*connect.Struct); ok {
			tmp, err := b.Build()
			if err != nil {
				return nil, connect.DataErrorf("%v", err)
			}
			dv, err := t.applyStruct(ds, tmp)
			if err != nil {
				return nil, err
			}
			b.DefaultValue(dv)
		}
		if us, err = b.Build(); err != nil {
			return nil, connect.DataErrorf("%v", err)
		}
		t.cache.put(s, us)
	}
	nv, err := t.applyStruct(st, us)
	if err != nil {
		return nil, err
	}
	if nv == nil {
		return t.newRecord(r, us, nil), nil
	}
	return t.newRecord(r, us, nv), nil
}

func (t *TimestampConverter) applyStruct(st *connect.Struct, us *connect.Schema) (*connect.Struct, error) {
	if st == nil {
		return nil, nil
	}
	out := connect.NewStruct(us)
	for _, f := range st.Schema().Fields() {
		fv := structGet(st, f.Name, t.rnwd)
		if f.Name == t.field {
			from, err := tsTypeFromSchema(f.Schema)
			if err != nil {
				return nil, err
			}
			if fv, err = t.convert(fv, from); err != nil {
				return nil, err
			}
		}
		if err := out.Put(f.Name, fv); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *TimestampConverter) convert(v any, from string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if from == "" {
		switch v.(type) {
		case time.Time:
			from = "Timestamp"
		case int64:
			from = "unix"
		case string:
			from = "string"
		default:
			return nil, connect.DataErrorf("TimestampConverter does not support %s objects as timestamps", javaClassOf(v))
		}
	}
	var raw time.Time
	switch from {
	case "string":
		s, ok := v.(string)
		if !ok {
			return nil, connect.DataErrorf("Expected string timestamp to be a String, but found %s", javaClassOf(v))
		}
		p, err := t.format.parse(s)
		if err != nil {
			return nil, connect.DataErrorf("Could not parse timestamp: value (%s) does not match pattern (%s)", s, t.format.pattern)
		}
		raw = p
	case "unix":
		n, ok := v.(int64)
		if !ok {
			return nil, connect.DataErrorf("Expected Unix timestamp to be a Long, but found %s", javaClassOf(v))
		}
		switch t.precision {
		case "seconds":
			n *= 1000
		case "microseconds":
			n /= 1000
		case "nanoseconds":
			n /= 1000000
		}
		raw = time.UnixMilli(n).UTC()
	default:
		tm, ok := v.(time.Time)
		if !ok {
			return nil, connect.DataErrorf("Expected %s to be a java.util.Date, but found %s", from, javaClassOf(v))
		}
		raw = tm.UTC()
	}
	switch t.target {
	case "string":
		return t.format.format(raw), nil
	case "unix":
		ms := raw.UnixMilli()
		switch t.precision {
		case "seconds":
			return ms / 1000, nil
		case "microseconds":
			return ms * 1000, nil
		case "nanoseconds":
			return ms * 1000000, nil
		}
		return ms, nil
	case "Date":
		y, m, d := raw.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
	case "Time":
		return time.Date(1970, 1, 1, raw.Hour(), raw.Minute(), raw.Second(), raw.Nanosecond()/1e6*1e6, time.UTC), nil
	}
	return raw, nil
}
