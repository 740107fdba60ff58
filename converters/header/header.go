// Package header is the JVM's SimpleHeaderConverter: header values are UTF-8 strings on the wire. Reading
// infers a schema and value exactly as Kafka's Values.parseString (connect-api 4.1/4.3) does: booleans, the
// narrowest integer type, FLOAT32/FLOAT64, Decimal for numbers no float can hold, Date/Time/Timestamp from ISO
// 8601 literals, arrays and maps (with a common element schema when there is one), null, else the string
// itself. Writing renders values as Values.convertToString does.
//
// Deliberate differences from the JVM (see docs/COMPATIBILITY.md): maps are rendered with their entries
// sorted by key (Go maps have no insertion order); a map whose key is an array or a map stays a string; input
// nested deeper than 1,000 arrays/maps becomes BYTES (the JVM overflows its stack at about 1,300-1,400 and
// then returns BYTES too); dates assume the JVM's default time zone is UTC.
package header

import (
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

// ClassName is the JVM class users configure.
const ClassName = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

// Plugins lists the header converter, for a runtime's registry.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{Class: ClassName, Type: connect.PluginHeaderConverter, New: func() any { return &Converter{} }}}
}

// Converter is SimpleHeaderConverter. It is stateless and safe for concurrent use.
type Converter struct{}

func (*Converter) ClassName() string                 { return ClassName }
func (*Converter) Configure(map[string]string) error { return nil }
func (*Converter) ConfigDef() *connect.ConfigDef     { return connect.NewConfigDef() }
func (*Converter) Version() string                   { return connect.DefaultPluginVersion }
func (*Converter) String() string                    { return ClassName }
func (*Converter) Close() error                      { return nil }

// ToConnectHeader is SimpleHeaderConverter.toConnectHeader: Values.parseString of the UTF-8 text (invalid
// UTF-8 decoded with U+FFFD replacements as java.lang.String does). The literal null yields a null schema and
// value.
func (*Converter) ToConnectHeader(_, _ string, value []byte) (connect.SchemaAndValue, error) {
	if value == nil {
		return connect.NullSchemaAndValue, nil
	}
	var s string
	if utf8.Valid(value) {
		s = string(value)
	} else {
		s = decodeUTF8Java(value)
	}
	return parseString(s, value), nil
}

// parseString is Values.parseString plus SimpleHeaderConverter's fallback to BYTES.
func parseString(s string, raw []byte) connect.SchemaAndValue {
	if s == "" {
		return connect.SchemaAndValue{Schema: connect.StringSchema, Value: s}
	}
	p := tokenizer{s: s, cacheStart: -1}
	r, err := p.parse(false)
	switch {
	case err == errTooDeep:
		return connect.SchemaAndValue{Schema: connect.BytesSchema, Value: append([]byte(nil), raw...)}
	case err != nil: // not reachable for a top-level value; the JVM would answer a STRING
		return connect.SchemaAndValue{Schema: connect.StringSchema, Value: s}
	case r.null:
		return connect.NullSchemaAndValue
	}
	return connect.SchemaAndValue{Schema: r.schema, Value: r.value}
}

// FromConnectHeader is SimpleHeaderConverter.fromConnectHeader: Values.convertToString as UTF-8 (the schema
// is not consulted, as on the JVM: a java.util.Date renders by its millis alone).
func (*Converter) FromConnectHeader(_, _ string, _ *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	switch v := value.(type) {
	case string:
		return []byte(v), nil
	case []byte:
		return appendValue(nil, v, false)
	}
	return appendValue(make([]byte, 0, 32), value, false)
}

// decodeUTF8Java is new String(bytes, UTF_8): malformed input becomes U+FFFD the way the JDK's decoder
// counts it (one replacement per malformed sequence prefix, one per encoded surrogate).
func decodeUTF8Java(b []byte) string {
	out := make([]byte, 0, len(b)+8)
	repl := func() { out = append(out, "\uFFFD"...) }
	notCont := func(c byte) bool { return c&0xc0 != 0x80 }
	sp, sl := 0, len(b)
	for sp < sl {
		b1 := b[sp]
		sp++
		switch {
		case b1 < 0x80:
			out = append(out, b1)
		case b1>>5 == 0x6 && b1&0x1e != 0: // C2..DF
			if sp < sl {
				if notCont(b[sp]) {
					repl()
				} else {
					out = append(out, b1, b[sp])
					sp++
				}
				continue
			}
			repl()
			return string(out)
		case b1>>4 == 0xE:
			if sp+1 < sl {
				b2, b3 := b[sp], b[sp+1]
				if (b1 == 0xe0 && b2&0xe0 == 0x80) || notCont(b2) || notCont(b3) {
					repl()
					if (b1 == 0xe0 && b2&0xe0 == 0x80) || notCont(b2) {
						// malformed3: 1
					} else {
						sp++
					}
					continue
				}
				sp += 2
				if b1 == 0xed && b2 >= 0xa0 { // a surrogate
					repl()
				} else {
					out = append(out, b1, b2, b3)
				}
				continue
			}
			if sp < sl && ((b1 == 0xe0 && b[sp]&0xe0 == 0x80) || notCont(b[sp])) {
				repl()
				continue
			}
			repl()
			return string(out)
		case b1>>3 == 0x1E: // F0..F7
			if sp+2 < sl {
				b2, b3, b4 := b[sp], b[sp+1], b[sp+2]
				uc := rune(b1&0x07)<<18 | rune(b2&0x3f)<<12 | rune(b3&0x3f)<<6 | rune(b4&0x3f)
				if notCont(b2) || notCont(b3) || notCont(b4) || uc < 0x10000 || uc > 0x10FFFF {
					repl()
					// malformed4
					if b1 > 0xf4 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && b2&0xf0 != 0x80) || notCont(b2) {
						continue
					}
					if notCont(b3) {
						sp++
						continue
					}
					sp += 2
					continue
				}
				sp += 3
				out = append(out, b1, b2, b3, b4)
				continue
			}
			if b1 > 0xf4 || sp < sl && ((b1 == 0xf0 && (b[sp] < 0x90 || b[sp] > 0xbf)) || (b1 == 0xf4 && b[sp]&0xf0 != 0x80) || notCont(b[sp])) {
				repl()
				continue
			}
			sp++
			repl()
			if sp < sl && notCont(b[sp]) {
				continue
			}
			return string(out)
		default:
			repl()
		}
	}
	return string(out)
}
