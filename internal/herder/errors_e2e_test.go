package herder_test

import (
	"context"
	be "encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters/avro"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/testutil/avrotest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

func header(m *kgo.Record, k string) string {
	for _, h := range m.Headers {
		if h.Key == k {
			return string(h.Value)
		}
	}
	return ""
}

// poisonKind says which kind of poison record the i-th record is (1% of them), "" for a good one.
func poisonKind(i int) string {
	switch i % 100 {
	case 17:
		return "badjson"
	case 43:
		return "smt"
	case 71:
		return "put"
	}
	return ""
}

// A topic with 1% poison records (bad JSON, an SMT failure, a put() rejection; unknown Avro schema ids on an
// Avro topic) and errors.tolerance=all: every poison record lands in the DLQ with the right context headers,
// every good record is delivered once, and the group offsets move past both.
func TestPoisonRecordsToleranceAll(t *testing.T) {
	e := newEnv(t, map[string]string{"header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter"})
	ctx := context.Background()

	// JSON topic: bad JSON, SMT failure, put rejection.
	topic := kafkatest.UniqueName(t, "poison")
	dlq := topic + "-dlq"
	kafkatest.CreateTopic(t, e.addr, topic, 3, nil)
	const n = 1000
	var msgs []*kgo.Record
	want := map[string]bool{}
	poison := map[string]string{} // value bytes → expected stage
	for i := 0; i < n; i++ {
		v := fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i)
		switch poisonKind(i) {
		case "badjson":
			v = fmt.Sprintf(`{"id":%d,"name":`, i)
			poison[v] = "VALUE_CONVERTER"
		case "smt":
			v = fmt.Sprintf(`%d`, i) // not an object: ExtractField$Value fails
			poison[v] = "TRANSFORMATION"
		case "put":
			v = fmt.Sprintf(`{"id":-%d,"name":"reject"}`, i)
			poison[v] = "TASK_PUT"
		default:
			want[fmt.Sprint(i)] = true
		}
		msgs = append(msgs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(v),
			Headers: []kgo.RecordHeader{{Key: "origin", Value: []byte(fmt.Sprint(i))}}})
	}
	kafkatest.Produce(t, e.addr, topic, msgs...)
	name := kafkatest.UniqueName(t, "poison-sink")
	sink := sinktest.For(name)
	sink.RejectIf(func(v string) bool { return strings.HasPrefix(v, "-") })
	cfg := sinkConfig(topic, name, 2)
	for k, v := range map[string]string{
		"value.converter":                                 "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":                  "false",
		"transforms":                                      "id",
		"transforms.id.type":                              "org.apache.kafka.connect.transforms.ExtractField$Value",
		"transforms.id.field":                             "id",
		"errors.tolerance":                                "all",
		"errors.log.enable":                               "true",
		"errors.deadletterqueue.topic.name":               dlq,
		"errors.deadletterqueue.topic.replication.factor": "1",
		"errors.deadletterqueue.context.headers.enable":   "true",
	} {
		cfg[k] = v
	}
	e.create(name, cfg)
	require.Eventually(t, func() bool { return sink.Count() >= len(want) }, 90*time.Second, 50*time.Millisecond)
	got := kafkatest.ConsumeAll(t, e.addr, dlq, len(poison), 60*time.Second)
	require.Len(t, got, len(poison))
	for _, m := range got {
		stage, ok := poison[string(m.Value)]
		require.True(t, ok, "unexpected DLQ record %q", m.Value)
		assert.Equal(t, stage, header(m, worker.HeaderStage), string(m.Value))
		assert.Equal(t, topic, header(m, worker.HeaderTopic))
		assert.Equal(t, fmt.Sprint(m.Headers[0].Value), fmt.Sprint([]byte(header(m, "origin"))), "original headers first")
		assert.Equal(t, name, header(m, worker.HeaderConnectorName))
		assert.NotEmpty(t, header(m, worker.HeaderExceptionMessage))
		assert.NotEmpty(t, header(m, worker.HeaderExceptionTrace))
		assert.True(t, strings.HasPrefix(string(m.Key), "k"), "original key kept")
		switch stage {
		case "VALUE_CONVERTER":
			assert.Equal(t, "org.apache.kafka.connect.json.JsonConverter", header(m, worker.HeaderExecutingClass))
			assert.Equal(t, "org.apache.kafka.connect.errors.DataException", header(m, worker.HeaderExceptionClass))
		case "TRANSFORMATION":
			assert.Equal(t, "org.apache.kafka.connect.transforms.ExtractField$Value", header(m, worker.HeaderExecutingClass))
		case "TASK_PUT":
			assert.Equal(t, sinktest.Class+"$Task", header(m, worker.HeaderExecutingClass))
		}
	}
	recs := sink.Records()
	seen := map[string]int{}
	for _, r := range recs {
		seen[r.Value]++
	}
	for v := range want {
		assert.Equal(t, 1, seen[v], "good record %s", v)
	}
	assert.Len(t, recs, len(want))
	require.Eventually(t, func() bool {
		var sum int64
		for _, o := range kafkatest.CommittedOffsets(t, e.addr, "connect-"+name, topic) {
			sum += o
		}
		return sum == n
	}, 30*time.Second, 100*time.Millisecond, "offsets committed past good and poison records")
	active, err := e.h.ConnectorActiveTopics(context.Background(), name)
	require.NoError(t, err)
	assert.Equal(t, []string{topic}, active, "the topic its records came from is active")

	// Avro topic: unknown schema ids.
	reg := avrotest.New()
	defer reg.Close()
	atopic := kafkatest.UniqueName(t, "poison-avro")
	adlq := atopic + "-dlq"
	kafkatest.CreateTopic(t, e.addr, atopic, 1, nil)
	conv := avro.New()
	require.NoError(t, conv.Configure(map[string]string{"schema.registry.url": reg.URL()}, false))
	var amsgs []*kgo.Record
	badIDs := 0
	for i := 0; i < 300; i++ {
		v, err := conv.FromConnectData(atopic, nil, connect.StringSchema, fmt.Sprintf("a%d", i))
		require.NoError(t, err)
		if i%100 == 50 {
			be.BigEndian.PutUint32(v[1:5], 999999)
			badIDs++
		}
		amsgs = append(amsgs, &kgo.Record{Topic: atopic, Value: v})
	}
	kafkatest.Produce(t, e.addr, atopic, amsgs...)
	aname := kafkatest.UniqueName(t, "poison-avro-sink")
	asink := sinktest.For(aname)
	acfg := sinkConfig(atopic, aname, 1)
	for k, v := range map[string]string{
		"value.converter":                                 "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url":             reg.URL(),
		"errors.tolerance":                                "all",
		"errors.deadletterqueue.topic.name":               adlq,
		"errors.deadletterqueue.topic.replication.factor": "1",
		"errors.deadletterqueue.context.headers.enable":   "true",
	} {
		acfg[k] = v
	}
	e.create(aname, acfg)
	require.Eventually(t, func() bool { return asink.Count() >= 300-badIDs }, 60*time.Second, 50*time.Millisecond)
	ag := kafkatest.ConsumeAll(t, e.addr, adlq, badIDs, 30*time.Second)
	require.Len(t, ag, badIDs)
	for _, m := range ag {
		assert.Equal(t, "VALUE_CONVERTER", header(m, worker.HeaderStage))
		assert.Equal(t, uint32(999999), be.BigEndian.Uint32(m.Value[1:5]))
	}
	assert.Equal(t, 300-badIDs, asink.Count())
	_ = ctx
}

