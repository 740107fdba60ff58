package jsonconv

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

// ---- schema to its JSON form (JsonConverter.asJsonSchema), with the JVM's field order -----------------

func (c *Converter) appendSchema(out []byte, s *connect.Schema, fieldName string) ([]byte, error) {
	if fieldName == "" {
		if cached, ok := c.fromCache.get(s); ok {
			return append(out, cached...), nil
		}
	}
	start := len(out)
	out = append(out, `{"type":`...)
	out = appendString(out, jsonTypeName(s.Type))
	var err error
	switch s.Type {
	case connect.TypeArray:
		out = append(out, `,"items":`...)
		if out, err = c.appendSchemaOrNull(out, s.ValueSchema()); err != nil {
			return nil, err
		}
	case connect.TypeMap:
		out = append(out, `,"keys":`...)
		if out, err = c.appendSchemaOrNull(out, s.KeySchema()); err != nil {
			return nil, err
		}
		out = append(out, `,"values":`...)
		if out, err = c.appendSchemaOrNull(out, s.ValueSchema()); err != nil {
			return nil, err
		}
	case connect.TypeStruct:
		out = append(out, `,"fields":[`...)
		for i, f := range s.Fields() {
			if i > 0 {
				out = append(out, ',')
			}
			if out, err = c.appendSchema(out, f.Schema, f.Name); err != nil {
				return nil, err
			}
		}
		out = append(out, ']')
	}
	out = append(out, `,"optional":`...)
	out = strconv.AppendBool(out, s.Optional)
	if s.Name != "" {
		out = append(out, `,"name":`...)
		out = appendString(out, s.Name)
	}
	if s.Version != nil {
		out = append(out, `,"version":`...)
		out = strconv.AppendInt(out, int64(*s.Version), 10)
	}
	if s.Doc != "" {
		out = append(out, `,"doc":`...)
		out = appendString(out, s.Doc)
	}
	if s.Parameters != nil {
		// The JVM keeps insertion order (LinkedHashMap); connect.Schema has a Go map, so keys are sorted.
		out = append(out, `,"parameters":{`...)
		for i, k := range connect.SortedStrings(s.Parameters) {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendString(out, k)
			out = append(out, ':')
			out = appendString(out, s.Parameters[k])
		}
		out = append(out, '}')
	}
	if s.Default != nil {
		out = append(out, `,"default":`...)
		if out, err = c.appendValue(out, s, s.Default); err != nil {
			return nil, err
		}
	}
	if fieldName != "" {
		out = append(out, `,"field":`...)
		out = appendString(out, fieldName)
		return append(out, '}'), nil
	}
	out = append(out, '}')
	c.fromCache.put(s, append([]byte(nil), out[start:]...))
	return out, nil
}

func (c *Converter) appendSchemaOrNull(out []byte, s *connect.Schema) ([]byte, error) {
	if s == nil {
		return append(out, "null"...), nil
	}
	return c.appendSchema(out, s, "")
}

func jsonTypeName(t connect.Type) string {
	switch t {
	case connect.TypeFloat32:
		return "float"
	case connect.TypeFloat64:
		return "double"
	}
	return t.Lower()
}

// ---- values (JsonConverter.convertToJson) --------------------------------------------------------------

