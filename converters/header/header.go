// Package header is the JVM's SimpleHeaderConverter: header values are strings on the wire; reading infers
// booleans and numbers as the JVM's Values.parseString does for its common cases, writing renders values as
// strings.
package header

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// ClassName is the JVM class users configure.
const ClassName = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

func init() {
	connect.Register(connect.Plugin{Class: ClassName, Type: connect.PluginHeaderConverter, New: func() any { return &Converter{} }})
}

// Converter is SimpleHeaderConverter.
type Converter struct{}

func (*Converter) ClassName() string                 { return ClassName }
func (*Converter) Configure(map[string]string) error { return nil }
func (*Converter) ConfigDef() *connect.ConfigDef     { return connect.NewConfigDef() }
func (*Converter) Version() string                   { return connect.DefaultPluginVersion }
func (*Converter) String() string                    { return ClassName }
func (*Converter) Close() error                      { return nil }

// ToConnectHeader parses the UTF-8 string: null stays null; booleans, integers (narrowest of INT8..INT64)
// and floating numbers (FLOAT64; FLOAT32 when exact) are inferred; anything else is a STRING. Unlike the JVM,
// arrays, maps and ISO dates are kept as strings (documented gap).
func (*Converter) ToConnectHeader(_, _ string, value []byte) (connect.SchemaAndValue, error) {
	if value == nil {
		return connect.NullSchemaAndValue, nil
	}
	s := string(value)
	if s == "" {
		return connect.SchemaAndValue{Schema: connect.StringSchema, Value: s}, nil
	}
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "true":
		return connect.SchemaAndValue{Schema: connect.BoolSchema, Value: true}, nil
	case "false":
		return connect.SchemaAndValue{Schema: connect.BoolSchema, Value: false}, nil
	}
	if t == s && looksNumeric(t) {
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			switch {
			case n >= math.MinInt8 && n <= math.MaxInt8:
				return connect.SchemaAndValue{Schema: connect.Int8Schema, Value: int8(n)}, nil
			case n >= math.MinInt16 && n <= math.MaxInt16:
				return connect.SchemaAndValue{Schema: connect.Int16Schema, Value: int16(n)}, nil
			case n >= math.MinInt32 && n <= math.MaxInt32:
				return connect.SchemaAndValue{Schema: connect.Int32Schema, Value: int32(n)}, nil
			}
			return connect.SchemaAndValue{Schema: connect.Int64Schema, Value: n}, nil
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) {
			if f32 := float32(f); float64(f32) == f {
				return connect.SchemaAndValue{Schema: connect.Float32Schema, Value: f32}, nil
			}
			return connect.SchemaAndValue{Schema: connect.Float64Schema, Value: f}, nil
		}
	}
	return connect.SchemaAndValue{Schema: connect.StringSchema, Value: s}, nil
}

func looksNumeric(s string) bool {
	for i, c := range s {
		if (c < '0' || c > '9') && c != '.' && c != 'e' && c != 'E' && !((c == '-' || c == '+') && (i == 0 || s[i-1] == 'e' || s[i-1] == 'E')) {
			return false
		}
	}
	return true
}

// FromConnectHeader renders the value as the JVM's Values.convertToString does for primitives.
func (*Converter) FromConnectHeader(_, _ string, schema *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	switch v := value.(type) {
	case string:
		return []byte(v), nil
	case []byte:
		return v, nil
	case float32:
		return []byte(strconv.FormatFloat(float64(v), 'G', -1, 32)), nil
	case float64:
		return []byte(strconv.FormatFloat(v, 'G', -1, 64)), nil
	case time.Time:
		switch connect.LogicalName(schema) {
		case connect.DateName:
			return []byte(v.UTC().Format("2006-01-02")), nil
		case connect.TimeName:
			return []byte(v.UTC().Format("15:04:05.000Z")), nil
		}
		return []byte(v.UTC().Format("2006-01-02T15:04:05.000Z")), nil
	case connect.Decimal:
		return []byte(v.String()), nil
	}
	return []byte(fmt.Sprint(value)), nil
}
