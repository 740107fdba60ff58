package apacheevents

import (
	"encoding/base64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

// FuzzDecode: the decoder reads untrusted bytes from the control topic. It must return an error rather than
// panic, and what it reads must encode and read again.
func FuzzDecode(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(goldenDir, "*.b64"))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, g := range genEvents(rand.New(rand.NewPCG(7, 7)), 10) {
		b, err := Encode(g.e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xC2, 0x01, 0, 2, '"', '"'})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b)
		if err != nil {
			return
		}
		if e.Type == DataWritten {
			sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
			_, _, _ = e.Files(*iceberg.UnpartitionedSpec, sc)
		}
		again, err := Encode(e)
		if err != nil {
			return // e.g. a partition type Java cannot write either
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("decoded %+v, encoded, then: %v", e, err)
		}
	})
}