func (c *Converter) appendValue(out []byte, s *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		if s == nil {
			return append(out, "null"...), nil
		}
		if s.Default != nil && c.replaceNull {
			return c.appendValue(out, s, s.Default)
		}
		if s.Optional {
			return append(out, "null"...), nil
		}
		return nil, dataErr("Conversion error: null value for field that is required and has no default value")
	}
	if s != nil {
		switch s.Name {
		case connect.DecimalName:
			d, ok := v.(connect.Decimal)
			if !ok {
				return nil, dataErr("Invalid type for Decimal, expected BigDecimal but was %s", javaClass(v))
			}
			if c.decimalNumeric {
				return append(out, bigDecimalString(d)...), nil
			}
			scale, err := connect.DecimalScale(s)
			if err != nil {
				return nil, dataErr("Invalid Decimal schema: scale parameter not found.")
			}
			if d.Scale != scale {
				return nil, dataErr("Decimal value has mismatching scale for given Decimal schema. Schema has scale %d, value has scale %d.", scale, d.Scale)
			}
			return appendBase64(out, connect.DecimalToBytes(d)), nil
		case connect.DateName, connect.TimeName, connect.TimestampName:
			t, ok := v.(time.Time)
			if !ok {
				return nil, dataErr("Invalid type for %s, expected Date but was %s", s.Name[strings.LastIndexByte(s.Name, '.')+1:], javaClass(v))
			}
			ms := t.UnixMilli()
			switch s.Name {
			case connect.DateName:
				if ms%86400000 != 0 {
					return nil, dataErr("Kafka Connect Date type should not have any time fields set to non-zero values.")
				}
				return strconv.AppendInt(out, int64(int32(ms/86400000)), 10), nil
			case connect.TimeName:
				if ms < 0 || ms > 86400000 {
					return nil, dataErr("Kafka Connect Time type should not have any date fields set to non-zero values.")
				}
				return strconv.AppendInt(out, int64(int32(ms)), 10), nil
			}
			return strconv.AppendInt(out, ms, 10), nil
		}
	}
	var t connect.Type
	if s == nil {
		t = connect.InferType(v)
		if t == 0 {
			return nil, dataErr("Java class %s does not have corresponding schema type.", javaClass(v))
		}
	} else {
		t = s.Type
	}
	bad := func() ([]byte, error) {
		st := "unknown schema"
		if s != nil {
			st = s.Type.String()
		}
		return nil, dataErr("Invalid type for %s: %s", st, javaClass(v))
	}
	switch t {
	case connect.TypeInt8:
		x, ok := v.(int8)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(out, int64(x), 10), nil
	case connect.TypeInt16:
		x, ok := v.(int16)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(out, int64(x), 10), nil
	case connect.TypeInt32:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(out, int64(x), 10), nil
	case connect.TypeInt64:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(out, x, 10), nil
	case connect.TypeFloat32:
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		return appendJavaFloat(out, float64(x), 32), nil
	case connect.TypeFloat64:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		return appendJavaFloat(out, x, 64), nil
	case connect.TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		return strconv.AppendBool(out, x), nil
	case connect.TypeString:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		return appendString(out, x), nil
	case connect.TypeBytes:
		x, ok := v.([]byte)
		if !ok {
			return nil, dataErr("Invalid type for bytes type: %s", javaClass(v))
		}
		return appendBase64(out, x), nil
	case connect.TypeArray:
		x, ok := v.([]any)
		if !ok {
			return bad()
		}
		var elem *connect.Schema
		if s != nil {
			elem = s.ValueSchema()
		}
		out = append(out, '[')
		for i, e := range x {
			if i > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = c.appendValue(out, elem, e); err != nil {
				return nil, err
			}
		}
		return append(out, ']'), nil
	case connect.TypeMap:
		return c.appendMap(out, s, v, bad)
	case connect.TypeStruct:
		st, ok := v.(*connect.Struct)
		if !ok {
			return bad()
		}
		if s == nil || !st.Schema().Equal(s) {
			return nil, dataErr("Mismatching schema.")
		}
		out = append(out, '{')
		for i, f := range s.Fields() {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendString(out, f.Name)
			out = append(out, ':')
			var err error
			if out, err = c.appendValue(out, f.Schema, st.GetWithoutDefault(f.Name)); err != nil {
				return nil, err
			}
		}
		return append(out, '}'), nil
	}
	return nil, dataErr("Couldn't convert %v to JSON.", v)
}

type entry struct{ k, v any }

func (c *Converter) appendMap(out []byte, s *connect.Schema, v any, bad func() ([]byte, error)) ([]byte, error) {
	var entries []entry
	switch m := v.(type) {
	case map[string]any:
		entries = make([]entry, 0, len(m))
		for k, e := range m {
			entries = append(entries, entry{k, e})
		}
	case map[any]any:
		entries = make([]entry, 0, len(m))
		for k, e := range m {
			entries = append(entries, entry{k, e})
		}
	default:
		return bad()
	}
	// Go maps have no order; entries are written sorted (the JVM writes its Map's iteration order).
	sort.Slice(entries, func(i, j int) bool { return lessKey(entries[i].k, entries[j].k) })
	var ks, vs *connect.Schema
	objectMode := true
	if s != nil {
		ks, vs = s.KeySchema(), s.ValueSchema()
		objectMode = ks.Type == connect.TypeString
	} else {
		for _, e := range entries {
			if _, ok := e.k.(string); !ok {
				objectMode = false
				break
			}
		}
	}
	open, close := byte('{'), byte('}')
	if !objectMode {
		open, close = '[', ']'
	}
	out = append(out, open)
	var err error
	for i, e := range entries {
		if i > 0 {
			out = append(out, ',')
		}
		if objectMode {
			var kb []byte
			if kb, err = c.appendValue(nil, ks, e.k); err != nil {
				return nil, err
			}
			out = appendString(out, asText(kb))
			out = append(out, ':')
			if out, err = c.appendValue(out, vs, e.v); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, '[')
		if out, err = c.appendValue(out, ks, e.k); err != nil {
			return nil, err
		}
		out = append(out, ',')
		if out, err = c.appendValue(out, vs, e.v); err != nil {
			return nil, err
		}
		out = append(out, ']')
	}
	return append(out, close), nil
}

