package avro

import (
	"encoding/binary"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/avrotest"
)

func newConverter(t *testing.T, url string, isKey bool, extra map[string]string) *Converter {
	t.Helper()
	cfg := map[string]string{ConfigURL: url}
	for k, v := range extra {
		cfg[k] = v
	}
	c := New()
	require.NoError(t, c.Configure(cfg, isKey))
	return c
}

func richSchema() *connect.Schema {
	inner := connect.StructBuilder().Name("com.example.Inner").
		Field("a", connect.Int32Schema).
		Field("b", connect.OptionalStringSchema).MustBuild()
	return connect.StructBuilder().Name("com.example.Rich").Version(3).Doc("a rich record").
		Field("i8", connect.Int8Schema).
		Field("i16", connect.Int16Schema).
		Field("i32", connect.Int32Schema).
		Field("i64", connect.Int64Schema).
		Field("f32", connect.Float32Schema).
		Field("f64", connect.Float64Schema).
		Field("bool", connect.BoolSchema).
		Field("str", connect.StringSchema).
		Field("bytes", connect.BytesSchema).
		Field("optstr", connect.OptionalStringSchema).
		Field("defint", connect.Int32Builder().DefaultValue(int32(42)).MustBuild()).
		Field("dec", connect.DecimalSchema(2)).
		Field("date", connect.DateSchema).
		Field("time", connect.TimeSchema).
		Field("ts", connect.TimestampSchema).
		Field("arr", connect.ArrayBuilder(connect.StringSchema).MustBuild()).
		Field("map", connect.MapBuilder(connect.StringSchema, connect.Int64Schema).MustBuild()).
		Field("intmap", connect.MapBuilder(connect.Int32Schema, connect.StringSchema).MustBuild()).
		Field("inner", inner).
		Field("optinner", connect.BuilderFrom(inner).Optional().MustBuild()).
		Field("params", connect.StringBuilder().Parameter("p1", "v1").MustBuild()).
		MustBuild()
}

func richValue(s *connect.Schema) *connect.Struct {
	inner := s.Fields()[18].Schema
	in := connect.NewStruct(inner).MustPut("a", int32(7)).MustPut("b", "x")
	return connect.NewStruct(s).
		MustPut("i8", int8(-8)).MustPut("i16", int16(-16)).MustPut("i32", int32(32)).MustPut("i64", int64(-64)).
		MustPut("f32", float32(1.5)).MustPut("f64", 2.25).MustPut("bool", true).MustPut("str", "héllo").
		MustPut("bytes", []byte{0, 1, 0xff}).
		MustPut("dec", connect.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}).
		MustPut("date", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)).
		MustPut("time", time.UnixMilli(12*3600*1000+345).UTC()).
		MustPut("ts", time.UnixMilli(1700000000123).UTC()).
		MustPut("arr", []any{"a", "b"}).
		MustPut("map", map[any]any{"k": int64(1)}).
		MustPut("intmap", map[any]any{int32(5): "five"}).
		MustPut("inner", in).
		MustPut("params", "p")
}

func TestRoundTripRich(t *testing.T) {
	reg := avrotest.New()
	defer reg.Close()
	c := newConverter(t, reg.URL(), false, nil)
	s := richSchema()
	v := richValue(s)
	b, err := c.FromConnectData("topic", nil, s, v)
	require.NoError(t, err)
	require.Equal(t, byte(0), b[0])
	id := binary.BigEndian.Uint32(b[1:5])
	text, ok := reg.SchemaByID(int(id))
	require.True(t, ok)
	assert.Equal(t, []string{"topic-value"}, reg.Subjects())

	d := newConverter(t, reg.URL(), false, nil)
	got, err := d.ToConnectData("topic", nil, b)
	require.NoError(t, err, text)
	st := got.Value.(*connect.Struct)
	for _, f := range s.Fields() {
		assert.True(t, connect.ValuesEqual(v.Get(f.Name), st.Get(f.Name)), "field %s: %v vs %v", f.Name, v.Get(f.Name), st.Get(f.Name))
	}
	// The schema survives the round trip through Avro (connect.* properties), except the field.default flag.
	assert.Equal(t, "com.example.Rich", got.Schema.Name)
	require.NotNil(t, got.Schema.Version)
	assert.EqualValues(t, 3, *got.Schema.Version)
	assert.Equal(t, "a rich record", got.Schema.Doc)
	f, _ := got.Schema.Field("defint")
	assert.Equal(t, int32(42), f.Schema.Default)
	f, _ = got.Schema.Field("params")
	assert.Equal(t, "v1", f.Schema.Parameters["p1"])
	f, _ = got.Schema.Field("i8")
	assert.Equal(t, connect.TypeInt8, f.Schema.Type)
	f, _ = got.Schema.Field("dec")
	assert.Equal(t, connect.DecimalName, f.Schema.Name)
	f, _ = got.Schema.Field("intmap")
	assert.Equal(t, connect.TypeMap, f.Schema.Type)
	assert.Equal(t, connect.TypeInt32, f.Schema.KeySchema().Type)
	f, _ = got.Schema.Field("optinner")
	assert.True(t, f.Schema.Optional)
	assert.Equal(t, "com.example.Inner", f.Schema.Name)
}

