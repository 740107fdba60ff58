package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/worker"
)

// The offsets REST admin (GET, PATCH and DELETE /connectors/{n}/offsets, GET /'s cluster id) against an
// in-process broker: committed offsets read back, altered, reset per partition, and the group deleted.
func TestGroupOffsetsAdmin(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	require.NoError(t, err)
	defer c.Close()
	cfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers": c.ListenAddrs()[0],
		"key.converter":     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":   "org.apache.kafka.connect.storage.StringConverter",
	})
	require.NoError(t, err)
	w := worker.New(cfg, testRegistry(), nil)
	const group = "connect-sink"

	id, err := w.ClusterID()
	require.NoError(t, err)
	require.NotEmpty(t, id)

	got, err := w.GroupOffsets(group)
	require.NoError(t, err)
	require.Empty(t, got, "no group yet")
	empty, err := w.GroupIsEmpty(group)
	require.NoError(t, err)
	require.True(t, empty)

	at := func(n int64) *int64 { return &n }
	tp0, tp1 := connect.TopicPartition{Topic: "t", Partition: 0}, connect.TopicPartition{Topic: "t", Partition: 1}
	require.NoError(t, w.AlterGroupOffsets(group, map[connect.TopicPartition]*int64{tp0: at(5), tp1: at(7)}))
	got, err = w.GroupOffsets(group)
	require.NoError(t, err)
	require.Equal(t, map[connect.TopicPartition]int64{tp0: 5, tp1: 7}, got)

	require.NoError(t, w.AlterGroupOffsets(group, map[connect.TopicPartition]*int64{tp0: nil, tp1: at(9)}))
	got, err = w.GroupOffsets(group)
	require.NoError(t, err)
	require.Equal(t, map[connect.TopicPartition]int64{tp1: 9}, got, "a nil offset resets the partition")

	// a member in the group: not empty
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup(group), kgo.ConsumeTopics("t"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		cl.PollFetches(ctx)
		empty, err := w.GroupIsEmpty(group)
		return err == nil && !empty
	}, 20*time.Second, 100*time.Millisecond)
	cl.Close()

	require.NoError(t, w.DeleteGroup(group))
	got, err = w.GroupOffsets(group)
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, w.DeleteGroup(group), "a missing group is fine")
}