// asText is JsonNode.asText() of an encoded key: strings unquoted, everything else its JSON text.
func asText(kb []byte) string {
	if len(kb) > 0 && kb[0] == '"' {
		s, _ := stringAt(kb, 0)
		return s
	}
	return string(kb)
}

func lessKey(a, b any) bool {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x < y
		}
	case int8:
		if y, ok := b.(int8); ok {
			return x < y
		}
	case int16:
		if y, ok := b.(int16); ok {
			return x < y
		}
	case int32:
		if y, ok := b.(int32); ok {
			return x < y
		}
	case int64:
		if y, ok := b.(int64); ok {
			return x < y
		}
	case float32:
		if y, ok := b.(float32); ok {
			return x < y
		}
	case float64:
		if y, ok := b.(float64); ok {
			return x < y
		}
	case bool:
		if y, ok := b.(bool); ok {
			return !x && y
		}
	case connect.Decimal:
		if y, ok := b.(connect.Decimal); ok {
			return new(big.Rat).SetFrac(x.Unscaled, pow10(x.Scale)).Cmp(new(big.Rat).SetFrac(y.Unscaled, pow10(y.Scale))) < 0
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Before(y)
		}
	}
	return fmt.Sprint(a) < fmt.Sprint(b)
}

func pow10(scale int32) *big.Int {
	if scale < 0 {
		return big.NewInt(1) // only used for ordering keys; negative scales compare via String below
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
}

// javaClass names a Go value's type as the JVM's getClass() would print it in messages.
func javaClass(v any) string {
	switch v.(type) {
	case int8:
		return "class java.lang.Byte"
	case int16:
		return "class java.lang.Short"
	case int32:
		return "class java.lang.Integer"
	case int64:
		return "class java.lang.Long"
	case float32:
		return "class java.lang.Float"
	case float64:
		return "class java.lang.Double"
	case bool:
		return "class java.lang.Boolean"
	case string:
		return "class java.lang.String"
	case []byte:
		return "class [B"
	case []any:
		return "class java.util.ArrayList"
	case map[string]any, map[any]any:
		return "class java.util.HashMap"
	case *connect.Struct:
		return "class org.apache.kafka.connect.data.Struct"
	case connect.Decimal:
		return "class java.math.BigDecimal"
	case time.Time:
		return "class java.util.Date"
	}
	return fmt.Sprintf("class %T", v)
}

// ---- scalar formatting as Jackson writes it -----------------------------------------------------------

func appendBase64(out []byte, b []byte) []byte {
	out = append(out, '"')
	n := base64.StdEncoding.EncodedLen(len(b))
	out = append(out, make([]byte, n)...)
	base64.StdEncoding.Encode(out[len(out)-n:], b)
	return append(out, '"')
}

const hexUpper = "0123456789ABCDEF"

// appendString quotes s as Jackson does: \" \\ and short escapes for \b\t\n\f\r, \u00XX for other control
// characters, characters outside the BMP as an escaped surrogate pair, everything else as UTF-8.
func appendString(out []byte, s string) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			i++
			continue
		}
		if c < 0x80 {
			out = append(out, s[start:i]...)
			switch c {
			case '"':
				out = append(out, '\\', '"')
			case '\\':
				out = append(out, '\\', '\\')
			case '\b':
				out = append(out, '\\', 'b')
			case '\t':
				out = append(out, '\\', 't')
			case '\n':
				out = append(out, '\\', 'n')
			case '\f':
				out = append(out, '\\', 'f')
			case '\r':
				out = append(out, '\\', 'r')
			default:
				out = append(out, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, s[start:i]...)
			out = append(out, "\uFFFD"...)
			i++
			start = i
			continue
		}
		if r > 0xFFFF {
			out = append(out, s[start:i]...)
			r -= 0x10000
			for _, u := range [2]rune{0xD800 + (r >> 10), 0xDC00 + (r & 0x3FF)} {
				out = append(out, '\\', 'u', hexUpper[u>>12&0xf], hexUpper[u>>8&0xf], hexUpper[u>>4&0xf], hexUpper[u&0xf])
			}
			i += n
			start = i
			continue
		}
		i += n
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// appendJavaFloat writes Double.toString / Float.toString, NaN and infinities quoted as Jackson's
// WRITE_NAN_AS_STRINGS does.
func appendJavaFloat(out []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		out = append(out, '"')
		out = connect.AppendJavaDouble(out, f, bits)
		return append(out, '"')
	}
	return connect.AppendJavaDouble(out, f, bits)
}

func bigDecimalString(d connect.Decimal) string { return connect.JavaBigDecimalString(d) }
