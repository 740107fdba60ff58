package worker_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/lz4test"
	"github.com/connectd/connectd/internal/testutil/plugintest"
	"github.com/connectd/connectd/internal/worker"
)

// TestRecycledRecordsReadAsProduced: a task that takes JSON values unconverted, whose records go back to
// the consumer's pool after each put, is given every record as produced (key and value bytes), in lz4
// batches of both producers' frames that later fetches decode into the memory of earlier ones.
func TestRecycledRecordsReadAsProduced(t *testing.T) {
	const topic, n = "recycled", 30_000
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topic))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	addr := cluster.ListenAddrs()[0]
	ctx := context.Background()
	for p, compressor := range []kgo.Opt{kgo.ProducerBatchCompression(kgo.Lz4Compression()), kgo.WithCompressor(lz4test.JVMCompressor{})} {
		pr, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), compressor,
			kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(64<<10), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
		require.NoError(t, err)
		for i := p; i < n; i += 2 {
			pr.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: recycledValue(i)}, func(_ *kgo.Record, err error) { require.NoError(t, err) })
		}
		require.NoError(t, pr.Flush(ctx))
		pr.Close()
	}
	cfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers":              addr,
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
		"offset.flush.interval.ms":       "1000",
	})
	require.NoError(t, err)
	w := worker.New(cfg, plugintest.Registry(recycleCheckPlugin), &taskStates{})
	defer w.Stop()
	props := map[string]string{"name": "recycled", "connector.class": recycleCheckClass, "tasks.max": "1", "topics": topic, "consumer.override.max.poll.records": "700"}
	require.NoError(t, w.StartTask(state.TaskID{Connector: "recycled"}, props, props, state.Started))
	require.Eventually(t, func() bool { return recycleChecked.seen.Load() >= n }, time.Minute, 20*time.Millisecond)
	recycleChecked.mu.Lock()
	defer recycleChecked.mu.Unlock()
	require.Empty(t, recycleChecked.bad)
	require.Equal(t, int64(n), recycleChecked.seen.Load())
}

func recycledValue(i int) []byte {
	return fmt.Appendf(nil, `{"id":%d,"note":"%s"}`, i, bytes.Repeat([]byte{'a' + byte(i%26)}, 50+i%500))
}

const recycleCheckClass = "io.connectd.test.RecycleCheckSinkConnector"

var recycleCheckPlugin = connect.Plugin{Class: recycleCheckClass, Type: connect.PluginSink, New: func() any {
	return &oneTaskConnector{newTask: func() connect.SinkTask { return &recycleCheckTask{} }}
}}

// recycleChecked is what the task saw: how many records, and those that did not read as produced.
var recycleChecked recycleLog

type recycleLog struct {
	seen atomic.Int64
	mu   sync.Mutex
	bad  []string
}

func (l *recycleLog) note(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.bad) < 10 {
		l.bad = append(l.bad, s)
	}
}

type recycleCheckTask struct{}

func (t *recycleCheckTask) Version() string                      { return "1" }
func (t *recycleCheckTask) Initialize(connect.SinkTaskContext)   {}
func (t *recycleCheckTask) Start(map[string]string) error        { return nil }
func (t *recycleCheckTask) Open([]connect.TopicPartition) error  { return nil }
func (t *recycleCheckTask) Close([]connect.TopicPartition) error { return nil }
func (t *recycleCheckTask) Put(_ context.Context, recs []*connect.SinkRecord) error {
	for _, r := range recs {
		key, _ := r.Key.(string)
		i, err := strconv.Atoi(key)
		jv, ok := r.Value.(*jsonvalue.Value)
		switch {
		case err != nil:
			recycleChecked.note(fmt.Sprintf("offset %d/%d: key %q", r.Partition, r.Offset, key))
		case !ok:
			recycleChecked.note(fmt.Sprintf("key %d: a %T value", i, r.Value))
		case !bytes.Equal(jv.Bytes, recycledValue(i)):
			recycleChecked.note(fmt.Sprintf("key %d: value %q", i, jv.Bytes))
		}
	}
	recycleChecked.seen.Add(int64(len(recs)))
	return nil
}
func (t *recycleCheckTask) Flush(context.Context, connect.ConsumedOffsets) error { return nil }
func (t *recycleCheckTask) Stop() error                                          { return nil }
func (t *recycleCheckTask) AcceptsJSONValues() bool                              { return true }
