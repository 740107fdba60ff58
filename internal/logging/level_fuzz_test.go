package logging

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseLevel: ParseLevel never panics, and a level it reads reads back from its LevelName.
func FuzzParseLevel(f *testing.F) {
	for _, s := range []string{"INFO", "debug", "Off", "all", "", " INFO", "ınfo", "\xff", "TRACE\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, ok := ParseLevel(s)
		if !ok {
			return
		}
		back, ok := ParseLevel(LevelName(l))
		require.True(t, ok, "%q", s)
		require.Equal(t, l, back, "%q", s)
	})
}