func TestAvroSchemaOfMatchesAvroData(t *testing.T) {
	// Expected texts follow AvroData.fromConnectSchema (connect.meta.data=true).
	tests := []struct {
		name   string
		schema *connect.Schema
		want   string
	}{
		{"int8", connect.Int8Schema, `{"type":"int","connect.type":"int8"}`},
		{"optional string", connect.OptionalStringSchema, `["null","string"]`},
		{"decimal", connect.DecimalSchema(2), `{"type":"bytes","scale":2,"precision":64,"connect.version":1,"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}`},
		{"date", connect.DateSchema, `{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}`},
		{"timestamp", connect.TimestampSchema, `{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}`},
		{"unnamed struct", connect.StructBuilder().Field("a", connect.Int32Schema).Field("b", connect.OptionalInt64Schema).MustBuild(),
			`{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"a","type":"int"},{"name":"b","type":["null","long"],"default":null}]}`},
		{"int key map", connect.MapBuilder(connect.Int32Schema, connect.StringSchema).MustBuild(),
			`{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro","fields":[{"name":"key","type":"int"},{"name":"value","type":"string"}]}}`},
		{"optional with default", connect.Int32Builder().Optional().DefaultValue(int32(5)).MustBuild(), `[{"type":"int","connect.default":5},"null"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AvroSchemaOf(tt.schema)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, got)
		})
	}
}

func TestToConnectSchemaMapping(t *testing.T) {
	tests := []struct {
		name  string
		avro  string
		check func(t *testing.T, s *connect.Schema)
	}{
		{"enum", `{"type":"enum","name":"Suit","namespace":"cards","symbols":["HEARTS","SPADES"],"doc":"d","default":"SPADES"}`, func(t *testing.T, s *connect.Schema) {
			assert.Equal(t, connect.TypeString, s.Type)
			assert.Equal(t, "cards.Suit", s.Name)
			assert.Equal(t, map[string]string{"io.confluent.connect.avro.Enum": "cards.Suit", "io.confluent.connect.avro.Enum.HEARTS": "HEARTS",
				"io.confluent.connect.avro.Enum.SPADES": "SPADES", "io.confluent.connect.avro.enum.doc.Suit": "d",
				"io.confluent.connect.avro.enum.default.Suit": "SPADES"}, s.Parameters)
		}},
		{"fixed", `{"type":"fixed","name":"F","size":4}`, func(t *testing.T, s *connect.Schema) {
			assert.Equal(t, connect.TypeBytes, s.Type)
			assert.Equal(t, "F", s.Name)
			assert.Equal(t, "4", s.Parameters["connect.fixed.size"])
		}},
		{"fixed decimal", `{"type":"fixed","name":"D","size":8,"logicalType":"decimal","precision":10,"scale":3}`, func(t *testing.T, s *connect.Schema) {
			assert.Equal(t, connect.DecimalName, s.Name)
			assert.Equal(t, map[string]string{"scale": "3", "connect.decimal.precision": "10", "connect.fixed.size": "8"}, s.Parameters)
		}},
		{"micros are plain longs", `{"type":"long","logicalType":"timestamp-micros"}`, func(t *testing.T, s *connect.Schema) {
			assert.Equal(t, connect.Int64Schema.Type, s.Type)
			assert.Empty(t, s.Name)
		}},
		{"general union", `["null","int","string",{"type":"record","name":"ns.R","fields":[]}]`, func(t *testing.T, s *connect.Schema) {
			assert.Equal(t, "io.confluent.connect.avro.Union", s.Name)
			assert.True(t, s.Optional)
			var names []string
			for _, f := range s.Fields() {
				names = append(names, f.Name)
				assert.True(t, f.Schema.Optional)
			}
			assert.Equal(t, []string{"int", "string", "R"}, names)
		}},
		{"record with docs and defaults", `{"type":"record","name":"R","doc":"rd","fields":[{"name":"a","type":"int","doc":"fa","default":3},{"name":"o","type":["null","string"],"default":null}]}`, func(t *testing.T, s *connect.Schema) {
			assert.Equal(t, "rd", s.Parameters["io.confluent.connect.avro.record.doc"])
			assert.Equal(t, "fa", s.Parameters["io.confluent.connect.avro.field.doc.a"])
			a, _ := s.Field("a")
			assert.Equal(t, int32(3), a.Schema.Default)
			assert.Equal(t, "true", a.Schema.Parameters["io.confluent.connect.avro.field.default"])
			o, _ := s.Field("o")
			assert.True(t, o.Schema.Optional)
			assert.Nil(t, o.Schema.Default)
			assert.Empty(t, o.Schema.Parameters)
		}},
		{"connect props", `{"type":"string","connect.name":"N","connect.doc":"D","connect.version":2,"connect.parameters":{"x":"y"},"connect.default":"dflt","avro.java.string":"String"}`, func(t *testing.T, s *connect.Schema) {
			assert.Equal(t, "N", s.Name)
			assert.Equal(t, "D", s.Doc)
			assert.EqualValues(t, 2, *s.Version)
			assert.Equal(t, map[string]string{"x": "y", "avro.java.string": "String"}, s.Parameters)
			assert.Equal(t, "dflt", s.Default)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ToConnectSchema(tt.avro)
			require.NoError(t, err)
			tt.check(t, s)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	reg := avrotest.New()
	defer reg.Close()
	id := reg.Register("t-value", `{"type":"record","name":"R","fields":[{"name":"s","type":"string"}]}`)
	c := newConverter(t, reg.URL(), false, nil)
	hdr := func(id int) []byte {
		b := []byte{0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], uint32(id))
		return b
	}
	tests := []struct {
		name string
		in   []byte
	}{
		{"bad magic", []byte{1, 0, 0, 0, 1, 2}},
		{"empty but not null", []byte{}},
		{"short header", []byte{0, 0, 1}},
		{"unknown id", append(hdr(999), 0)},
		{"truncated string", append(hdr(id), 10, 'a')},
		{"negative length", append(hdr(id), 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.ToConnectData("t", nil, tt.in)
			require.Error(t, err)
			assert.True(t, connect.IsDataError(err), "%T %v", err, err)
		})
	}
	sv, err := c.ToConnectData("t", nil, nil)
	require.NoError(t, err)
	assert.Nil(t, sv.Value)
}

func TestSubjectNameStrategies(t *testing.T) {
	reg := avrotest.New()
	defer reg.Close()
	s := connect.StructBuilder().Name("com.example.Rec").Field("a", connect.Int32Schema).MustBuild()
	v := connect.NewStruct(s).MustPut("a", int32(1))
	tests := []struct {
		isKey bool
		cfg   map[string]string
		want  string
	}{
		{false, nil, "orders-value"},
		{true, nil, "orders-key"},
		{false, map[string]string{ConfigValueStrategy: "io.confluent.kafka.serializers.subject.RecordNameStrategy"}, "com.example.Rec"},
		{true, map[string]string{ConfigKeyStrategy: "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"}, "orders-com.example.Rec"},
		{false, map[string]string{ConfigValueStrategy: "TopicRecordNameStrategy"}, "orders-com.example.Rec"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			c := newConverter(t, reg.URL(), tt.isKey, tt.cfg)
			b, err := c.FromConnectData("orders", nil, s, v)
			require.NoError(t, err)
			assert.Contains(t, reg.Subjects(), tt.want)
			got, err := c.ToConnectData("orders", nil, b)
			require.NoError(t, err)
			assert.Equal(t, int32(1), got.Value.(*connect.Struct).Get("a"))
		})
	}
	c := New()
	err := c.Configure(map[string]string{ConfigURL: reg.URL(), ConfigValueStrategy: "com.acme.Nope"}, false)
	require.Error(t, err)
}

func TestAutoRegisterOffAndUseLatest(t *testing.T) {
	reg := avrotest.New()
	defer reg.Close()
	s := connect.StructBuilder().Name("R").Field("a", connect.Int32Schema).MustBuild()
	v := connect.NewStruct(s).MustPut("a", int32(9))

	c := newConverter(t, reg.URL(), false, map[string]string{ConfigAutoRegister: "false"})
	_, err := c.FromConnectData("t", nil, s, v)
	require.Error(t, err, "schema not registered and auto.register.schemas=false")
	assert.True(t, connect.IsDataError(err))

	text, err := AvroSchemaOf(s)
	require.NoError(t, err)
	id := reg.Register("t-value", text)
	b, err := c.FromConnectData("t", nil, s, v)
	require.NoError(t, err)
	assert.EqualValues(t, id, binary.BigEndian.Uint32(b[1:5]))

	// use.latest.version writes with the latest registered schema (here one with an extra defaulted field).
	latest := `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"z","type":"string","default":"zz"}]}`
	lid := reg.Register("u-value", latest)
	c2 := newConverter(t, reg.URL(), false, map[string]string{ConfigAutoRegister: "false", ConfigUseLatest: "true"})
	b, err = c2.FromConnectData("u", nil, s, v)
	require.NoError(t, err)
	assert.EqualValues(t, lid, binary.BigEndian.Uint32(b[1:5]))
	got, err := c2.ToConnectData("u", nil, b)
	require.NoError(t, err)
	assert.Equal(t, "zz", got.Value.(*connect.Struct).Get("z"))
}

func TestBasicAuthAndMultipleURLs(t *testing.T) {
	reg := avrotest.New()
	defer reg.Close()
	reg.User, reg.Password = "u", "p:w"
	s := connect.StringSchema
	// First URL refuses connections: the client fails over to the second.
	urls := "http://127.0.0.1:1," + reg.URL()
	c := newConverter(t, urls, false, map[string]string{ConfigAuthSource: "USER_INFO", ConfigUserInfo: "u:p:w"})
	b, err := c.FromConnectData("t", nil, s, "hello")
	require.NoError(t, err)
	got, err := c.ToConnectData("t", nil, b)
	require.NoError(t, err)
	assert.Equal(t, "hello", got.Value)

	bad := newConverter(t, reg.URL(), false, map[string]string{ConfigAuthSource: "USER_INFO", ConfigUserInfo: "u:wrong"})
	_, err = bad.FromConnectData("t2", nil, s, "x")
	require.Error(t, err)

	// Credentials in the URL (basic.auth.credentials.source=URL, the default).
	withURL := "http://u:p%3Aw@" + reg.URL()[len("http://"):]
	c3 := newConverter(t, withURL, false, nil)
	_, err = c3.ToConnectData("t", nil, b)
	require.NoError(t, err)
}

// TestUserInfoRequired: basic.auth.credentials.source=USER_INFO without user info is refused at
// configuration, as Confluent's UserInfoCredentialProvider does, rather than sending no credentials.
func TestUserInfoRequired(t *testing.T) {
	err := New().Configure(map[string]string{ConfigURL: "http://127.0.0.1:1", ConfigAuthSource: "USER_INFO"}, false)
	var ce *connect.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, ConfigUserInfo, ce.Name)
	assert.Contains(t, err.Error(), "basic.auth.user.info must be provided when basic.auth.credentials.source is set to USER_INFO")
	require.NoError(t, New().Configure(map[string]string{ConfigURL: "http://127.0.0.1:1", ConfigAuthSource: "USER_INFO",
		"schema.registry.basic.auth.user.info": "u:p"}, false), "the deprecated alias still counts")
}

func TestTLS(t *testing.T) {
	reg := avrotest.NewTLS()
	defer reg.Close()
	certPEM := avrotest.CertPEM(reg)
	c := newConverter(t, reg.URL(), false, map[string]string{ConfigSSLTruststoreType: "PEM", ConfigSSLTruststoreCert: certPEM})
	b, err := c.FromConnectData("t", nil, connect.Int64Schema, int64(5))
	require.NoError(t, err)
	got, err := c.ToConnectData("t", nil, b)
	require.NoError(t, err)
	assert.Equal(t, int64(5), got.Value)

	untrusted := newConverter(t, reg.URL(), false, nil)
	_, err = untrusted.ToConnectData("t", nil, b)
	require.Error(t, err)

	c2 := New()
	err = c2.Configure(map[string]string{ConfigURL: reg.URL(), ConfigSSLTruststoreType: "JKS", ConfigSSLTruststoreLoc: "/x.jks"}, false)
	require.Error(t, err)
}

func TestSchemaCachedByID(t *testing.T) {
	reg := avrotest.New()
	defer reg.Close()
	c := newConverter(t, reg.URL(), false, nil)
	b, err := c.FromConnectData("t", nil, connect.StringSchema, "v")
	require.NoError(t, err)
	_, err = c.ToConnectData("t", nil, b)
	require.NoError(t, err)
	n := reg.Requests.Load()
	for i := 0; i < 100; i++ {
		_, err = c.ToConnectData("t", nil, b)
		require.NoError(t, err)
		_, err = c.FromConnectData("t", nil, connect.StringSchema, "v")
		require.NoError(t, err)
	}
	assert.Equal(t, n, reg.Requests.Load(), "no registry calls once cached")
}

func TestTopLevelDecimalIsRawBytes(t *testing.T) {
	reg := avrotest.New()
	defer reg.Close()
	c := newConverter(t, reg.URL(), false, nil)
	d := connect.Decimal{Unscaled: big.NewInt(-1), Scale: 4}
	b, err := c.FromConnectData("t", nil, connect.DecimalSchema(4), d)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xff}, b[5:])
	got, err := c.ToConnectData("t", nil, b)
	require.NoError(t, err)
	assert.True(t, connect.ValuesEqual(d, got.Value))
}

func TestRegistered(t *testing.T) {
	reg := connect.NewRegistry(Plugins())
	p, ok := reg.Lookup("io.confluent.connect.avro.AvroConverter")
	require.True(t, ok)
	assert.Equal(t, connect.PluginConverter, p.Type)
	_, ok = reg.Lookup("AvroConverter")
	assert.True(t, ok)
}

var _ = json.Marshal

func TestConcurrentUse(t *testing.T) {
	reg := avrotest.New()
	defer reg.Close()
	c := newConverter(t, reg.URL(), false, nil)
	s := richSchema()
	v := richValue(s)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			topic := "t" + strconv.Itoa(g%3)
			for i := 0; i < 50; i++ {
				b, err := c.FromConnectData(topic, nil, s, v)
				if err == nil {
					_, err = c.ToConnectData(topic, nil, b)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestRegistryAnswerClassification: which registry answers the worker may retry (errors.retry.timeout)
// and which are final; all of them are DataErrors, network failures aside.
func TestRegistryAnswerClassification(t *testing.T) {
	payload := []byte{0, 0, 0, 0, 7, 2}
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		retriable bool
		message   string
	}{
		{"schema not found", 404, `{"error_code":40403,"message":"Schema not found"}`, true, "Schema not found; error code: 40403"},
		{"server error", 500, `{"error_code":50001,"message":"Error in the backend data store"}`, true, "Error in the backend data store; error code: 50001"},
		{"unavailable, not JSON", 503, "upstream connect error", true, "503 Service Unavailable upstream connect error; error code: 503"},
		{"unauthorized", 401, `{"message":"Unauthorized"}`, false, `401 Unauthorized {"message":"Unauthorized"}; error code: 401`},
		{"subject not found", 404, `{"error_code":40401,"message":"Subject 'x' not found."}`, false, "Subject 'x' not found.; error code: 40401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			_, err := newConverter(t, srv.URL, false, nil).ToConnectData("t", nil, payload)
			require.Error(t, err)
			assert.Equal(t, tc.retriable, connect.IsRetriable(err), "%v", err)
			assert.True(t, connect.IsDataError(err), "%v", err)
			assert.Equal(t, "Error retrieving Avro value schema for id 7: "+tc.message, err.Error())
		})
	}
	_, err := newConverter(t, "http://127.0.0.1:1", false, nil).ToConnectData("t", nil, payload)
	assert.True(t, connect.IsRetriable(err), "connection refused: %v", err)
}
