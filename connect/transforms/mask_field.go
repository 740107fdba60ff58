package transforms

import (
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

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
		// Building 10^scale for "1e-2000000000" would take gigabytes; far outside float64's range the answer is known.
		switch exp := d.Magnitude(); {
		case d.Unscaled.Sign() == 0:
			return connect.SchemaAndValue{Schema: connect.Int8Schema, Value: int8(0)}, nil
		case exp > 400:
			return connect.SchemaAndValue{Schema: connect.DecimalSchema(d.Scale), Value: d}, nil
		case exp < -400:
			return connect.SchemaAndValue{Schema: connect.Float32Schema, Value: float32(math.Copysign(0, float64(d.Unscaled.Sign())))}, nil
		}
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
