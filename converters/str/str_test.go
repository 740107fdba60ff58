package str

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

func TestStringConverter(t *testing.T) {
	c := &Converter{}
	require.NoError(t, c.Configure(map[string]string{}, false))
	sv, err := c.ToConnectData("t", nil, []byte("héllo"))
	require.NoError(t, err)
	assert.Equal(t, connect.OptionalStringSchema, sv.Schema)
	assert.Equal(t, "héllo", sv.Value)
	sv, err = c.ToConnectData("t", nil, nil)
	require.NoError(t, err)
	assert.Nil(t, sv.Value)
	for _, tc := range []struct {
		in   any
		want string
	}{{"x", "x"}, {int32(5), "5"}, {1.0e20, "1.0E20"}, {float32(1.5), "1.5"}, {true, "true"}, {connect.NewDecimal(125, 2), "1.25"}, {[]any{int32(1), "a"}, "[1, a]"}} {
		b, err := c.FromConnectData("t", nil, nil, tc.in)
		require.NoError(t, err)
		assert.Equal(t, tc.want, string(b))
	}
	b, err := c.FromConnectData("t", nil, nil, nil)
	require.NoError(t, err)
	assert.Nil(t, b)

	require.NoError(t, c.Configure(map[string]string{EncodingConfig: "UTF-16"}, true))
	b, err = c.FromConnectData("t", nil, nil, "A")
	require.NoError(t, err)
	assert.Equal(t, []byte{0xFE, 0xFF, 0, 'A'}, b)
	sv, err = c.ToConnectData("t", nil, b)
	require.NoError(t, err)
	assert.Equal(t, "A", sv.Value)
	require.Error(t, c.Configure(map[string]string{EncodingConfig: "EBCDIC-XYZ"}, false))
}
