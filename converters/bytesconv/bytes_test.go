package bytesconv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

func TestByteArrayConverter(t *testing.T) {
	c := ByteArrayConverter{}
	sv, err := c.ToConnectData("t", nil, []byte{1, 2})
	require.NoError(t, err)
	assert.Equal(t, connect.OptionalBytesSchema, sv.Schema)
	assert.Equal(t, []byte{1, 2}, sv.Value)
	_, err = c.FromConnectData("t", nil, connect.StringSchema, []byte{1})
	require.EqualError(t, err, "Invalid schema type for ByteArrayConverter: STRING")
	_, err = c.FromConnectData("t", nil, nil, "x")
	require.EqualError(t, err, "ByteArrayConverter is not compatible with objects of type class java.lang.String")
}

func TestNumberConverters(t *testing.T) {
	cases := []struct {
		class string
		val   any
		wire  []byte
	}{
		{"IntegerConverter", int32(-2), []byte{0xff, 0xff, 0xff, 0xfe}},
		{"LongConverter", int64(1), []byte{0, 0, 0, 0, 0, 0, 0, 1}},
		{"ShortConverter", int16(258), []byte{1, 2}},
		{"FloatConverter", float32(1.5), []byte{0x3f, 0xc0, 0, 0}},
		{"DoubleConverter", 2.0, []byte{0x40, 0, 0, 0, 0, 0, 0, 0}},
		{"BooleanConverter", true, []byte{1}},
	}
	for _, tc := range cases {
		c, ok := NewNumberConverter(tc.class)
		require.True(t, ok, tc.class)
		b, err := c.FromConnectData("t", nil, nil, tc.val)
		require.NoError(t, err)
		assert.Equal(t, tc.wire, b, tc.class)
		sv, err := c.ToConnectData("t", nil, b)
		require.NoError(t, err)
		assert.Equal(t, tc.val, sv.Value, tc.class)
		assert.True(t, sv.Schema.Optional)
	}
	c, _ := NewNumberConverter("IntegerConverter")
	_, err := c.ToConnectData("t", nil, []byte{1})
	require.EqualError(t, err, "Failed to deserialize integer: Size of data received by IntegerDeserializer is not 4")
	_, err = c.FromConnectData("t", nil, nil, "x")
	require.EqualError(t, err, "Failed to serialize to integer (was class java.lang.String): ")
}
