// Package str is org.apache.kafka.connect.storage.StringConverter (named str to avoid clashing with the
// standard library's strings).
package str

import (
	"encoding/binary"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

const (
	ClassName      = "org.apache.kafka.connect.storage.StringConverter"
	EncodingConfig = "converter.encoding"
)

// Plugins lists the converter, for a runtime's registry.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{Class: ClassName, Type: connect.PluginConverter, New: func() any { return &Converter{} }}}
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

// ConfigDef implements connect.Configurable (the converter's keys in a connector's validate answer).
func (*Converter) ConfigDef() *connect.ConfigDef { return ConfigDef() }

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
		return &connect.ConfigError{Name: EncodingConfig, Value: cfg.String(EncodingConfig), Message: "Unsupported encoding"}
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
	return encode(c.enc, connect.JavaString(value)), nil
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
