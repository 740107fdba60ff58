package avro

import (
	"encoding/binary"
	"testing"

	"github.com/connectd/connectd/converters/avro/avrotest"
)

func BenchmarkUnknownID(b *testing.B) {
	reg := avrotest.New()
	defer reg.Close()
	c := New()
	_ = c.Configure(map[string]string{ConfigURL: reg.URL()}, false)
	p := []byte{0, 0, 0, 0, 0, 1}
	for i := 0; i < b.N; i++ {
		binary.BigEndian.PutUint32(p[1:5], uint32(i+1000))
		_, _ = c.ToConnectData("t", nil, p)
	}
}
