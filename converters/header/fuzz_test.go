package header

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

// FuzzSimpleHeaderToConnect: any header bytes convert without panicking, within bounded memory, to a valid
// Connect value whose rendering converts again.
func FuzzSimpleHeaderToConnect(f *testing.F) {
	fx := loadFixtures(f)
	for _, tc := range fx.ToConnect {
		if tc.Repeat != "" {
			continue
		}
		if b, err := base64.StdEncoding.DecodeString(tc.B64); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(strings.Repeat("[", maxDepth+1)))
	f.Add([]byte(strings.Repeat("{\"a\":", maxDepth+1)))
	c := &Converter{}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := c.ToConnectHeader("t", "h", in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got.Schema == nil {
			if got.Value != nil {
				t.Fatalf("%q: value without schema", in)
			}
			return
		}
		if err := connect.ValidateValue(got.Schema, got.Value); err != nil && got.Schema.Type != connect.TypeArray && got.Schema.Type != connect.TypeMap {
			// arrays and maps may hold values of differing types under a common schema, as on the JVM
			t.Fatalf("%q: invalid %v value %#v: %v", in, got.Schema, got.Value, err)
		}
		out, err := c.FromConnectHeader("t", "h", got.Schema, got.Value)
		if err != nil {
			t.Fatalf("%q: render: %v", in, err)
		}
		// rendering never grows without bound: at most the input plus the JVM's longer float/date forms
		if len(out) > 64*len(in)+64 {
			t.Fatalf("%q: rendering of %d bytes", in, len(out))
		}
		if got.Schema.Type == connect.TypeString && utf8.Valid(in) && got.Value.(string) != string(in) && !isBlank(got.Value.(string)) {
			// a STRING is the whole input, or a blank (Java trim) token of it, as on the JVM: " [" gives " "
			t.Fatalf("%q: string %q", in, got.Value)
		}
		if _, err := c.ToConnectHeader("t", "h", out); err != nil {
			t.Fatalf("%q: re-read %q: %v", in, out, err)
		}
	})
}
