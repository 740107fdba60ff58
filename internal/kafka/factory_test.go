package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
)

func producerOptValue(t *testing.T, props map[string]string, opt any) any {
	t.Helper()
	opts, err := ProducerOpts(props)
	require.NoError(t, err)
	cl, err := kgo.NewClient(opts...)
	require.NoError(t, err)
	defer cl.Close()
	return cl.OptValue(opt)
}

// The producer keys map to franz-go's options with the JVM's meaning; a value the JVM would refuse is an error.
func TestProducerOpts(t *testing.T) {
	require.Equal(t, kgo.AllISRAcks(), producerOptValue(t, nil, kgo.RequiredAcks))
	require.Equal(t, false, producerOptValue(t, nil, kgo.DisableIdempotentWrite))
	require.Equal(t, kgo.LeaderAck(), producerOptValue(t, map[string]string{"acks": "1"}, kgo.RequiredAcks))
	require.Equal(t, true, producerOptValue(t, map[string]string{"acks": "1"}, kgo.DisableIdempotentWrite))
	require.Equal(t, 1, producerOptValue(t, map[string]string{"enable.idempotence": "false"}, kgo.MaxProduceRequestsInflightPerBroker))
	require.Equal(t, 2*time.Minute, producerOptValue(t, nil, kgo.RecordDeliveryTimeout))
	require.Equal(t, 5*time.Second, producerOptValue(t, map[string]string{"delivery.timeout.ms": "5000"}, kgo.RecordDeliveryTimeout))
	require.Equal(t, 20*time.Millisecond, producerOptValue(t, map[string]string{"linger.ms": "20"}, kgo.ProducerLinger))
	require.EqualValues(t, 2<<20, producerOptValue(t, map[string]string{"max.request.size": "2097152"}, kgo.ProducerBatchMaxBytes))
	for key, v := range map[string]string{"acks": "2", "compression.type": "brotli", "enable.idempotence": "maybe",
		"max.request.size": "big", "linger.ms": "soon"} {
		_, err := ProducerOpts(map[string]string{key: v})
		require.ErrorContains(t, err, key)
	}
}

// A record keeps its partition or goes by its key's hash; a partition the topic lacks is a fatal ProduceError.
func TestProducerPartitions(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "t"))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	p, err := NewProducer(ctx, map[string]string{"bootstrap.servers": c.ListenAddrs()[0]})
	require.NoError(t, err)
	defer p.Close()

	rec := &connect.ProducerRecord{Topic: "t", Partition: 2, Value: []byte("v")}
	require.NoError(t, p.Produce(ctx, rec))
	keyed := []*connect.ProducerRecord{}
	for range 5 {
		keyed = append(keyed, &connect.ProducerRecord{Topic: "t", Partition: connect.AnyPartition, Key: []byte("same-key"), Value: []byte("k")})
	}
	require.NoError(t, p.Produce(ctx, keyed...))

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	byValue := map[string]map[int32]int{}
	for n := 0; n < 6; {
		fs := cl.PollFetches(ctx)
		require.NoError(t, fs.Err0())
		fs.EachRecord(func(r *kgo.Record) {
			if byValue[string(r.Value)] == nil {
				byValue[string(r.Value)] = map[int32]int{}
			}
			byValue[string(r.Value)][r.Partition]++
			n++
		})
	}
	require.Equal(t, map[int32]int{2: 1}, byValue["v"])
	require.Len(t, byValue["k"], 1, "one key, one partition")

	err = p.Produce(ctx, &connect.ProducerRecord{Topic: "t", Partition: 3, Value: []byte("x")},
		&connect.ProducerRecord{Topic: "t", Partition: 0, Value: []byte("y")})
	var pe *connect.ProduceError
	require.ErrorAs(t, err, &pe)
	require.True(t, pe.Fatal)
	require.Equal(t, 1, pe.Failed)
	require.Equal(t, 2, pe.Total)
	require.EqualValues(t, 3, pe.Partition)
}

func TestEnsureTopic(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	a, err := NewTopicAdmin(ctx, map[string]string{"bootstrap.servers": c.ListenAddrs()[0]})
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.EnsureTopic(ctx, connect.TopicSpec{Name: "new", Partitions: 4, ReplicationFactor: 1, Configs: map[string]string{"cleanup.policy": "compact"}}))
	require.NoError(t, a.EnsureTopic(ctx, connect.TopicSpec{Name: "new", Partitions: 1, ReplicationFactor: 1}), "an existing topic is left as it is")
	td, err := kadm.NewClient(a.cl).ListTopics(ctx, "new")
	require.NoError(t, err)
	require.Len(t, td["new"].Partitions, 4)
}
