package dlq

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/metrics"
)

type fakeCtx struct {
	props    map[string]string
	reporter connect.ErrantRecordReporter
}

func (f *fakeCtx) Configs() map[string]string                         { return f.props }
func (f *fakeCtx) Offset(map[connect.TopicPartition]int64)            {}
func (f *fakeCtx) Timeout(time.Duration)                              {}
func (f *fakeCtx) Assignment() []connect.TopicPartition               { return nil }
func (f *fakeCtx) Pause(...connect.TopicPartition)                    {}
func (f *fakeCtx) Resume(...connect.TopicPartition)                   {}
func (f *fakeCtx) RequestCommit()                                     {}
func (f *fakeCtx) ErrantRecordReporter() connect.ErrantRecordReporter { return f.reporter }
func (f *fakeCtx) PluginMetrics() connect.PluginMetrics               { return metrics.Plugins }
func (f *fakeCtx) KafkaClients() connect.KafkaClients                 { return kafka.PluginClients{} }

type reporter struct{ got []*connect.SinkRecord }

func (r *reporter) Report(_ context.Context, rec *connect.SinkRecord, _ error) error {
	r.got = append(r.got, rec)
	return nil
}

func cluster(t *testing.T, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topics...))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

func startTask(t *testing.T, props map[string]string, rep connect.ErrantRecordReporter) *Task {
	t.Helper()
	c := &Connector{}
	require.NoError(t, c.Start(props))
	cfgs, err := c.TaskConfigs(1)
	require.NoError(t, err)
	task := c.NewTask().(*Task)
	task.Initialize(&fakeCtx{props: cfgs[0], reporter: rep})
	require.NoError(t, task.Start(cfgs[0]))
	t.Cleanup(func() { _ = task.Stop() })
	return task
}

func consume(t *testing.T, addr, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "got %d of %d records from %s", len(out), want, topic)
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

func rec(topic string, offset int64, key, value []byte, ts int64, hs ...connect.Header) *connect.SinkRecord {
	return &connect.SinkRecord{Topic: topic, Partition: 2, Offset: offset, Key: key, Value: value, Timestamp: ts,
		TimestampType: connect.CreateTime, Headers: hs, KeySchema: connect.OptionalBytesSchema, ValueSchema: connect.OptionalBytesSchema}
}

func hdr(k string, v []byte) connect.Header {
	return connect.Header{Key: k, Schema: connect.OptionalBytesSchema, Value: v}
}

func TestQuarantineKeepsKeyValueHeadersTimestamp(t *testing.T) {
	addr := cluster(t, "quarantine")
	task := startTask(t, map[string]string{"name": "q", ConfigTopic: "quarantine", ConfigBootstrap: addr}, nil)
	in := []*connect.SinkRecord{
		rec("src", 0, []byte("k1"), []byte{0, 1, 2, 0xff}, 1700000000123, hdr("h1", []byte("v1")), hdr("h1", []byte("v1b")), hdr("bin", []byte{0xfe, 0})),
		rec("src", 1, nil, []byte("tombstone-key-less"), 1700000000124),
		rec("src", 2, []byte("k3"), nil, 1700000000125, hdr("nullh", nil)),
	}
	require.NoError(t, task.Put(context.Background(), in))
	require.NoError(t, task.Flush(context.Background(), nil))
	out := consume(t, addr, "quarantine", 3)
	byKey := map[string]*kgo.Record{}
	for _, r := range out {
		byKey[string(r.Value)+"|"+string(r.Key)] = r
	}
	r := byKey["\x00\x01\x02\xff|k1"]
	require.NotNil(t, r)
	assert.Equal(t, int64(1700000000123), r.Timestamp.UnixMilli())
	require.Len(t, r.Headers, 3)
	assert.Equal(t, kgo.RecordHeader{Key: "h1", Value: []byte("v1")}, r.Headers[0])
	assert.Equal(t, kgo.RecordHeader{Key: "h1", Value: []byte("v1b")}, r.Headers[1])
	assert.Equal(t, kgo.RecordHeader{Key: "bin", Value: []byte{0xfe, 0}}, r.Headers[2])
	r = byKey["tombstone-key-less|"]
	require.NotNil(t, r)
	assert.Nil(t, r.Key)
	r = byKey["|k3"]
	require.NotNil(t, r)
	assert.Nil(t, r.Value, "null value stays null (a tombstone)")
	assert.Equal(t, "nullh", r.Headers[0].Key)
	assert.Nil(t, r.Headers[0].Value)
	assert.Equal(t, int64(1700000000125), r.Timestamp.UnixMilli())
}

func TestReplayToOriginTopics(t *testing.T) {
	tests := []struct {
		name  string
		strip string
		want  int // headers on replayed records
	}{
		{"strip error headers (default)", "", 1},
		{"keep error headers", "false", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := cluster(t, "orders", "payments")
			props := map[string]string{"name": "r", ConfigReplay: "true", ConfigBootstrap: addr}
			if tt.strip != "" {
				props[ConfigStripErrorHeaders] = tt.strip
			}
			task := startTask(t, props, nil)
			mk := func(origin string, i int64) *connect.SinkRecord {
				return rec("dlq", i, []byte("k"), []byte(origin), 1000+i, hdr("app", []byte("x")),
					hdr(ErrorTopicHeader, []byte(origin)), hdr("__connect.errors.stage", []byte("VALUE_CONVERTER")))
			}
			require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{mk("orders", 0), mk("payments", 1), mk("orders", 2)}))
			orders := consume(t, addr, "orders", 2)
			payments := consume(t, addr, "payments", 1)
			for _, r := range append(orders, payments...) {
				assert.Equal(t, r.Topic, string(r.Value))
				assert.Len(t, r.Headers, tt.want)
				assert.Equal(t, "app", r.Headers[0].Key)
			}
		})
	}
}

