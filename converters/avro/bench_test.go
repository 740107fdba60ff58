package avro

import (
	"encoding/binary"
	"testing"

	"github.com/connectd/connectd/internal/testutil/avrotest"
)

// BenchmarkToConnectData decodes a 21-field record (every Connect type, logical types, nested and
// optional structs, arrays and maps) from a cached schema id.
func BenchmarkToConnectData(b *testing.B) {
	reg := avrotest.New()
	defer reg.Close()
	c := New()
	if err := c.Configure(map[string]string{ConfigURL: reg.URL()}, false); err != nil {
		b.Fatal(err)
	}
	s := richSchema()
	payload, err := c.FromConnectData("bench", nil, s, richValue(s))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.ToConnectData("bench", nil, payload); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.ToConnectData("bench", nil, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToConnectDataFlat decodes a flat record of primitives (the common CDC row shape).
func BenchmarkToConnectDataFlat(b *testing.B) {
	reg := avrotest.New()
	defer reg.Close()
	id := reg.Register("bench-value", `{"type":"record","name":"Row","fields":[{"name":"id","type":"long"},
		{"name":"name","type":["null","string"],"default":null},{"name":"qty","type":"int"},{"name":"price","type":"double"},
		{"name":"active","type":"boolean"},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}]}`)
	c := New()
	if err := c.Configure(map[string]string{ConfigURL: reg.URL()}, false); err != nil {
		b.Fatal(err)
	}
	payload := []byte{0, 0, 0, 0, 0, 0x54, 2, 10, 'w', 'i', 'd', 'g', 't', 14, 0, 0, 0, 0, 0, 0, 0x24, 0x40, 1, 0x80, 0x80, 0x80, 0x80, 0x10}
	binary.BigEndian.PutUint32(payload[1:5], uint32(id))
	if _, err := c.ToConnectData("bench", nil, payload); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.ToConnectData("bench", nil, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFromConnectData encodes the rich record (goavro) with a cached registration.
func BenchmarkFromConnectData(b *testing.B) {
	reg := avrotest.New()
	defer reg.Close()
	c := New()
	if err := c.Configure(map[string]string{ConfigURL: reg.URL()}, false); err != nil {
		b.Fatal(err)
	}
	s := richSchema()
	v := richValue(s)
	if _, err := c.FromConnectData("bench", nil, s, v); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.FromConnectData("bench", nil, s, v); err != nil {
			b.Fatal(err)
		}
	}
}
