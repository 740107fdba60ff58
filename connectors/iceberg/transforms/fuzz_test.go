package transforms

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// maxFuzzInput bounds the inputs: the property is about shape (nesting, escapes, numbers), not size.
const maxFuzzInput = 64 << 10

// seedJSON are record values of the JVM fixtures and edge cases around them.
var seedJSON = []string{
	`{"_id": {"$oid": "596e275826f08b2730779e1f"}, "name": "Sally", "n": 1}`,
	`{_id: NumberLong(5), 'name': 'x', "oid": ObjectId("596e275826f08b2730779e1f"), "n": NumberInt(3), "d": NumberDecimal("2.50")}`,
	`{"_id": 1, "js": {"$code": "f()", "$scope": {"x": "s", "d": {"y": 1}}}}`,
	`{"_id": 1, "ts": [{"$timestamp": {"t": 5, "i": 1}}], "arr": [{"$date": 1700000000000}]}`,
	`{"d": {"$date": "2020-01-01T01:02:03.5+01:00"}, "l": {"$date": {"$numberLong": "1700000000456"}}}`,
	`{"b": {"$binary": {"base64": "AQID", "subType": "00"}}, "c": {"$binary": "AQID", "$type": "00"}}`,
	`{"x": {"$numberDecimal": "-12.3E+5"}, "y": {"$numberDecimal": "-0"}, "z": {"$numberDouble": "-Infinity"}}`,
	`{"r": {"$regularExpression": {"pattern": "^a", "options": "i"}}, "s": {"$regex": "b", "$options": ""}}`,
	`{"u": {"$undefined": true}, "mn": {"$minKey": 1}, "mx": {"$maxKey": 1}, "p": {"$dbPointer": {}}}`,
	`{"_id": 1, "a": 1, "b": 2, "a": "x"}`,
	`{"_id": 1, "mixed": [1, "a", {"k": true}, [1.5], null], "items": [{"a": 1, "e": []}, {"a": 2}]}`,
	`{"i1": 2147483647, "i2": 2147483648, "l3": -9223372036854775809, "neg": -123456789012345678901234567890}`,
	`{"obj": {"t": "a\tb\u0000c\u001f/é\ud83d\ude00\u2028", "d": [1.0E-5, 1e22, 0.1, -0.0, 1e400, 1E7]}}`,
	`{"a": 1} trailing`, `{"a": 01}`, `{"a": 1,}`, `{"a": [1, 2}`, `{"a": }`, `{"_id": 1,`, `{'a': 1}`, `{"a": NaN}`,
	`{"x": {"$numberDecimal": "1e-2147483648"}}`, `{"x": NumberLong("99999999999999999999")}`, `{"\ud800": "\udc00x"}`,
	``, ` `, `[]`, `"s"`, `null`, "{\"a\": \"\xff\xfe\"}",
	strings.Repeat(`{"a":`, 600) + `1` + strings.Repeat(`}`, 600),
	strings.Repeat(`[`, 1100) + strings.Repeat(`]`, 1100),
}

// FuzzParseBSONDocument: a Debezium MongoDB before/after string parses, and converts to a Struct in both
// array modes, without panic.
func FuzzParseBSONDocument(f *testing.F) {
	for _, s := range seedJSON {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzInput {
			return
		}
		d, err := parseBSONDocument(s)
		if err != nil {
			return
		}
		for _, m := range []*MongoDebeziumTransform{{}, {documentMode: true}} {
			if sc, err := m.docSchema(d, "", true); err == nil {
				_ = m.fillStruct(d, sc, connect.NewStruct(sc))
			}
		}
	})
}

// FuzzParseJackson: what parses writes as JsonNode.toString does, and that text parses back to itself.
func FuzzParseJackson(f *testing.F) {
	for _, s := range seedJSON {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzInput {
			return
		}
		n, err := parseJackson(s)
		if err != nil || n == nil {
			return
		}
		var out strings.Builder
		writeJackson(&out, n)
		again, err := parseJackson(out.String())
		if err != nil || again == nil {
			t.Fatalf("%q wrote %q, which does not parse: %v", s, out.String(), err)
		}
		var out2 strings.Builder
		writeJackson(&out2, again)
		if out.String() != out2.String() {
			t.Fatalf("%q wrote %q, which writes as %q", s, out.String(), out2.String())
		}
	})
}
