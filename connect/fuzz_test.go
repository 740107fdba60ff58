package connect

import (
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var listSep = regexp.MustCompile(`[ \t\n\v\f\r]*,[ \t\n\v\f\r]*`)

var configTypes = []ConfigType{ConfigBoolean, ConfigString, ConfigInt, ConfigShort, ConfigLong, ConfigDouble,
	ConfigList, ConfigClass, ConfigPassword}

// FuzzParseConfigValue: no panic, and a value is trimmed as the JVM's String.trim does (every char up to
// U+0020 at both ends, nothing else): it parses as its trimmed form does, a STRING is its trimmed form and a
// LIST is it split at \s*,\s*.
func FuzzParseConfigValue(f *testing.F) {
	for _, s := range []string{"true", " FALSE ", "yes", "", " ", "42", "-2147483648", "2147483648", "32767",
		"-32769", "+7", "0x10", "1_000", "9223372036854775807", "-9223372036854775809", "1.5", "-1e3", "1e400",
		"NaN", "Infinity", "-inf", "1d", "0x1p-2", ".5", "5.", "a,b , c", ",", " a ,, b ,", "org.example.Sink",
		" secret ", "\x01 5\x1f", "\u00a0 5", "5\u2028", "\u0085a,b\u0085", "a\u00a0,\u00a0b", "\t\n\v\f\r"} {
		for i := range configTypes {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, typ uint8, s string) {
		ct := configTypes[int(typ)%len(configTypes)]
		v, err := ParseConfigValue(ct, s)
		trimmed := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
		tv, terr := ParseConfigValue(ct, trimmed)
		if (err == nil) != (terr == nil) || !sameValue(v, tv) {
			t.Fatalf("%s %q parses to %#v, %v; trimmed %q to %#v, %v", ct, s, v, err, trimmed, tv, terr)
		}
		if ct == ConfigString && v != trimmed {
			t.Fatalf("STRING %q parses to %q, want %q", s, v, trimmed)
		}
		if l, ok := v.([]string); ok && trimmed != "" && strings.Join(l, ",") != listSep.ReplaceAllString(trimmed, ",") {
			t.Fatalf("LIST %q parses to %q", s, l)
		}
	})
}

// sameValue is reflect.DeepEqual with a NaN equal to itself.
func sameValue(a, b any) bool {
	if x, ok := a.(float64); ok {
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return reflect.DeepEqual(a, b)
}

// FuzzParseType: no panic, and an accepted name is a known type whose name parses back to it.
func FuzzParseType(f *testing.F) {
	for _, s := range []string{"int8", "INT32", "Float64", "boolean", "string", "bytes", "array", "map", "struct",
		"", "int", "INT128", "ınt32", "ſtring", "ﬆring", "int32 ", "Type(0)", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ, err := ParseType(s)
		if err != nil {
			return
		}
		if back, err := ParseType(typ.String()); typ < TypeInt8 || typ > TypeStruct || err != nil || back != typ {
			t.Fatalf("ParseType(%q) = %v, which parses back to %v, %v", s, typ, back, err)
		}
	})
}
