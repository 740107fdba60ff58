package avro

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/avrotest"
)

// The interop tests run Confluent's own Python serializer and deserializer
// (confluent_kafka.schema_registry.avro, from PyPI, in the venv made by scripts/schema-registry.sh)
// against the in-memory registry of avrotest, or against the registry at SCHEMA_REGISTRY_URL when set
// (scripts/karapace.sh check runs them against Karapace).

// interopRegistry is the registry URL the interop tests use.
func interopRegistry(t *testing.T) string {
	if u := os.Getenv("SCHEMA_REGISTRY_URL"); u != "" {
		return u
	}
	reg := avrotest.New()
	t.Cleanup(reg.Close)
	return reg.URL()
}

// registrySubjects lists a registry's subjects (GET /subjects).
func registrySubjects(t *testing.T, url string) []string {
	resp, err := http.Get(url + "/subjects")
	require.NoError(t, err)
	defer resp.Body.Close()
	var out []string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

var (
	pyOnce sync.Once
	pyPath string
	pyErr  error
)

func python(t *testing.T) string {
	t.Helper()
	pyOnce.Do(func() {
		out, err := exec.Command("bash", filepath.Join("..", "..", "scripts", "schema-registry.sh"), "venv").Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				err = &pyError{err, string(ee.Stderr)}
			}
			pyErr = err
			return
		}
		pyPath = strings.TrimSpace(string(out))
	})
	require.NoError(t, pyErr, "setting up the confluent-kafka venv (scripts/schema-registry.sh)")
	return pyPath
}

type pyError struct {
	err    error
	stderr string
}

func (e *pyError) Error() string { return e.err.Error() + ": " + e.stderr }

type produceReq struct {
	Topic  string `json:"topic"`
	Schema string `json:"schema"`
	Value  string `json:"value"`
	Key    bool   `json:"key"`
}

type consumeReq struct {
	Topic string `json:"topic"`
	Hex   string `json:"hex"`
	Key   bool   `json:"key"`
}

type pyResp struct {
	Produced []string          `json:"produced"`
	Consumed []json.RawMessage `json:"consumed"`
}

func runPython(t *testing.T, url string, produce []produceReq, consume []consumeReq) pyResp {
	t.Helper()
	req, err := json.Marshal(map[string]any{"produce": produce, "consume": consume})
	require.NoError(t, err)
	cmd := exec.Command(python(t), filepath.Join("..", "..", "testdata", "avro", "interop.py"), url)
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var resp pyResp
	require.NoError(t, json.Unmarshal(out, &resp))
	return resp
}

func dec(unscaled string, scale int32) connect.Decimal {
	u, _ := new(big.Int).SetString(unscaled, 10)
	return connect.Decimal{Unscaled: u, Scale: scale}
}

