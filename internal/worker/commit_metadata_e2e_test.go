package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
)

const metadataSinkClass = "io.connectd.test.MetadataSinkConnector"

var metadataSinkPlugin = connect.Plugin{Class: metadataSinkClass, Type: connect.PluginSink, New: func() any { return &metadataSink{} }}

// metadataSink is the recording sink whose preCommit attaches metadata to partition 0's offset only.
type metadataSink struct{ sinktest.Connector }

func (c *metadataSink) NewTask() connect.SinkTask { return &metadataTask{} }

type metadataTask struct{ sinktest.Task }

func (t *metadataTask) PreCommit(ctx context.Context, current map[connect.TopicPartition]connect.OffsetAndMetadata) (map[connect.TopicPartition]connect.OffsetAndMetadata, error) {
	if err := t.Flush(ctx, current); err != nil {
		return nil, err
	}
	out := make(map[connect.TopicPartition]connect.OffsetAndMetadata, len(current))
	for tp, om := range current {
		if tp.Partition == 0 {
			om.Metadata = fmt.Sprintf("put up to %d", om.Offset)
		}
		out[tp] = om
	}
	return out, nil
}

// TestSinkCommitMetadata: offsets are committed with the metadata preCommit returned, and with empty
// metadata where it returned none, as the JVM worker commits them (the Kafka client's own default would
// be its member id), on the broker's current OffsetCommit version, which names topics by id.
func TestSinkCommitMetadata(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "in")
	kafkatest.CreateTopic(t, addr, topic, 2, nil)
	var msgs []*kgo.Record
	for i := 0; i < 20; i++ {
		msgs = append(msgs, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint(i))})
	}
	kafkatest.Produce(t, addr, topic, msgs...)
	connName := kafkatest.UniqueName(t, "conn")

	w, id, _, sink := startSinkTaskOf(t, metadataSinkClass, addr, topic, connName, time.Hour)
	require.Eventually(t, func() bool { return sink.Count() == len(msgs) }, 60*time.Second, 20*time.Millisecond)
	w.StopTasks([]state.TaskID{id})

	want := map[int32]int64{}
	for _, r := range sink.Records() {
		want[r.Partition] = max(want[r.Partition], r.Offset+1)
	}
	require.Len(t, want, 2, "records on both partitions")

	resp, err := kafkatest.NewAdmin(t, addr).FetchOffsetsForTopics(context.Background(), "connect-"+connName, topic)
	require.NoError(t, err)
	for p, wantMeta := range map[int32]string{0: fmt.Sprintf("put up to %d", want[0]), 1: ""} {
		b, ok := resp.Lookup(topic, p)
		require.True(t, ok, "partition %d", p)
		require.NoError(t, b.Err, "partition %d", p)
		require.Equal(t, want[p], b.At, "committed offset of partition %d", p)
		require.Equal(t, wantMeta, b.Metadata, "committed metadata of partition %d", p)
	}
}
