package header

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

func TestToConnectHeader(t *testing.T) {
	c := &Converter{}
	cases := []struct {
		in   []byte
		want connect.SchemaAndValue
	}{
		{nil, connect.NullSchemaAndValue},
		{[]byte("hello"), connect.SchemaAndValue{Schema: connect.StringSchema, Value: "hello"}},
		{[]byte("true"), connect.SchemaAndValue{Schema: connect.BoolSchema, Value: true}},
		{[]byte("12"), connect.SchemaAndValue{Schema: connect.Int8Schema, Value: int8(12)}},
		{[]byte("1000"), connect.SchemaAndValue{Schema: connect.Int16Schema, Value: int16(1000)}},
		{[]byte("100000"), connect.SchemaAndValue{Schema: connect.Int32Schema, Value: int32(100000)}},
		{[]byte("10000000000"), connect.SchemaAndValue{Schema: connect.Int64Schema, Value: int64(10000000000)}},
		{[]byte("1.5"), connect.SchemaAndValue{Schema: connect.Float32Schema, Value: float32(1.5)}},
		{[]byte("0.1"), connect.SchemaAndValue{Schema: connect.Float64Schema, Value: 0.1}},
		{[]byte(" 12"), connect.SchemaAndValue{Schema: connect.StringSchema, Value: " 12"}},
		{[]byte("1-2"), connect.SchemaAndValue{Schema: connect.StringSchema, Value: "1-2"}},
	}
	for _, tc := range cases {
		got, err := c.ToConnectHeader("t", "h", tc.in)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, string(tc.in))
		if tc.in != nil {
			back, err := c.FromConnectHeader("t", "h", got.Schema, got.Value)
			require.NoError(t, err)
			assert.Equal(t, string(tc.in), string(back))
		}
	}
}