// TestInteropConfluentSerializerToConnect: records written by Confluent's serializer decode to the
// expected Connect values and schemas, for every Avro type and logical type.
func TestInteropConfluentSerializerToConnect(t *testing.T) {
	regURL := interopRegistry(t)

	type fieldCheck struct {
		value  any
		typ    connect.Type
		name   string
		params map[string]string
		opt    bool
	}
	cases := []struct {
		name   string
		req    produceReq
		fields map[string]fieldCheck // for records
		check  func(t *testing.T, sv connect.SchemaAndValue)
	}{
		{
			name: "primitives",
			req: produceReq{Topic: "prims", Schema: `{"type":"record","name":"Prims","namespace":"interop","fields":[
				{"name":"b","type":"boolean"},{"name":"i","type":"int"},{"name":"l","type":"long"},
				{"name":"f","type":"float"},{"name":"d","type":"double"},{"name":"by","type":"bytes"},
				{"name":"s","type":"string"},{"name":"n","type":["null","string"],"default":null},
				{"name":"n2","type":["long","null"]},{"name":"dflt","type":"int","default":5}]}`,
				Value: `{'b':True,'i':-2147483648,'l':9223372036854775807,'f':1.5,'d':-0.1,'by':b'\x00\xff','s':'ünï\u2603','n':None,'n2':7,'dflt':6}`},
			fields: map[string]fieldCheck{
				"b": {value: true, typ: connect.TypeBoolean}, "i": {value: int32(-2147483648), typ: connect.TypeInt32},
				"l": {value: int64(9223372036854775807), typ: connect.TypeInt64}, "f": {value: float32(1.5), typ: connect.TypeFloat32},
				"d": {value: -0.1, typ: connect.TypeFloat64}, "by": {value: []byte{0, 0xff}, typ: connect.TypeBytes},
				"s": {value: "ünï☃", typ: connect.TypeString}, "n": {value: nil, typ: connect.TypeString, opt: true},
				"n2":   {value: int64(7), typ: connect.TypeInt64, opt: true},
				"dflt": {value: int32(6), typ: connect.TypeInt32, params: map[string]string{"io.confluent.connect.avro.field.default": "true"}},
			},
			check: func(t *testing.T, sv connect.SchemaAndValue) {
				assert.Equal(t, "interop.Prims", sv.Schema.Name)
				require.NotNil(t, sv.Schema.Version)
				assert.EqualValues(t, 1, *sv.Schema.Version, "registry version of the subject")
				f, _ := sv.Schema.Field("dflt")
				assert.Equal(t, int32(5), f.Schema.Default)
			},
		},
		{
			name: "complex",
			req: produceReq{Topic: "complex", Schema: `{"type":"record","name":"Complex","namespace":"interop","doc":"cx","fields":[
				{"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN","BLUE"]}},
				{"name":"fx","type":{"type":"fixed","name":"Four","size":4}},
				{"name":"arr","type":{"type":"array","items":{"type":"record","name":"Item","fields":[{"name":"q","type":"int"}]}}},
				{"name":"m","type":{"type":"map","values":{"type":"array","items":"string"}}},
				{"name":"u","type":["null","int","string","Item"]},
				{"name":"u2","type":["int","string"]},
				{"name":"me","type":{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro",
					"fields":[{"name":"key","type":"int"},{"name":"value","type":"string"}]}}},
				{"name":"nested","type":{"type":"record","name":"Nested","fields":[{"name":"inner","type":["null","Item"]}]}}]}`,
				Value: `{'e':'GREEN','fx':b'abcd','arr':[{'q':1},{'q':2}],'m':{'k':['x','y'],'e':[]},'u':('interop.Item',{'q':9}),'u2':'s','me':[{'key':1,'value':'one'},{'key':2,'value':'two'}],'nested':{'inner':{'q':3}}}`},
			check: func(t *testing.T, sv connect.SchemaAndValue) {
				s := sv.Schema
				st := sv.Value.(*connect.Struct)
				assert.Equal(t, "cx", s.Parameters["io.confluent.connect.avro.record.doc"])
				e, _ := s.Field("e")
				assert.Equal(t, "interop.Color", e.Schema.Name)
				assert.Equal(t, "interop.Color", e.Schema.Parameters["io.confluent.connect.avro.Enum"])
				assert.Equal(t, "GREEN", st.Get("e"))
				fx, _ := s.Field("fx")
				assert.Equal(t, "4", fx.Schema.Parameters["connect.fixed.size"])
				assert.Equal(t, []byte("abcd"), st.Get("fx"))
				arr := st.Get("arr").([]any)
				require.Len(t, arr, 2)
				assert.Equal(t, int32(2), arr[1].(*connect.Struct).Get("q"))
				assert.Equal(t, "interop.Item", arr[0].(*connect.Struct).Schema().Name)
				assert.True(t, connect.ValuesEqual(map[any]any{"k": []any{"x", "y"}, "e": []any{}}, st.Get("m")))
				u, _ := s.Field("u")
				assert.Equal(t, "io.confluent.connect.avro.Union", u.Schema.Name)
				assert.True(t, u.Schema.Optional)
				us := st.Get("u").(*connect.Struct)
				assert.Nil(t, us.Get("int"))
				assert.Equal(t, int32(9), us.Get("Item").(*connect.Struct).Get("q"))
				assert.Equal(t, "s", st.Get("u2").(*connect.Struct).Get("string"))
				me, _ := s.Field("me")
				assert.Equal(t, connect.TypeMap, me.Schema.Type)
				assert.Equal(t, connect.TypeInt32, me.Schema.KeySchema().Type)
				assert.True(t, connect.ValuesEqual(map[any]any{int32(1): "one", int32(2): "two"}, st.Get("me")))
				assert.Equal(t, int32(3), st.Get("nested").(*connect.Struct).Get("inner").(*connect.Struct).Get("q"))
			},
		},
		{
			name: "logical",
			req: produceReq{Topic: "logical", Schema: `{"type":"record","name":"Logical","namespace":"interop","fields":[
				{"name":"decb","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":3}},
				{"name":"decf","type":{"type":"fixed","name":"DecF","size":8,"logicalType":"decimal","precision":18,"scale":4}},
				{"name":"date","type":{"type":"int","logicalType":"date"}},
				{"name":"tms","type":{"type":"int","logicalType":"time-millis"}},
				{"name":"tus","type":{"type":"long","logicalType":"time-micros"}},
				{"name":"tsms","type":{"type":"long","logicalType":"timestamp-millis"}},
				{"name":"tsus","type":{"type":"long","logicalType":"timestamp-micros"}},
				{"name":"ltsms","type":{"type":"long","logicalType":"local-timestamp-millis"}},
				{"name":"uuid","type":{"type":"string","logicalType":"uuid"}},
				{"name":"optdate","type":["null",{"type":"int","logicalType":"date"}]}]}`,
				Value: `{'decb':D('-1234.567'),'decf':D('12345678901234.5678'),'date':datetime.date(2024,2,29),
					'tms':datetime.time(12,34,56,789000),'tus':datetime.time(1,2,3,456789),
					'tsms':datetime.datetime(2023,11,14,22,13,20,123000,tzinfo=UTC),
					'tsus':datetime.datetime(2023,11,14,22,13,20,123456,tzinfo=UTC),
					'ltsms':datetime.datetime(2020,1,1,0,0,0,1000),
					'uuid':uuid.UUID('12345678-1234-5678-1234-567812345678'),'optdate':datetime.date(1969,12,31)}`},
			fields: map[string]fieldCheck{
				"decb": {value: dec("-1234567", 3), typ: connect.TypeBytes, name: connect.DecimalName, params: map[string]string{"scale": "3", "connect.decimal.precision": "10"}},
				"decf": {value: dec("123456789012345678", 4), typ: connect.TypeBytes, name: connect.DecimalName,
					params: map[string]string{"scale": "4", "connect.decimal.precision": "18", "connect.fixed.size": "8"}},
				"date":    {value: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), typ: connect.TypeInt32, name: connect.DateName},
				"tms":     {value: time.UnixMilli((12*3600+34*60+56)*1000 + 789).UTC(), typ: connect.TypeInt32, name: connect.TimeName},
				"tus":     {value: int64((1*3600+2*60+3)*1000000 + 456789), typ: connect.TypeInt64},
				"tsms":    {value: time.UnixMilli(1700000000123).UTC(), typ: connect.TypeInt64, name: connect.TimestampName},
				"tsus":    {value: int64(1700000000123456), typ: connect.TypeInt64},
				"ltsms":   {value: int64(1577836800001), typ: connect.TypeInt64},
				"uuid":    {value: "12345678-1234-5678-1234-567812345678", typ: connect.TypeString},
				"optdate": {value: time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), typ: connect.TypeInt32, name: connect.DateName, opt: true},
			},
		},
		{name: "top-level string", req: produceReq{Topic: "tstr", Schema: `"string"`, Value: `'plain'`},
			check: func(t *testing.T, sv connect.SchemaAndValue) {
				assert.Equal(t, connect.TypeString, sv.Schema.Type)
				assert.Equal(t, "plain", sv.Value)
			}},
		{name: "top-level long key", req: produceReq{Topic: "tlong", Schema: `"long"`, Value: `-5`, Key: true},
			check: func(t *testing.T, sv connect.SchemaAndValue) {
				assert.Equal(t, int64(-5), sv.Value)
				assert.Contains(t, registrySubjects(t, regURL), "tlong-key")
			}},
		{name: "top-level union", req: produceReq{Topic: "tunion", Schema: `["null","string","int"]`, Value: `12`},
			check: func(t *testing.T, sv connect.SchemaAndValue) {
				assert.Equal(t, "io.confluent.connect.avro.Union", sv.Schema.Name)
				assert.Equal(t, int32(12), sv.Value.(*connect.Struct).Get("int"))
			}},
		{name: "top-level array", req: produceReq{Topic: "tarr", Schema: `{"type":"array","items":"double"}`, Value: `[1.0, 2.5]`},
			check: func(t *testing.T, sv connect.SchemaAndValue) {
				assert.Equal(t, []any{1.0, 2.5}, sv.Value)
			}},
		{name: "top-level map", req: produceReq{Topic: "tmap", Schema: `{"type":"map","values":["null","boolean"]}`, Value: `{'a': True, 'b': None}`},
			check: func(t *testing.T, sv connect.SchemaAndValue) {
				assert.True(t, connect.ValuesEqual(map[any]any{"a": true, "b": nil}, sv.Value))
				assert.True(t, sv.Schema.ValueSchema().Optional)
			}},
		{name: "top-level bytes (raw, no Avro length)", req: produceReq{Topic: "tbytes", Schema: `"bytes"`, Value: `b'\x00\x01raw'`},
			check: func(t *testing.T, sv connect.SchemaAndValue) {
				assert.Equal(t, connect.TypeBytes, sv.Schema.Type)
				assert.Equal(t, []byte("\x00\x01raw"), sv.Value)
			}},
		{name: "connect metadata", req: produceReq{Topic: "meta", Schema: `{"type":"record","name":"M","connect.name":"M","connect.version":4,"connect.doc":"md",
				"connect.parameters":{"a":"b"},"fields":[{"name":"s8","type":{"type":"int","connect.type":"int8"}},{"name":"s16","type":{"type":"int","connect.type":"int16"}},
				{"name":"cd","type":{"type":"string","connect.default":"x"}}]}`, Value: `{'s8':-3,'s16':300,'cd':'y'}`},
			check: func(t *testing.T, sv connect.SchemaAndValue) {
				assert.EqualValues(t, 4, *sv.Schema.Version, "connect.version wins over the registry version")
				assert.Equal(t, "md", sv.Schema.Doc)
				assert.Equal(t, "b", sv.Schema.Parameters["a"])
				st := sv.Value.(*connect.Struct)
				assert.Equal(t, int8(-3), st.Get("s8"))
				assert.Equal(t, int16(300), st.Get("s16"))
				cd, _ := sv.Schema.Field("cd")
				assert.Equal(t, "x", cd.Schema.Default)
			}},
	}
	var reqs []produceReq
	for _, c := range cases {
		reqs = append(reqs, c.req)
	}
	resp := runPython(t, regURL, reqs, nil)
	require.Len(t, resp.Produced, len(cases))
	keyConv := newConverter(t, regURL, true, nil)
	valConv := newConverter(t, regURL, false, nil)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			payload, err := hex.DecodeString(resp.Produced[i])
			require.NoError(t, err)
			conv := valConv
			if c.req.Key {
				conv = keyConv
			}
			sv, err := conv.ToConnectData(c.req.Topic, nil, payload)
			require.NoError(t, err)
			if c.fields != nil {
				st, ok := sv.Value.(*connect.Struct)
				require.True(t, ok)
				require.NoError(t, st.Validate())
				for name, want := range c.fields {
					f, ok := sv.Schema.Field(name)
					require.True(t, ok, name)
					assert.Equal(t, want.typ, f.Schema.Type, name)
					assert.Equal(t, want.name, f.Schema.Name, name)
					assert.Equal(t, want.opt, f.Schema.Optional, name)
					for k, v := range want.params {
						assert.Equal(t, v, f.Schema.Parameters[k], "%s param %s", name, k)
					}
					assert.True(t, connect.ValuesEqual(want.value, st.Get(name)), "%s: want %v (%T), got %v (%T)", name, want.value, want.value, st.Get(name), st.Get(name))
				}
			}
			if c.check != nil {
				c.check(t, sv)
			}
		})
	}
}

