// Package str is org.apache.kafka.connect.storage.StringConverter (named str to avoid clashing with the
// standard library's strings).
package str

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
	cjson "github.com/connectd/connectd/converters/json"
)

const (
	ClassName      = "org.apache.kafka.connect.storage.StringConverter"
	EncodingConfig = "converter.encoding"
)

func init() {
	connect.Register(connect.Plugin{Class: ClassName, Type: connect.PluginConverter, New: func() any { return &Converter{} }})
}

// ConfigDef is StringConverterConfig's definition.
func ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "converter.type", Type: connect.ConfigString, Default: nil,
			Validator: connect.InIgnoreCase("key", "value", "header"), Importance: connect.Low, Doc: "How this converter will be used."}).
		Define(connect.ConfigKey{Name: EncodingConfig, Type: connect.ConfigString, Default: "UTF-8", Importance: connect.High,
			Doc: "The name of the Java character set to use for encoding strings as byte arrays.", Width: connect.WidthMedium,
			DisplayName: "Encoding"})
}

// Converter converts strings; the zero value uses UTF-8. It also works as a header converter through
// ToConnectHeader/FromConnectHeader.
type Converter struct{ enc string }

// Configure implements connect.Converter.
func (c *Converter) Configure(configs map[string]string, _ bool) error {
	cfg, err := ConfigDef().Parse(configs)
	if err != nil {
		return err
	}
	enc := canonicalEncoding(cfg.String(EncodingConfig))
	if enc == "" {
		return &connect.ConfigError{Message: "Unsupported encoding " + cfg.String(EncodingConfig)}
	}
	c.enc = enc
	return nil
}

func canonicalEncoding(s string) string {
	switch strings.ToUpper(strings.ReplaceAll(s, "_", "-")) {
	case "UTF-8", "UTF8":
		return "UTF-8"
	case "US-ASCII", "ASCII":
		return "US-ASCII"
	case "ISO-8859-1", "ISO8859-1", "LATIN1":
		return "ISO-8859-1"
	case "UTF-16", "UTF16":
		return "UTF-16"
	case "UTF-16BE":
		return "UTF-16BE"
	case "UTF-16LE":
		return "UTF-16LE"
	}
	return ""
}

// ToConnectData implements connect.Converter: an optional STRING (null stays null).
func (c *Converter) ToConnectData(_ string, _ connect.Headers, value []byte) (connect.SchemaAndValue, error) {
	if value == nil {
		return connect.SchemaAndValue{Schema: connect.OptionalStringSchema}, nil
	}
	return connect.SchemaAndValue{Schema: connect.OptionalStringSchema, Value: decode(c.enc, value)}, nil
}

// FromConnectData implements connect.Converter: the value's Java toString() in the configured encoding.
func (c *Converter) FromConnectData(_ string, _ connect.Headers, _ *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	return encode(c.enc, JavaString(value)), nil
}

// ToConnectHeader and FromConnectHeader make the converter usable as a header converter.
func (c *Converter) ToConnectHeader(topic, _ string, value []byte) (connect.SchemaAndValue, error) {
	return c.ToConnectData(topic, nil, value)
}

func (c *Converter) FromConnectHeader(topic, _ string, schema *connect.Schema, value any) ([]byte, error) {
	return c.FromConnectData(topic, nil, schema, value)
}

func decode(enc string, b []byte) string {
	switch enc {
	case "US-ASCII":
		r := make([]rune, len(b))
		for i, c := range b {
			if c >= 0x80 {
				r[i] = utf8.RuneError
			} else {
				r[i] = rune(c)
			}
		}
		return string(r)
	case "ISO-8859-1":
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r)
	case "UTF-16", "UTF-16BE", "UTF-16LE":
		var order binary.ByteOrder = binary.BigEndian
		if enc == "UTF-16LE" {
			order = binary.LittleEndian
		}
		if enc == "UTF-16" && len(b) >= 2 {
			if b[0] == 0xFF && b[1] == 0xFE {
				order, b = binary.LittleEndian, b[2:]
			} else if b[0] == 0xFE && b[1] == 0xFF {
				b = b[2:]
			}
		}
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = order.Uint16(b[2*i:])
		}
		s := string(utf16.Decode(u))
		if len(b)%2 == 1 {
			s += string(utf8.RuneError)
		}
		return s
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func encode(enc string, s string) []byte {
	switch enc {
	case "US-ASCII", "ISO-8859-1":
		limit := rune(0x7F)
		if enc == "ISO-8859-1" {
			limit = 0xFF
		}
		out := make([]byte, 0, len(s))
		for _, r := range s {
			if r > limit {
				out = append(out, '?')
			} else {
				out = append(out, byte(r))
			}
		}
		return out
	case "UTF-16", "UTF-16BE", "UTF-16LE":
		u := utf16.Encode([]rune(s))
		var out []byte
		var order binary.AppendByteOrder = binary.BigEndian
		if enc == "UTF-16" {
			out = append(out, 0xFE, 0xFF) // Java's UTF-16 encoder writes a big-endian BOM
		} else if enc == "UTF-16LE" {
			order = binary.LittleEndian
		}
		for _, x := range u {
			out = order.AppendUint16(out, x)
		}
		return out
	}
	return []byte(s)
}

// JavaString renders a Connect value as the JVM's Object.toString() would (Struct, List and Map forms
// included); []byte has no useful JVM form ("[B@hash"), so it is written as its bytes.
func JavaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case []byte:
		return string(x)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float32:
		return cjson.JavaDouble(float64(x), 32)
	case float64:
		return cjson.JavaDouble(x, 64)
	case bool:
		return strconv.FormatBool(x)
	case connect.Decimal:
		return cjson.BigDecimalString(x)
	case time.Time:
		return x.UTC().Format("Mon Jan 02 15:04:05 UTC 2006") // java.util.Date.toString in a UTC JVM
	case *connect.Struct:
		var sb strings.Builder
		sb.WriteString("Struct{")
		first := true
		for _, f := range x.Schema().Fields() {
			fv := x.GetWithoutDefault(f.Name)
			if fv == nil {
				continue
			}
			if !first {
				sb.WriteByte(',')
			}
			first = false
			sb.WriteString(f.Name)
			sb.WriteByte('=')
			sb.WriteString(JavaString(fv))
		}
		sb.WriteByte('}')
		return sb.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = JavaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sortStrings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + JavaString(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[any]any:
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, JavaString(k)+"="+JavaString(e))
		}
		sortStrings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
