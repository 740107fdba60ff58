package props

import (
	"maps"
	"strings"
	"testing"
)

// FuzzParse: no panic, and an entry without escapes appended after a blank line is read as written, leaving
// the entries before it as they were.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"# comment\n! also comment\nbootstrap.servers=localhost:9092\n",
		"key.converter : org.apache.kafka.connect.json.JsonConverter\nplain value\n", "multi=a,\\\n   b\n",
		"escaped\\=key=x\\ty\n", "unicode=caf\\u00e9\n", "empty=\n", "", "\\", "\\\\", "a=\\", "a=\\u", "a=\\u00",
		"a=\\uzzzz", "a=\\ud83d\\ude00", "a=1\r\nb=2\r\n", "a=1\rb=2", "\\\n#x=1", " \t\f", "=v", ":v", "k", "k  =  v",
		"a\\\n\n b=c", "a=b\\\\\nc=d", "a=\\\r\n  \\\n  c"} {
		f.Add(s, "group.id", "connect-cluster")
	}
	f.Add("a=1", "k", "=:# !v ")
	f.Fuzz(func(t *testing.T, in, k, v string) {
		before, err := Parse(strings.NewReader(in))
		if err != nil || k == "" || strings.ContainsAny(k, "\\=: \t\f\r\n#!") ||
			strings.ContainsAny(v, "\\\r\n") || strings.TrimLeft(v, " \t\f") != v {
			return
		}
		after, err := Parse(strings.NewReader(in + "\n\n" + k + "=" + v + "\n"))
		if err != nil {
			t.Fatalf("%q then %q=%q: %v", in, k, v, err)
		}
		before[k] = v
		if !maps.Equal(before, after) {
			t.Fatalf("%q then %q=%q: read %q, want %q", in, k, v, after, before)
		}
	})
}
