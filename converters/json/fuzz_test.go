package json

import (
	"encoding/base64"
	"testing"
)

// FuzzJSONToConnect feeds arbitrary bytes to ToConnectData in both modes: it must never panic, and what
// it decodes must encode again.
func FuzzJSONToConnect(f *testing.F) {
	fx := loadFixtures(f)
	for _, c := range fx.Decode {
		if c.Input != nil {
			if b, err := base64.StdEncoding.DecodeString(*c.Input); err == nil {
				f.Add(b)
			}
		}
	}
	withSchemas, plain := New(), &Converter{}
	_ = plain.Configure(map[string]string{"schemas.enable": "false"}, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []*Converter{withSchemas, plain} {
			sv, err := c.ToConnectData("t", nil, data)
			if err != nil {
				continue
			}
			if _, err := c.FromConnectData("t", nil, sv.Schema, sv.Value); err != nil && sv.Schema == nil {
				t.Fatalf("schemaless value did not encode again: %v (%#v)", err, sv.Value)
			}
		}
	})
}
