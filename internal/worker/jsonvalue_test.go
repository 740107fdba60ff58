package worker

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/converters/jsonconv"
)

type jsonValueTask struct {
	connect.SinkTaskBase
	accepts bool
}

func (t *jsonValueTask) Start(map[string]string) error                    { return nil }
func (t *jsonValueTask) Put(context.Context, []*connect.SinkRecord) error { return nil }
func (t *jsonValueTask) Stop() error                                      { return nil }
func (t *jsonValueTask) Version() string                                  { return "1" }
func (t *jsonValueTask) AcceptsJSONValues() bool                          { return t.accepts }

// TestJSONValues: a task that takes unconverted values gets valid schemaless JSON objects as
// jsonvalue.Value, everything else converted (and converter errors handled as before); with a
// transformation, a task that does not take them, or a converter with schemas, it gets Connect data.
func TestJSONValues(t *testing.T) {
	schemaless, schemas := &jsonconv.Converter{}, &jsonconv.Converter{}
	require.NoError(t, schemaless.Configure(map[string]string{"schemas.enable": "false"}, false))
	require.NoError(t, schemas.Configure(map[string]string{"schemas.enable": "true"}, false))
	newTask := func(accepts bool, conv connect.Converter, chain transformChain) *sinkTask {
		st := &sinkTask{task: &jsonValueTask{accepts: accepts}, keyConv: schemaless, valConv: conv, chain: chain}
		st.errs, _ = newErrorHandler("c", 0, map[string]string{}, nil)
		st.jsonValues = st.jsonValueConverter()
		return st
	}
	msg := func(v string) *kgo.Record {
		return &kgo.Record{Topic: "t", Partition: 1, Offset: 7, Value: []byte(v)}
	}
	ctx := context.Background()

	st := newTask(true, schemaless, nil)
	require.NotNil(t, st.jsonValues)
	rec, skip, err := st.convert(ctx, msg(`{"a":1}`), new(connect.SinkRecord))
	require.NoError(t, err)
	require.False(t, skip)
	jv, ok := rec.Value.(*jsonvalue.Value)
	require.True(t, ok, "%T", rec.Value)
	require.Equal(t, `{"a":1}`, string(jv.Bytes))
	require.Equal(t, []jsonvalue.Member{{Name: 1, NameEnd: 4, Value: 5, ValueEnd: 6}}, jv.Members)
	v, err := jv.Value()
	require.NoError(t, err)
	require.Equal(t, map[string]any{"a": int64(1)}, v)
	for in, want := range map[string]any{`[1]`: []any{int64(1)}, `"s"`: "s", `7`: int64(7)} {
		rec, _, err = st.convert(ctx, msg(in), new(connect.SinkRecord))
		require.NoError(t, err)
		require.Equal(t, want, rec.Value, in)
	}
	_, _, err = st.convert(ctx, msg(`{"a":`), new(connect.SinkRecord)) // the converter's error, as without jsonvalue.Value
	require.Error(t, err)
	_, _, err2 := newTask(false, schemaless, nil).convert(ctx, msg(`{"a":`), new(connect.SinkRecord))
	require.Equal(t, err2.Error(), err.Error())

	for _, st := range []*sinkTask{newTask(false, schemaless, nil), newTask(true, schemaless, transformChain{{alias: "x"}}), newTask(true, schemas, nil)} {
		if st.jsonValues != nil {
			_, ok := st.jsonValues.SchemalessJSONObject([]byte(`{"a":1}`), nil)
			require.False(t, ok)
		}
	}
	require.Nil(t, newTask(false, schemaless, nil).jsonValues)
	require.Nil(t, newTask(true, schemaless, transformChain{{alias: "x"}}).jsonValues)
	rec, _, err = newTask(false, schemaless, nil).convert(ctx, msg(`{"a":1}`), new(connect.SinkRecord))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"a": int64(1)}, rec.Value)
}

// TestJSONValueMembersKept: the members listed for each value of a batch stay those of its bytes
// while the batch's later values are listed (the list they share grows as it goes).
func TestJSONValueMembersKept(t *testing.T) {
	conv := &jsonconv.Converter{}
	require.NoError(t, conv.Configure(map[string]string{"schemas.enable": "false"}, false))
	st := &sinkTask{task: &jsonValueTask{accepts: true}, keyConv: conv, valConv: conv}
	st.errs, _ = newErrorHandler("c", 0, map[string]string{}, nil)
	st.jsonValues = st.jsonValueConverter()
	var recs []*connect.SinkRecord
	for i := range 200 {
		v := fmt.Sprintf(`{"id":%d,"s":"x%s"%s}`, i, strings.Repeat("y", i%7), strings.Repeat(`,"n":null`, i%5))
		rec, skip, err := st.convert(context.Background(), &kgo.Record{Topic: "t", Offset: int64(i), Value: []byte(v)}, new(connect.SinkRecord))
		require.NoError(t, err)
		require.False(t, skip)
		recs = append(recs, rec)
	}
	for _, rec := range recs {
		jv := rec.Value.(*jsonvalue.Value)
		want, ok := conv.SchemalessJSONObject(jv.Bytes, nil)
		require.True(t, ok)
		require.Equal(t, want, jv.Members, "%s", jv.Bytes)
	}
}

// The records of a put go back to the consumer's pool only when nothing the task was given can keep
// their bytes: values as jsonvalue.Values (or converted by the JSON converter), keys through a
// converter that copies, and no DLQ report or error log that keeps the originals.
func TestRecyclesRecords(t *testing.T) {
	schemaless := &jsonconv.Converter{}
	require.NoError(t, schemaless.Configure(map[string]string{"schemas.enable": "false"}, false))
	for _, c := range []struct {
		name     string
		accepts  bool
		keyClass string
		errs     map[string]string
		want     bool
	}{
		{"string keys", true, "org.apache.kafka.connect.storage.StringConverter", nil, true},
		{"JSON keys", true, "org.apache.kafka.connect.json.JsonConverter", nil, true},
		{"byte array keys alias the record", true, "org.apache.kafka.connect.converters.ByteArrayConverter", nil, false},
		{"values converted for the task", false, "org.apache.kafka.connect.storage.StringConverter", nil, false},
		{"tolerating errors keeps originals", true, "org.apache.kafka.connect.storage.StringConverter", map[string]string{"errors.tolerance": "all"}, false},
	} {
		st := &sinkTask{task: &jsonValueTask{accepts: c.accepts}, keyConv: schemaless, valConv: schemaless, keyConvClass: c.keyClass}
		var err error
		st.errs, err = newErrorHandler("c", 0, c.errs, nil)
		require.NoError(t, err)
		st.jsonValues = st.jsonValueConverter()
		require.Equal(t, c.want, st.recyclesRecords(), c.name)
	}
	st := &sinkTask{task: &jsonValueTask{accepts: true}, keyConv: schemaless, valConv: schemaless, keyConvClass: "org.apache.kafka.connect.storage.StringConverter"}
	st.errs = &errorHandler{dlq: &dlqReporter{}}
	st.jsonValues = st.jsonValueConverter()
	require.False(t, st.recyclesRecords(), "a DLQ keeps originals")
}
