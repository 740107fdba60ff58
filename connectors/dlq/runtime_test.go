package dlq

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters/bytesconv"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

// TestRuntimeRejectThenReplay runs both connectors in the real runtime (standalone herder, real broker):
// a sink rejects poison records from put(), the runtime sends them to its dead-letter topic with context
// headers (errors.tolerance=all); once the cause is fixed, the dead-letter sink connector replays the
// dead-letter topic into the original topic and the records reach the sink.
func TestRuntimeRejectThenReplay(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers":                 addr,
		"key.converter":                     sinktest.StringConverterClass,
		"value.converter":                   sinktest.StringConverterClass,
		"header.converter":                  HeaderConverterClass,
		"offset.flush.interval.ms":          "500",
		"task.shutdown.graceful.timeout.ms": "10000",
		"listeners":                         fmt.Sprintf("http://127.0.0.1:%d", port),
	})
	require.NoError(t, err)
	st := herder.NewStatusTracker(cfg.WorkerID())
	w := worker.New(cfg, connect.NewRegistry(Plugins(), bytesconv.Plugins(), sinktest.Plugins()), st)
	h := herder.NewStandalone(w, st)
	require.NoError(t, h.Start(context.Background()))
	t.Cleanup(h.Stop)

	origin := kafkatest.UniqueName(t, "orders")
	dlqTopic := kafkatest.UniqueName(t, "orders-dlq")
	kafkatest.CreateTopic(t, addr, origin, 2, nil)
	var msgs []*kgo.Record
	poison := map[string]bool{"k7": true, "k23": true, "k41": true}
	for i := 0; i < 50; i++ {
		k := fmt.Sprintf("k%d", i)
		v := fmt.Sprintf("v%d", i)
		if poison[k] {
			v = "poison"
		}
		msgs = append(msgs, &kgo.Record{Key: []byte(k), Value: []byte(v),
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte(k)}}})
	}
	kafkatest.Produce(t, addr, origin, msgs...)

	sinkName := kafkatest.UniqueName(t, "sink")
	sink := sinktest.For(sinkName)
	sink.RejectValue("poison")
	create := func(name string, props map[string]string) {
		_, created, err := h.PutConnectorConfig(context.Background(), name, props, "", false)
		require.NoError(t, err)
		require.True(t, created)
	}
	create(sinkName, map[string]string{
		"name": sinkName, "connector.class": sinktest.Class, "tasks.max": "1", "topics": origin, "sink.id": sinkName,
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlqTopic,
		"errors.deadletterqueue.topic.replication.factor": "1", "errors.deadletterqueue.context.headers.enable": "true",
	})
	require.Eventually(t, func() bool { return sink.Count() >= 47 }, 60*time.Second, 20*time.Millisecond)
	dead := kafkatest.ConsumeAll(t, addr, dlqTopic, 3, 60*time.Second)
	require.Len(t, dead, 3)
	for _, m := range dead {
		assert.Equal(t, "poison", string(m.Value))
		var origTopic string
		for _, hd := range m.Headers {
			if string(hd.Key) == ErrorTopicHeader {
				origTopic = string(hd.Value)
			}
		}
		assert.Equal(t, origin, origTopic)
	}

	// The cause is fixed; replay the dead-letter topic into the original topic.
	sink.RejectValue("")
	replayName := kafkatest.UniqueName(t, "replay")
	create(replayName, map[string]string{
		"name": replayName, "connector.class": "DeadLetterSink", "tasks.max": "1", "topics": dlqTopic,
		ConfigReplay: "true", ConfigBootstrap: addr,
		"key.converter":    byteArrayConverter,
		"value.converter":  byteArrayConverter,
		"header.converter": HeaderConverterClass,
	})
	require.Eventually(t, func() bool { return sink.Count() >= 50 }, 60*time.Second, 20*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	recs := sink.Records()
	require.Len(t, recs, 50, "each record delivered once: 47 directly, 3 after the replay")
	got := map[string]string{}
	for _, r := range recs {
		got[r.Key] = r.Value
	}
	for i := 0; i < 50; i++ {
		k := fmt.Sprintf("k%d", i)
		want := fmt.Sprintf("v%d", i)
		if poison[k] {
			want = "poison"
		}
		assert.Equal(t, want, got[k], k)
	}
	// The replayed copies in the origin topic carry the original headers only.
	all := kafkatest.ConsumeAll(t, addr, origin, 53, 60*time.Second)
	require.Len(t, all, 53)
	replayed := 0
	for _, m := range all {
		if string(m.Value) != "poison" {
			continue
		}
		replayed++
		require.Len(t, m.Headers, 1, "no __connect.errors.* headers on the replayed copies")
		assert.Equal(t, "trace", string(m.Headers[0].Key))
		assert.Equal(t, string(m.Key), string(m.Headers[0].Value))
	}
	assert.Equal(t, 6, replayed, "3 originals + 3 replayed")
}