// errors.tolerance=none: the first poison record fails the task with a trace; once the cause is fixed and
// the task restarted, nothing is lost.
func TestPoisonRecordToleranceNone(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	topic := kafkatest.UniqueName(t, "strict")
	kafkatest.CreateTopic(t, e.addr, topic, 1, nil)
	produceN(t, e.addr, topic, 0, 200)
	name := kafkatest.UniqueName(t, "strict-sink")
	sink := sinktest.For(name)
	sink.RejectValue("v120")
	e.create(name, sinkConfig(topic, name, 1))
	var st *herder.ConnectorStateInfo
	require.Eventually(t, func() bool {
		st, _ = e.h.ConnectorStatus(ctx, name)
		return st != nil && len(st.Tasks) == 1 && st.Tasks[0].State == herder.StateFailed
	}, 60*time.Second, 20*time.Millisecond)
	assert.Contains(t, st.Tasks[0].Trace, "cannot write record with value \"v120\"")
	assert.Less(t, sink.Count(), 200)

	sink.RejectValue("") // the cause is fixed
	plan, err := e.h.RestartConnectorAndTasks(ctx, herder.RestartRequest{Connector: name, IncludeTasks: true, OnlyFailed: true})
	require.NoError(t, err)
	assert.Equal(t, herder.StateRunning, plan.Connector.State, "onlyFailed leaves the running connector alone")
	assert.Equal(t, herder.StateRestarting, plan.Tasks[0].State)
	require.Eventually(t, func() bool { return sink.Count() >= 200 }, 60*time.Second, 20*time.Millisecond)
	seen := map[string]bool{}
	for _, r := range sink.Records() {
		seen[r.Value] = true
	}
	for i := 0; i < 200; i++ {
		require.True(t, seen[fmt.Sprintf("v%d", i)], "lost v%d", i)
	}
	e.waitState(name, herder.StateRunning, 1)
}
