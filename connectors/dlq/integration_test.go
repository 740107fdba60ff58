package dlq

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters/bytesconv"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

// toSinkRecords converts consumed messages as the runtime does with ByteArrayConverter for the key,
// the value and the headers.
func toSinkRecords(t *testing.T, msgs []*kgo.Record) []*connect.SinkRecord {
	t.Helper()
	conv := bytesconv.ByteArrayConverter{}
	var out []*connect.SinkRecord
	for _, m := range msgs {
		k, err := conv.ToConnectData(m.Topic, nil, m.Key)
		require.NoError(t, err)
		v, err := conv.ToConnectData(m.Topic, nil, m.Value)
		require.NoError(t, err)
		var hs connect.Headers
		for _, h := range m.Headers {
			hv, err := conv.ToConnectHeader(m.Topic, string(h.Key), h.Value)
			require.NoError(t, err)
			hs = append(hs, connect.Header{Key: string(h.Key), Schema: hv.Schema, Value: hv.Value})
		}
		out = append(out, &connect.SinkRecord{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset,
			KeySchema: k.Schema, Key: k.Value, ValueSchema: v.Schema, Value: v.Value,
			Timestamp: m.Timestamp.UnixMilli(), TimestampType: connect.CreateTime, Headers: hs,
			OriginalTopic: m.Topic, OriginalPartition: m.Partition, OriginalOffset: m.Offset})
	}
	return out
}

// TestReplayDLQOnRealBroker: a dead-letter topic as the runtime writes it (original key, value, headers
// and timestamp plus __connect.errors.* context headers) is replayed into its origin topic, each record
// to its original partition, with the context headers removed and everything else byte-identical.
func TestReplayDLQOnRealBroker(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	dlqTopic := kafkatest.UniqueName(t, "dlq")
	origin := kafkatest.UniqueName(t, "orders")
	kafkatest.CreateTopic(t, addr, dlqTopic, 1, nil)
	kafkatest.CreateTopic(t, addr, origin, 3, nil)

	const n = 30
	base := time.UnixMilli(1700000000000)
	var msgs []*kgo.Record
	for i := 0; i < n; i++ {
		m := &kgo.Record{
			Key:       []byte(fmt.Sprintf("key-%d", i)),
			Value:     []byte{0, byte(i), 0xff}, // e.g. an undecodable Avro payload
			Timestamp: base.Add(time.Duration(i) * time.Second),
			Headers: []kgo.RecordHeader{
				{Key: "trace-id", Value: []byte("t" + strconv.Itoa(i))},
				{Key: ErrorTopicHeader, Value: []byte(origin)},
				{Key: ErrorPartitionHeader, Value: []byte(strconv.Itoa(i % 3))},
				{Key: "__connect.errors.offset", Value: []byte(strconv.Itoa(i))},
				{Key: "__connect.errors.stage", Value: []byte("VALUE_CONVERTER")},
			},
		}
		if i == 7 {
			m.Value = nil // a tombstone stays a tombstone
		}
		msgs = append(msgs, m)
	}
	kafkatest.Produce(t, addr, dlqTopic, msgs...)
	consumed := kafkatest.ConsumeAll(t, addr, dlqTopic, n, 60*time.Second)
	require.Len(t, consumed, n)

	task := startTask(t, map[string]string{"name": "replay", ConfigReplay: "true", ConfigPreservePartition: "true",
		ConfigBootstrap: addr, "producer.acks": "all", "producer.compression.type": "lz4"}, nil)
	recs := toSinkRecords(t, consumed)
	require.NoError(t, task.Put(context.Background(), recs[:n/2]))
	require.NoError(t, task.Put(context.Background(), recs[n/2:]))
	require.NoError(t, task.Flush(context.Background(), nil))

	replayed := kafkatest.ConsumeAll(t, addr, origin, n, 60*time.Second)
	require.Len(t, replayed, n)
	seen := map[string]bool{}
	for _, r := range replayed {
		var i int
		_, err := fmt.Sscanf(string(r.Key), "key-%d", &i)
		require.NoError(t, err)
		seen[string(r.Key)] = true
		assert.EqualValues(t, i%3, r.Partition, "original partition kept")
		assert.Equal(t, base.Add(time.Duration(i)*time.Second).UnixMilli(), r.Timestamp.UnixMilli())
		if i == 7 {
			assert.Nil(t, r.Value)
		} else {
			assert.Equal(t, []byte{0, byte(i), 0xff}, r.Value)
		}
		require.Len(t, r.Headers, 1, "context headers stripped")
		assert.Equal(t, "trace-id", string(r.Headers[0].Key))
		assert.Equal(t, "t"+strconv.Itoa(i), string(r.Headers[0].Value))
	}
	assert.Len(t, seen, n)
}
