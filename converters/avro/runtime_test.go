package avro

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters/header"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/testutil/avrotest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

// TestRuntimeConsumesConfluentAvro runs the converter inside the runtime on a real broker: records
// serialized by Confluent's Python serializer reach a sink as Connect structs, with the converter
// configured through value.converter.* keys; a record with an unknown schema id goes to the dead-letter
// topic under errors.tolerance=all.
func TestRuntimeConsumesConfluentAvro(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	reg := avrotest.New()
	defer reg.Close()
	topic := kafkatest.UniqueName(t, "avro")
	dlqTopic := kafkatest.UniqueName(t, "avro-dlq")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)

	schema := `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},
		{"name":"item","type":["null","string"],"default":null},{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}}]}`
	var reqs []produceReq
	for i := 0; i < 10; i++ {
		reqs = append(reqs, produceReq{Topic: topic, Schema: schema, Value: fmt.Sprintf(`{'id': %d, 'item': 'i%d', 'price': D('%d.25')}`, i, i, i)})
	}
	resp := runPython(t, reg.URL(), reqs, nil)
	var msgs []*kgo.Record
	for i, h := range resp.Produced {
		b, err := hex.DecodeString(h)
		require.NoError(t, err)
		msgs = append(msgs, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: b})
		if i == 4 {
			bad := append([]byte(nil), b...)
			binary.BigEndian.PutUint32(bad[1:5], 4242) // unknown schema id
			msgs = append(msgs, &kgo.Record{Key: []byte("bad"), Value: bad})
		}
	}
	kafkatest.Produce(t, addr, topic, msgs...)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers": addr, "key.converter": sinktest.StringConverterClass, "value.converter": sinktest.StringConverterClass,
		"header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter", "offset.flush.interval.ms": "500",
		"listeners": fmt.Sprintf("http://127.0.0.1:%d", port),
	})
	require.NoError(t, err)
	st := herder.NewStatusTracker(cfg.WorkerID())
	w := worker.New(cfg, connect.NewRegistry(Plugins(), header.Plugins(), sinktest.Plugins()), st)
	h := herder.NewStandalone(w, st)
	require.NoError(t, h.Start(context.Background()))
	t.Cleanup(h.Stop)

	name := kafkatest.UniqueName(t, "avro-sink")
	_, created, err := h.PutConnectorConfig(context.Background(), name, map[string]string{
		"name": name, "connector.class": sinktest.Class, "tasks.max": "1", "topics": topic, "sink.id": name,
		"value.converter":                     "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url": reg.URL(),
		"errors.tolerance":                    "all", "errors.deadletterqueue.topic.name": dlqTopic,
		"errors.deadletterqueue.topic.replication.factor": "1",
	}, "", false)
	require.NoError(t, err)
	require.True(t, created)
	sink := sinktest.For(name)
	require.Eventually(t, func() bool { return sink.Count() >= 10 }, 60*time.Second, 20*time.Millisecond)
	recs := sink.Records()
	require.Len(t, recs, 10)
	for i, r := range recs {
		assert.Equal(t, fmt.Sprintf("k%d", i), r.Key)
		assert.Equal(t, fmt.Sprintf("Struct{id=%d,item=i%d,price=%d.25}", i, i, i), r.Value)
	}
	dead := kafkatest.ConsumeAll(t, addr, dlqTopic, 1, 60*time.Second)
	require.Len(t, dead, 1)
	assert.Equal(t, "bad", string(dead[0].Key))
}

