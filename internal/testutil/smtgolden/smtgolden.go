// Package smtgolden replays golden cases recorded from the JVM's SMT and predicate classes: each case's input
// record goes through the transformation or predicate connectd's registry builds for the case's class, and its
// output, its drop, its verdict or its exception is compared with the JVM's.
package smtgolden

import (
	"bytes"
	"encoding/json"
	"math/big"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// Record is a case's input record; key, value and header values are JsonConverter envelopes.
type Record struct {
	Topic     string          `json:"topic"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
	Timestamp *int64          `json:"timestamp"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Headers   []struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	} `json:"headers"`
}

// Case is one golden case: what the JVM's class did with the input under the config.
type Case struct {
	Name                 string            `json:"name"`
	Kind                 string            `json:"kind"` // "predicate", or a transformation
	Class                string            `json:"class"`
	Config               map[string]string `json:"config"`
	Input                Record            `json:"input"`
	Output               json.RawMessage   `json:"output"`
	OutputUnserializable string            `json:"output_unserializable"`
	Result               *bool             `json:"result"`
	Error                *struct {
		Class   string `json:"class"`
		Message string `json:"message"`
	} `json:"error"`
}

// Load reads the cases of a fixtures file ({"cases": [...]}).
func Load(t *testing.T, path string) []Case {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var root struct {
		Cases []Case `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &root))
	require.NotEmpty(t, root.Cases)
	return root.Cases
}

// Codec reads and writes records in the fixtures' JSON form.
type Codec struct {
	// Decode turns an envelope into a schema and value.
	Decode func(t *testing.T, raw json.RawMessage) connect.SchemaAndValue
	// Record is a record in a form comparable with Output's.
	Record func(t *testing.T, r *connect.SinkRecord) any
	// Output is a case's expected output record in that form.
	Output func(t *testing.T, raw json.RawMessage) any
}

// SinkRecord is the case's input as the sink task receives it.
func (c Case) SinkRecord(t *testing.T, codec Codec) *connect.SinkRecord {
	g := c.Input
	k, v := codec.Decode(t, g.Key), codec.Decode(t, g.Value)
	r := &connect.SinkRecord{Topic: g.Topic, Partition: g.Partition, Offset: g.Offset, KeySchema: k.Schema, Key: k.Value,
		ValueSchema: v.Schema, Value: v.Value, Timestamp: connect.NoTimestamp, TimestampType: connect.CreateTime,
		OriginalTopic: g.Topic, OriginalPartition: g.Partition, OriginalOffset: g.Offset}
	if g.Timestamp != nil {
		r.Timestamp = *g.Timestamp
	}
	for _, h := range g.Headers {
		hv := codec.Decode(t, h.Value)
		r.Headers = append(r.Headers, connect.Header{Key: h.Key, Schema: hv.Schema, Value: hv.Value})
	}
	return r
}

// Run replays every case as a subtest, with the plugins of reg, and logs how many ended in each way.
func Run(t *testing.T, reg *connect.Registry, cases []Case, codec Codec) {
	counts := map[string]int{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { counts[check(t, reg, c, codec)]++ })
	}
	t.Logf("golden cases: %d %v", len(cases), counts)
}

// check replays one case and says how it ended: predicate, error, unserializable, dropped or output.
func check(t *testing.T, reg *connect.Registry, c Case, codec Codec) string {
	in := c.SinkRecord(t, codec)
	if c.Kind == "predicate" {
		p, err := reg.NewPredicate(c.Class)
		require.NoError(t, err)
		require.NoError(t, p.Configure(c.Config))
		got, err := p.Test(in)
		require.NoError(t, err)
		require.NotNil(t, c.Result)
		assert.Equal(t, *c.Result, got)
		return "predicate"
	}
	tr, err := reg.NewTransformation(c.Class)
	require.NoError(t, err)
	if err := tr.Configure(c.Config); err != nil {
		// the JVM failed in configure(): the fixture records that exception
		require.NotNil(t, c.Error, "configure failed: %v", err)
		assert.Equal(t, c.Error.Message, err.Error())
		assert.Equal(t, c.Error.Class, connect.ErrorClassName(err))
		return "error"
	}
	before := codec.Record(t, in)
	out, err := tr.Apply(in)
	assert.Equal(t, before, codec.Record(t, in), "Apply modified its input")
	switch {
	case c.Error != nil:
		require.Error(t, err)
		assert.Equal(t, c.Error.Message, err.Error())
		assert.Equal(t, c.Error.Class, connect.ErrorClassName(err))
		return "error"
	case c.OutputUnserializable != "":
		require.NoError(t, err)
		require.NotNil(t, out)
		return "unserializable"
	case string(c.Output) == "null":
		require.NoError(t, err)
		assert.Nil(t, out, "expected the record to be dropped")
		return "dropped"
	default:
		require.NoError(t, err)
		require.NotNil(t, out, "record dropped")
		want, got := codec.Output(t, c.Output), codec.Record(t, out)
		if !assert.Equal(t, want, got) {
			w, _ := json.MarshalIndent(want, "", " ")
			g, _ := json.MarshalIndent(got, "", " ")
			t.Logf("want %s\ngot %s", w, g)
		}
		return "output"
	}
}

// Parse reads JSON with numbers kept as json.Number.
func Parse(t *testing.T, raw []byte) any {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	require.NoError(t, d.Decode(&v))
	return v
}

// Normalize makes numbers comparable (json.Number -> big.Float text).
func Normalize(j any) any {
	switch x := j.(type) {
	case json.Number:
		f, _, err := big.ParseFloat(string(x), 10, 200, big.ToNearestEven)
		if err != nil {
			return string(x)
		}
		return f.Text('g', 30)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	}
	return j
}
