package avro

import (
	"encoding/binary"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/avrotest"
)

// fuzzSchemas cover every decoder: primitives, logical types, unions, enums, fixed, arrays and maps
// (including zero-size elements), map entries and nesting.
var fuzzSchemas = []string{
	`{"type":"record","name":"P","fields":[{"name":"b","type":"boolean"},{"name":"i","type":"int"},{"name":"l","type":"long"},
	 {"name":"f","type":"float"},{"name":"d","type":"double"},{"name":"by","type":"bytes"},{"name":"s","type":"string"},
	 {"name":"i8","type":{"type":"int","connect.type":"int8"}},{"name":"i16","type":{"type":"int","connect.type":"int16"}}]}`,
	`{"type":"record","name":"L","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
	 {"name":"df","type":{"type":"fixed","name":"DF","size":5,"logicalType":"decimal","precision":10,"scale":2}},
	 {"name":"date","type":{"type":"int","logicalType":"date"}},{"name":"t","type":{"type":"int","logicalType":"time-millis"}},
	 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},{"name":"tu","type":{"type":"long","logicalType":"timestamp-micros"}}]}`,
	`{"type":"record","name":"C","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"]}},
	 {"name":"fx","type":{"type":"fixed","name":"F","size":3}},{"name":"u","type":["null","int","string",{"type":"record","name":"R","fields":[{"name":"x","type":"long"}]}]},
	 {"name":"o","type":["null","R"]},{"name":"a","type":{"type":"array","items":"R"}},{"name":"m","type":{"type":"map","values":["null","string"]}},
	 {"name":"me","type":{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro","fields":[{"name":"key","type":"long"},{"name":"value","type":"string"}]}}}]}`,
	`{"type":"array","items":{"type":"record","name":"Empty","fields":[]}}`,
	`{"type":"map","values":{"type":"array","items":{"type":"fixed","name":"Z","size":0}}}`,
	`{"type":"array","items":{"type":"array","items":{"type":"map","values":"double"}}}`,
	`["null","string","long",{"type":"enum","name":"E2","symbols":["X"]}]`,
	`"bytes"`,
	`"string"`,
	`{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro","fields":[{"name":"key","type":"bytes"},{"name":"value","type":"int"}]}}`,
}

func FuzzAvroToConnect(f *testing.F) {
	reg := avrotest.New()
	f.Cleanup(reg.Close)
	ids := make([]uint32, len(fuzzSchemas))
	for i, s := range fuzzSchemas {
		ids[i] = uint32(reg.Register("fuzz-value", s))
	}
	c := New()
	if err := c.Configure(map[string]string{ConfigURL: reg.URL()}, false); err != nil {
		f.Fatal(err)
	}
	seeds := [][]byte{
		{}, {0}, {2, 0}, {1, 1, 1}, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		{0xfe, 0xff, 0xff, 0xff, 0x0f}, {0x01, 0x02}, {0x06, 'a', 'b', 'c', 0},
	}
	for i := range fuzzSchemas {
		for _, s := range seeds {
			f.Add(uint8(i), uint32(0), s)
		}
	}
	f.Add(uint8(255), uint32(1<<31), []byte{0})
	f.Add(uint8(250), uint32(0xffffffff), []byte{})
	f.Fuzz(func(t *testing.T, sel uint8, rawID uint32, body []byte) {
		id := rawID // arbitrary ids (mostly unknown to the registry) when sel is high
		if sel < 240 {
			id = ids[int(sel)%len(ids)]
		}
		payload := make([]byte, 5+len(body))
		binary.BigEndian.PutUint32(payload[1:5], id)
		copy(payload[5:], body)
		sv, err := c.ToConnectData("fuzz", nil, payload)
		if err != nil {
			return
		}
		if err := connect.ValidateValue(sv.Schema, sv.Value); err != nil {
			t.Fatalf("decoded value does not match its schema: %v", err)
		}
	})
}

// FuzzAvroSchemaToConnect: whatever schema text a registry returns, parsing it, deriving the Connect
// schema and decoding a payload with it never panics, and decoded values fit the derived schema.
func FuzzAvroSchemaToConnect(f *testing.F) {
	for _, s := range fuzzSchemas {
		f.Add(s, []byte{2, 4, 6, 0})
	}
	f.Add(`{"type":"record","name":"R","fields":[{"name":"a","type":"R"}]}`, []byte{0})
	f.Add(`{"type":"int","connect.type":"int8","connect.version":"x"}`, []byte{2})
	f.Add(`{"type":"bytes","logicalType":"decimal","precision":"p"}`, []byte{2, 1})
	f.Add(`{"type":"record","name":"R","fields":[{"name":"d","type":{"type":"int","logicalType":"date"},"default":"x"}]}`, []byte{})
	f.Add(`[{"type":"fixed","name":"A","size":2},{"type":"fixed","name":"n.A","size":2}]`, []byte{2, 1, 1})
	f.Fuzz(func(t *testing.T, schema string, body []byte) {
		n, err := parseSchema(schema)
		if err != nil {
			return
		}
		v := 1
		cp, err := toConnect(n, &v)
		if err != nil {
			return
		}
		r := reader{buf: body}
		val, err := cp.dec(&r)
		if err != nil {
			return
		}
		if err := connect.ValidateValue(cp.schema, val); err != nil {
			t.Fatalf("decoded value does not match its schema: %v", err)
		}
	})
}

// FuzzAvroSchemaWithReferences: a schema and the schema it references, both from the registry, parse
// without panics, and decoded values fit the derived Connect schema.
func FuzzAvroSchemaWithReferences(f *testing.F) {
	f.Add(`{"type":"record","name":"Address","namespace":"g","fields":[{"name":"city","type":"string"}]}`,
		`{"type":"record","name":"Customer","namespace":"g","fields":[{"name":"home","type":"g.Address"}]}`, []byte{2, 'a'})
	f.Add(`{"type":"enum","name":"E","symbols":["A","B"]}`, `["null","E"]`, []byte{2, 2})
	f.Add(`{"type":"fixed","name":"F","size":2}`, `{"type":"record","name":"F","fields":[]}`, []byte{})
	f.Add(`{"type":"record","name":"R","fields":[{"name":"r","type":["null","R"]}]}`, `{"type":"array","items":"R"}`, []byte{2, 2, 0, 0})
	f.Fuzz(func(t *testing.T, dep, schema string, body []byte) {
		n, err := parseSchemaWithRefs(schema, []string{dep})
		if err != nil {
			return
		}
		v := 1
		cp, err := toConnect(n, &v)
		if err != nil {
			return
		}
		r := reader{buf: body}
		val, err := cp.dec(&r)
		if err != nil {
			return
		}
		if err := connect.ValidateValue(cp.schema, val); err != nil {
			t.Fatalf("decoded value does not match its schema: %v", err)
		}
	})
}