// TestRuntimeRetriesSchemaNotLoaded: a registry answering 40403 for a schema id it has not loaded yet
// (Karapace just after its restart) is retried within errors.retry.timeout, and the record arrives; with
// the default errors.retry.timeout=0 the same answer sends the record to the dead-letter topic.
func TestRuntimeRetriesSchemaNotLoaded(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers": addr, "key.converter": sinktest.StringConverterClass, "value.converter": sinktest.StringConverterClass,
		"offset.flush.interval.ms": "500", "listeners": fmt.Sprintf("http://127.0.0.1:%d", port),
	})
	require.NoError(t, err)
	st := herder.NewStatusTracker(cfg.WorkerID())
	h := herder.NewStandalone(worker.New(cfg, connect.NewRegistry(Plugins(), header.Plugins(), sinktest.Plugins()), st), st)
	require.NoError(t, h.Start(context.Background()))
	t.Cleanup(h.Stop)

	for _, tc := range []struct {
		name         string
		retryTimeout string
		notLoaded    int
		arrive, dead int
	}{
		{"retried", "60000", 3, 5, 0},
		{"no-retry", "0", 1, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := avrotest.New()
			defer reg.Close()
			topic := kafkatest.UniqueName(t, "avro-notloaded")
			dlq := topic + "-dlq"
			kafkatest.CreateTopic(t, addr, topic, 1, nil)
			conv := New()
			require.NoError(t, conv.Configure(map[string]string{ConfigURL: reg.URL()}, false))
			var msgs []*kgo.Record
			for i := 0; i < 5; i++ {
				v, err := conv.FromConnectData(topic, nil, connect.StringSchema, fmt.Sprintf("v%d", i))
				require.NoError(t, err)
				msgs = append(msgs, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: v})
			}
			kafkatest.Produce(t, addr, topic, msgs...)
			reg.AnswerNotFound(tc.notLoaded)

			name := kafkatest.UniqueName(t, "avro-notloaded-sink")
			_, _, err := h.PutConnectorConfig(context.Background(), name, map[string]string{
				"name": name, "connector.class": sinktest.Class, "tasks.max": "1", "topics": topic, "sink.id": name,
				"value.converter": ClassName, "value.converter.schema.registry.url": reg.URL(),
				"errors.retry.timeout": tc.retryTimeout, "errors.retry.delay.max.ms": "1000",
				"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
				"errors.deadletterqueue.topic.replication.factor": "1",
			}, "", false)
			require.NoError(t, err)
			sink := sinktest.For(name)
			require.Eventually(t, func() bool { return sink.Count() >= tc.arrive }, 60*time.Second, 20*time.Millisecond)
			first := 5 - tc.arrive
			for i, r := range sink.Records() {
				assert.Equal(t, fmt.Sprintf("v%d", first+i), r.Value)
			}
			if tc.dead > 0 {
				dead := kafkatest.ConsumeAll(t, addr, dlq, tc.dead, 60*time.Second)
				require.Len(t, dead, tc.dead)
				assert.Equal(t, "k0", string(dead[0].Key))
			}
			assert.Equal(t, tc.arrive, sink.Count())
			require.NoError(t, h.DeleteConnector(context.Background(), name))
		})
	}
}

// outageRegistry is a registry that can be taken down and brought back: avrotest, or a live registry
// (SCHEMA_REGISTRY_URL) with SCHEMA_REGISTRY_CTL, a command run with "stop" and "start" (scripts/karapace.sh
// outage passes its own).
type outageRegistry struct {
	url         string
	stop, start func(t *testing.T)
}

func newOutageRegistry(t *testing.T) outageRegistry {
	if u, ctl := os.Getenv("SCHEMA_REGISTRY_URL"), os.Getenv("SCHEMA_REGISTRY_CTL"); u != "" && ctl != "" {
		run := func(arg string) func(t *testing.T) {
			return func(t *testing.T) {
				out, err := exec.Command("bash", "-c", ctl+" "+arg).CombinedOutput()
				require.NoError(t, err, "%s %s: %s", ctl, arg, out)
			}
		}
		return outageRegistry{url: u, stop: run("stop"), start: run("start")}
	}
	reg := avrotest.New()
	t.Cleanup(reg.Close)
	return outageRegistry{url: reg.URL(), stop: func(*testing.T) { reg.Stop() }, start: func(t *testing.T) {
		require.NoError(t, reg.Start())
		reg.AnswerNotFound(3) // as a registry still reading its schemas topic
	}}
}