func TestReplayMissingOrigin(t *testing.T) {
	addr := cluster(t, "orders")
	noOrigin := rec("dlq", 0, nil, []byte("v"), 5)
	good := rec("dlq", 1, nil, []byte("orders"), 6, hdr(ErrorTopicHeader, []byte("orders")))

	task := startTask(t, map[string]string{"name": "m", ConfigReplay: "true", ConfigBootstrap: addr}, nil)
	err := task.Put(context.Background(), []*connect.SinkRecord{noOrigin})
	require.Error(t, err)
	assert.True(t, connect.IsDataError(err))

	task = startTask(t, map[string]string{"name": "m", ConfigReplay: "true", ConfigBootstrap: addr, ConfigMissingTopic: "skip"}, nil)
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{noOrigin, good}))

	rep := &reporter{}
	task = startTask(t, map[string]string{"name": "m", ConfigReplay: "true", ConfigBootstrap: addr, ConfigMissingTopic: "report"}, rep)
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{noOrigin, good}))
	require.Len(t, rep.got, 1)
	assert.Same(t, noOrigin, rep.got[0])
	assert.Len(t, consume(t, addr, "orders", 2), 2)
}

func TestPreservePartition(t *testing.T) {
	addr := cluster(t, "target")
	task := startTask(t, map[string]string{"name": "p", ConfigTopic: "target", ConfigBootstrap: addr, ConfigPreservePartition: "true"}, nil)
	r := rec("src", 0, []byte("any"), []byte("v"), 1)
	r.Partition = 1
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{r}))
	out := consume(t, addr, "target", 1)
	assert.EqualValues(t, 1, out[0].Partition)

	r.Partition = 7 // the target has 3 partitions
	err := task.Put(context.Background(), []*connect.SinkRecord{r})
	require.Error(t, err)
	assert.False(t, connect.IsRetriable(err))
}

func TestKeyedRecordsUseJavaDefaultPartitioner(t *testing.T) {
	addr := cluster(t, "keyed")
	task := startTask(t, map[string]string{"name": "k", ConfigTopic: "keyed", ConfigBootstrap: addr}, nil)
	// One key always maps to one partition (murmur2, as the Java client), so its records keep their order.
	var in []*connect.SinkRecord
	for i := 0; i < 6; i++ {
		in = append(in, rec("src", int64(i), []byte("same-key"), []byte{byte(i)}, 1))
	}
	require.NoError(t, task.Put(context.Background(), in))
	out := consume(t, addr, "keyed", 6)
	for i, r := range out {
		assert.Equal(t, out[0].Partition, r.Partition)
		assert.Equal(t, []byte{byte(i)}, r.Value, "order kept within the partition")
	}
}

func TestNonBytesValuesRejected(t *testing.T) {
	addr := cluster(t, "t")
	task := startTask(t, map[string]string{"name": "n", ConfigTopic: "t", ConfigBootstrap: addr}, nil)
	r := rec("src", 0, nil, nil, 1)
	r.Value = int32(5)
	err := task.Put(context.Background(), []*connect.SinkRecord{r})
	require.Error(t, err)
	assert.True(t, connect.IsDataError(err))
	assert.Contains(t, err.Error(), "ByteArrayConverter")

	r = rec("src", 0, nil, []byte("v"), 1, connect.Header{Key: "h", Schema: connect.Int32Schema, Value: int32(1)})
	err = task.Put(context.Background(), []*connect.SinkRecord{r})
	require.Error(t, err)
	assert.True(t, connect.IsDataError(err))

	// StringConverter values are written as UTF-8.
	r = rec("src", 0, nil, nil, 1)
	r.Value = "text"
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{r}))
	assert.Equal(t, []byte("text"), consume(t, addr, "t", 1)[0].Value)
}

func TestConfigValidation(t *testing.T) {
	c := &Connector{}
	err := c.Start(map[string]string{ConfigBootstrap: "127.0.0.1:1"})
	require.Error(t, err, "topic or dlq.replay needed")
	err = c.Start(map[string]string{ConfigTopic: "x"})
	require.Error(t, err, "bootstrap.servers needed")
	require.NoError(t, c.Start(map[string]string{ConfigReplay: "true", ConfigBootstrap: "127.0.0.1:1"}))

	vs := c.Validate(map[string]string{ConfigBootstrap: "b", "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
		"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter", "key.converter": "org.apache.kafka.connect.json.JsonConverter"})
	names := map[string]bool{}
	for _, v := range vs {
		names[v.Name] = true
	}
	assert.Equal(t, map[string]bool{ConfigTopic: true, "header.converter": true, "key.converter": true}, names)

	assert.Empty(t, c.Validate(map[string]string{ConfigTopic: "t", ConfigBootstrap: "b", "header.converter": HeaderConverterClass,
		"key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter"}))
	reg := connect.NewRegistry(Plugins())
	hc, err := reg.NewHeaderConverter(HeaderConverterClass)
	require.NoError(t, err)
	sv, err := hc.ToConnectHeader("t", "h", []byte{0, 1})
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1}, sv.Value)
	b, err := hc.FromConnectHeader("t", "h", sv.Schema, sv.Value)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1}, b)

	p, ok := reg.Lookup("DeadLetterSink")
	require.True(t, ok)
	assert.Equal(t, Class, p.Class)
	_, ok = reg.Lookup("DeadLetterSinkConnector")
	assert.True(t, ok)
}
