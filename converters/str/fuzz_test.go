package str

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// FuzzDecode: decode never panics and yields valid UTF-8; UTF-8 and UTF-16 round trip valid text.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "hello", "héllo 世界 😀", "\xff\xfe\x00h", "\xfe\xff\x00h\x00", "\xed\xa0\x80", "\x00", "\xd8\x00"} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(4))
	}
	encs := []string{"UTF-8", "US-ASCII", "ISO-8859-1", "UTF-16", "UTF-16BE", "UTF-16LE"}
	f.Fuzz(func(t *testing.T, b []byte, e uint8) {
		enc := encs[int(e)%len(encs)]
		s := decode(enc, b)
		require.True(t, utf8.ValidString(s))
		if !utf8.Valid(b) {
			return
		}
		if enc == "UTF-8" {
			require.Equal(t, string(b), s)
		}
		if enc == "UTF-8" || enc[:6] == "UTF-16" {
			require.Equal(t, string(b), decode(enc, encode(enc, string(b))))
		}
	})
}

// FuzzConfigure: any converter.encoding either configures the converter or fails naming the key.
func FuzzConfigure(f *testing.F) {
	for _, s := range []string{"UTF-8", "utf_16le", "latin1", "", " ", "EBCDIC", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, enc string) {
		var c Converter
		if err := c.Configure(map[string]string{EncodingConfig: enc}, false); err != nil {
			require.Contains(t, err.Error(), EncodingConfig)
		}
	})
}