// TestRuntimeRegistryOutageAndRestart: with the registry down, a record with a schema id the converter has
// not cached fails the task (errors.tolerance=none); once the registry is back (answering 40403 while it
// reloads its schemas) the task restarted with errors.retry.timeout delivers every record (at least once).
func TestRuntimeRegistryOutageAndRestart(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	reg := newOutageRegistry(t)
	topic := kafkatest.UniqueName(t, "avro-outage")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	s1 := connect.StructBuilder().Name("outage.Item").Field("id", connect.Int64Schema).MustBuild()
	s2 := connect.StructBuilder().Name("outage.Item").Field("id", connect.Int64Schema).Field("note", connect.OptionalStringSchema).MustBuild()
	conv := New()
	require.NoError(t, conv.Configure(map[string]string{ConfigURL: reg.url}, false))
	produce := func(s *connect.Schema, from, to int) {
		var msgs []*kgo.Record
		for i := from; i < to; i++ {
			st := connect.NewStruct(s).MustPut("id", int64(i))
			v, err := conv.FromConnectData(topic, nil, s, st)
			require.NoError(t, err)
			msgs = append(msgs, &kgo.Record{Value: v})
		}
		kafkatest.Produce(t, addr, topic, msgs...)
	}
	produce(s1, 0, 10)
	// The second schema is registered while the registry is up; the sink has not seen its id yet.
	_, err := conv.FromConnectData(topic, nil, s2, connect.NewStruct(s2).MustPut("id", int64(-1)))
	require.NoError(t, err)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers": addr, "key.converter": sinktest.StringConverterClass, "value.converter": sinktest.StringConverterClass,
		"offset.flush.interval.ms": "500", "listeners": fmt.Sprintf("http://127.0.0.1:%d", port),
	})
	require.NoError(t, err)
	st := herder.NewStatusTracker(cfg.WorkerID())
	h := herder.NewStandalone(worker.New(cfg, connect.NewRegistry(Plugins(), header.Plugins(), sinktest.Plugins()), st), st)
	require.NoError(t, h.Start(context.Background()))
	t.Cleanup(h.Stop)
	name := kafkatest.UniqueName(t, "avro-outage-sink")
	conf := map[string]string{
		"name": name, "connector.class": sinktest.Class, "tasks.max": "1", "topics": topic, "sink.id": name,
		"value.converter": ClassName, "value.converter.schema.registry.url": reg.url,
	}
	_, _, err = h.PutConnectorConfig(context.Background(), name, conf, "", false)
	require.NoError(t, err)
	sink := sinktest.For(name)
	require.Eventually(t, func() bool { return sink.Count() >= 10 }, 60*time.Second, 20*time.Millisecond)

	reg.stop(t)
	produce(s2, 10, 20) // cached by the producing converter: no registry needed
	down := time.Now()
	taskState := func() herder.State {
		s, _ := h.ConnectorStatus(context.Background(), name)
		if s == nil || len(s.Tasks) != 1 {
			return ""
		}
		return s.Tasks[0].State
	}
	require.Eventually(t, func() bool { return taskState() == herder.StateFailed }, 60*time.Second, 20*time.Millisecond)
	t.Logf("task failed %v after the records needing the registry were produced", time.Since(down).Round(time.Millisecond))
	s, _ := h.ConnectorStatus(context.Background(), name)
	assert.Contains(t, s.Tasks[0].Trace, "Error retrieving Avro value schema for id")
	assert.Equal(t, 10, sink.Count())

	reg.start(t)
	conf["errors.retry.timeout"] = "120000"
	conf["errors.retry.delay.max.ms"] = "2000"
	_, _, err = h.PutConnectorConfig(context.Background(), name, conf, "", true) // reconfiguring restarts the task
	require.NoError(t, err)
	require.Eventually(t, func() bool { return sink.Count() >= 20 }, 180*time.Second, 50*time.Millisecond)
	seen := map[string]int{}
	for _, r := range sink.Records() {
		seen[r.Value]++
	}
	for i := 0; i < 20; i++ {
		want := fmt.Sprintf("Struct{id=%d}", i) // null fields are not rendered (Struct.toString)
		assert.GreaterOrEqual(t, seen[want], 1, "record %d (%s) lost", i, want)
	}
	// At least once: records after the last committed offset may be delivered again after the restart.
	t.Logf("%d records delivered for 20 produced", sink.Count())
	assert.Equal(t, herder.StateRunning, taskState())
}
