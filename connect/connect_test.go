package connect

import (
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStructValidation(t *testing.T) {
	s := StructBuilder().Name("v").
		Field("id", Int64Schema).
		Field("name", OptionalStringSchema).
		Field("amount", DecimalSchema(2)).
		Field("born", OptionalDateSchema).
		MustBuild()
	st := NewStruct(s)
	require.NoError(t, st.Put("id", int64(7)))
	require.Error(t, st.Put("id", int32(7)), "wrong Go type for INT64")
	require.Error(t, st.Put("nope", 1))
	require.Error(t, st.Validate(), "amount is required and unset")
	require.NoError(t, st.Put("amount", NewDecimal(1234, 2)))
	require.NoError(t, st.Validate())
	assert.Nil(t, st.Get("name"))
	require.NoError(t, st.Put("born", DateFromDays(3)))
	assert.Equal(t, "Struct{id=7,amount=12.34,born=1970-01-04 00:00:00 +0000 UTC}", st.String())
}

func TestSchemaBuilderErrors(t *testing.T) {
	_, err := StructBuilder().Field("a", Int32Schema).Field("a", Int32Schema).Build()
	require.Error(t, err)
	_, err = Int32Builder().DefaultValue("x").Build()
	require.Error(t, err)
	s := Int32Builder().Optional().DefaultValue(int32(4)).MustBuild()
	assert.True(t, s.Equal(Int32Builder().Optional().DefaultValue(int32(4)).MustBuild()))
	assert.False(t, s.Equal(OptionalInt32Schema))
}

func TestDecimal(t *testing.T) {
	cases := []struct {
		in    string
		str   string
		scale int32
	}{
		{"12.340", "12.340", 3},
		{"-0.05", "-0.05", 2},
		{"1E+3", "1000", -3},
		{"42", "42", 0},
	}
	for _, c := range cases {
		d, err := ParseDecimal(c.in)
		require.NoError(t, err)
		assert.Equal(t, c.str, d.String(), c.in)
		assert.Equal(t, c.scale, d.Scale)
		back := DecimalFromBytes(DecimalToBytes(d), d.Scale)
		assert.True(t, ValuesEqual(d, back), c.in)
	}
	for _, n := range []int64{0, 1, -1, 127, 128, -128, -129, 255, -256, 1 << 40, -(1 << 40)} {
		d := Decimal{Unscaled: big.NewInt(n)}
		b := DecimalToBytes(d)
		assert.Equal(t, n, DecimalFromBytes(b, 0).Unscaled.Int64(), "%d -> %x", n, b)
	}
	assert.Equal(t, []byte{0x80}, DecimalToBytes(NewDecimal(-128, 0)))
	assert.Equal(t, []byte{0x00, 0x80}, DecimalToBytes(NewDecimal(128, 0)))
}

func TestDateTime(t *testing.T) {
	d, err := DateToDays(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, int32(19724), d)
	_, err = DateToDays(time.Date(2024, 1, 2, 1, 0, 0, 0, time.UTC))
	require.Error(t, err)
	ms, err := TimeToMillis(TimeFromMillis(3600_000))
	require.NoError(t, err)
	assert.Equal(t, int32(3600_000), ms)
}

func TestConfigDef(t *testing.T) {
	d := NewConfigDef().
		Define(ConfigKey{Name: "topics", Type: ConfigList, Default: "", Importance: High}).
		Define(ConfigKey{Name: "tasks.max", Type: ConfigInt, Default: 1, Validator: AtLeast(1)}).
		Define(ConfigKey{Name: "file", Type: ConfigString, Default: NoDefault}).
		Define(ConfigKey{Name: "mode", Type: ConfigString, Default: "a", Validator: In("a", "b")})
	_, err := d.Parse(map[string]string{})
	require.EqualError(t, err, `Missing required configuration "file" which has no default value.`)
	_, err = d.Parse(map[string]string{"file": "x", "tasks.max": "zero"})
	require.EqualError(t, err, "Invalid value zero for configuration tasks.max: Not a number of type INT")
	_, err = d.Parse(map[string]string{"file": "x", "tasks.max": "0"})
	require.EqualError(t, err, "Invalid value 0 for configuration tasks.max: Value must be at least 1")
	_, err = d.Parse(map[string]string{"file": "x", "mode": "c"})
	require.EqualError(t, err, "Invalid value c for configuration mode: String must be one of: a, b")
	c, err := d.Parse(map[string]string{"file": " out.txt ", "topics": "a, b", "tasks.max": "3"})
	require.NoError(t, err)
	assert.Equal(t, "out.txt", c.String("file"))
	assert.Equal(t, []string{"a", "b"}, c.List("topics"))
	assert.Equal(t, 3, c.Int("tasks.max"))
	vals := d.Validate(map[string]string{"tasks.max": "0"})
	require.Len(t, vals, 4)
	assert.Len(t, vals[1].Errors, 1)
	assert.Len(t, vals[2].Errors, 1)
}

type dummyConverter struct{}

func (dummyConverter) Configure(map[string]string, bool) error { return nil }
func (dummyConverter) ToConnectData(string, Headers, []byte) (SchemaAndValue, error) {
	return SchemaAndValue{}, nil
}
func (dummyConverter) FromConnectData(string, Headers, *Schema, any) ([]byte, error) {
	return nil, nil
}

func TestRegistryAliases(t *testing.T) {
	r := NewRegistry()
	r.Register(Plugin{Class: "org.example.FooConverter", Type: PluginConverter, New: func() any { return dummyConverter{} }})
	for _, n := range []string{"org.example.FooConverter", "FooConverter", "Foo"} {
		_, ok := r.Lookup(n)
		assert.True(t, ok, n)
	}
	_, err := r.NewConverter("Bar")
	require.EqualError(t, err, "Failed to find any class that implements Converter and which name matches Bar")
}

type headerCapable struct{ dummyConverter }

func (headerCapable) ToConnectHeader(string, string, []byte) (SchemaAndValue, error) {
	return SchemaAndValue{Schema: StringSchema, Value: "h"}, nil
}
func (headerCapable) FromConnectHeader(string, string, *Schema, any) ([]byte, error) { return nil, nil }

func TestConverterServesAsHeaderConverter(t *testing.T) {
	r := NewRegistry()
	r.Register(Plugin{Class: "org.example.ByteArrayConverter", Type: PluginConverter, New: func() any { return headerCapable{} }})
	hc, err := r.NewHeaderConverter("ByteArrayConverter")
	require.NoError(t, err)
	require.NoError(t, hc.Configure(nil))
	sv, err := hc.ToConnectHeader("t", "k", nil)
	require.NoError(t, err)
	assert.Equal(t, "h", sv.Value)
}
