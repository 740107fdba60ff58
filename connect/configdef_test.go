package connect

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseConfigValueAsJVM: ConfigDef.parseType's answers (kafka-clients 4.3.1) where String.trim and
// Double.parseDouble differ from strings.TrimSpace and strconv.ParseFloat; nil means a ConfigException.
func TestParseConfigValueAsJVM(t *testing.T) {
	for _, c := range []struct {
		typ  ConfigType
		in   string
		want any
	}{
		{ConfigPassword, " secret ", Password("secret")},
		{ConfigString, "\x01x\x1f", "x"},
		{ConfigString, "\u00a0x\u00a0", "\u00a0x\u00a0"},
		{ConfigInt, "\x005\x00", 5},
		{ConfigInt, "\u00a05", nil},
		{ConfigBoolean, "\x01TRUE\x02", true},
		{ConfigList, "a\u00a0,\u00a0b", []string{"a\u00a0", "\u00a0b"}},
		{ConfigList, " a ,\vb\v, c\u0085", []string{"a", "b", "c\u0085"}},
		{ConfigList, "a,,b,", []string{"a", "", "b", ""}},
		{ConfigDouble, "1d", 1.0},
		{ConfigDouble, "1.5F", 1.5},
		{ConfigDouble, "0X1P0f", 1.0},
		{ConfigDouble, "0x.8p1", 1.0},
		{ConfigDouble, "1.", 1.0},
		{ConfigDouble, "-1e400", math.Inf(-1)},
		{ConfigDouble, "1e-400", 0.0},
		{ConfigDouble, "Infinity", math.Inf(1)},
		{ConfigDouble, "inf", nil},
		{ConfigDouble, "nan", nil},
		{ConfigDouble, "1_0", nil},
		{ConfigDouble, "0x1", nil},
		{ConfigDouble, "1dd", nil},
	} {
		got, err := ParseConfigValue(c.typ, c.in)
		if c.want == nil {
			require.Error(t, err, "%s %q", c.typ, c.in)
			continue
		}
		require.NoError(t, err, "%s %q", c.typ, c.in)
		require.Equal(t, c.want, got, "%s %q", c.typ, c.in)
	}
	for _, s := range []string{"NaN", "+NaN", " -NaN\t"} {
		got, err := ParseConfigValue(ConfigDouble, s)
		require.NoError(t, err, s)
		require.True(t, math.IsNaN(got.(float64)), s)
	}
}