// TestInteropConnectToConfluentDeserializer: what our serializer writes decodes with Confluent's
// deserializer to the same values.
func TestInteropConnectToConfluentDeserializer(t *testing.T) {
	regURL := interopRegistry(t)
	c := newConverter(t, regURL, false, nil)
	s := richSchema()
	v := richValue(s)
	b, err := c.FromConnectData("rich", nil, s, v)
	require.NoError(t, err)

	u := connect.StructBuilder().Name("io.confluent.connect.avro.Union").Optional().
		Field("int", connect.OptionalInt32Schema).Field("string", connect.OptionalStringSchema).MustBuild()
	us := connect.StructBuilder().Name("U").Field("u", u).
		Field("fx", connect.BytesBuilder().Name("ns.Fx").Parameter("connect.fixed.size", "3").MustBuild()).
		Field("dfx", connect.DecimalBuilder(1).Name(connect.DecimalName).Parameter("connect.fixed.size", "4").Parameter("connect.decimal.precision", "8").MustBuild()).
		MustBuild()
	uv := connect.NewStruct(us).MustPut("u", connect.NewStruct(u).MustPut("string", "s")).
		MustPut("fx", []byte{1, 2, 3}).MustPut("dfx", dec("-5", 1))
	b2, err := c.FromConnectData("union", nil, us, uv)
	require.NoError(t, err)
	b3, err := c.FromConnectData("prim", nil, connect.OptionalFloat64Schema, 3.5)
	require.NoError(t, err)
	b4, err := c.FromConnectData("raw", nil, connect.BytesSchema, []byte{0, 9, 'z'})
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 9, 'z'}, b4[5:], "top-level bytes are written raw")

	resp := runPython(t, regURL, nil, []consumeReq{{Topic: "rich", Hex: hex.EncodeToString(b)},
		{Topic: "union", Hex: hex.EncodeToString(b2)}, {Topic: "prim", Hex: hex.EncodeToString(b3)},
		{Topic: "raw", Hex: hex.EncodeToString(b4)}})
	require.Len(t, resp.Consumed, 4)
	assert.JSONEq(t, `{"i8":-8,"i16":-16,"i32":32,"i64":-64,"f32":1.5,"f64":2.25,"bool":true,"str":"héllo",
		"bytes":{"$bytes":"0001ff"},"optstr":null,"defint":42,"dec":{"$decimal":"-123.45"},"date":{"$date":"2024-02-29"},
		"time":{"$time":"12:00:00.345000"},"ts":{"$datetime":"2023-11-14T22:13:20.123000+00:00"},"arr":["a","b"],
		"map":{"k":1},"intmap":[{"key":5,"value":"five"}],"inner":{"a":7,"b":"x"},"optinner":null,"params":"p"}`, string(resp.Consumed[0]))
	assert.JSONEq(t, `{"u":"s","fx":{"$bytes":"010203"},"dfx":{"$decimal":"-0.5"}}`, string(resp.Consumed[1]))
	assert.JSONEq(t, `3.5`, string(resp.Consumed[2]))
	assert.JSONEq(t, `{"$bytes":"00097a"}`, string(resp.Consumed[3]))
}
