package kafkatest_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

func TestUniqueName(t *testing.T) {
	legal := regexp.MustCompile(`^[A-Za-z0-9_-]{1,249}$`)
	tests := []struct {
		name   string
		prefix string
	}{
		{"plain", "orders"},
		{"empty prefix", ""},
		{"odd chars", "a.b/c d:e"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := kafkatest.UniqueName(t, tc.prefix)
			b := kafkatest.UniqueName(t, tc.prefix)
			assert.Regexp(t, legal, a)
			assert.NotEqual(t, a, b)
			assert.Contains(t, a, "TestUniqueName")
		})
	}
}

func TestBroker(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	require.NotEmpty(t, addr)
	require.Equal(t, addr, kafkatest.Bootstrap(t), "Bootstrap is stable within a process")

	t.Run("create produce consume", func(t *testing.T) {
		topic := kafkatest.UniqueName(t, "kt")
		retention := "3600000"
		kafkatest.CreateTopic(t, addr, topic, 3, map[string]*string{"retention.ms": &retention})

		// The topic config was applied.
		results, err := kafkatest.NewAdmin(t, addr).DescribeTopicConfigs(context.Background(), topic)
		require.NoError(t, err)
		require.Len(t, results, 1)
		require.NoError(t, results[0].Err)
		found := false
		for _, e := range results[0].Configs {
			if e.Key == "retention.ms" {
				found = true
				assert.Equal(t, retention, e.MaybeValue())
			}
		}
		assert.True(t, found, "retention.ms in topic config")

		const n = 30
		msgs := make([]*kgo.Record, n)
		for i := range msgs {
			msgs[i] = &kgo.Record{
				Key:     []byte(fmt.Sprintf("k%d", i)),
				Value:   []byte(fmt.Sprintf("v%d", i)),
				Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}},
			}
		}
		kafkatest.Produce(t, addr, topic, msgs...)
		partitions := map[int32]bool{}
		for _, m := range msgs {
			assert.GreaterOrEqual(t, m.Offset, int64(0))
			partitions[m.Partition] = true
		}
		assert.Greater(t, len(partitions), 1, "keys spread over partitions")

		got := kafkatest.ConsumeAll(t, addr, topic, n, 60*time.Second)
		require.Len(t, got, n)
		values := map[string]string{}
		for i, m := range got {
			values[string(m.Key)] = string(m.Value)
			require.Len(t, m.Headers, 1)
			assert.Equal(t, "x", string(m.Headers[0].Value))
			if i > 0 && got[i-1].Partition == m.Partition {
				assert.Less(t, got[i-1].Offset, m.Offset, "sorted by partition, offset")
			}
		}
		for i := 0; i < n; i++ {
			assert.Equal(t, fmt.Sprintf("v%d", i), values[fmt.Sprintf("k%d", i)])
		}

		// Asking for more than there is returns what exists once the timeout passes.
		more := kafkatest.ConsumeAll(t, addr, topic, n+1, 2*time.Second)
		assert.Len(t, more, n)
	})

	t.Run("auto-created topic", func(t *testing.T) {
		topic := kafkatest.UniqueName(t, "auto")
		kafkatest.Produce(t, addr, topic, &kgo.Record{Value: []byte("hello")})
		got := kafkatest.ConsumeAll(t, addr, topic, 1, 60*time.Second)
		require.Len(t, got, 1)
		assert.Equal(t, "hello", string(got[0].Value))
	})

	t.Run("partitioned, read to end", func(t *testing.T) {
		topic := kafkatest.UniqueName(t, "rte")
		kafkatest.CreateTopic(t, addr, topic, 3, nil)
		kafkatest.AwaitTopic(t, addr, topic, 3, 10*time.Second)
		var recs []*kgo.Record
		for i := 0; i < 7; i++ {
			recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))})
		}
		kafkatest.ProducePartitioned(t, addr, topic, recs...)
		for i, r := range recs {
			assert.Equal(t, int32(i%2), r.Partition)
		}
		assert.Equal(t, map[int32]int64{0: 4, 1: 3, 2: 0}, kafkatest.EndOffsets(t, addr, topic))

		got := kafkatest.ReadToEnd(t, addr, topic, 30*time.Second)
		var values []string
		for _, r := range got {
			values = append(values, fmt.Sprintf("%d:%s", r.Partition, r.Value))
		}
		assert.Equal(t, []string{"0:0", "0:2", "0:4", "0:6", "1:1", "1:3", "1:5"}, values)

		// records produced after the call are not waited for
		kafkatest.ProducePartitioned(t, addr, topic, &kgo.Record{Partition: 2, Value: []byte("x")})
		assert.Len(t, kafkatest.ReadToEnd(t, addr, topic, 30*time.Second), 8)
	})

	t.Run("read to end of a transactional topic", func(t *testing.T) {
		topic := kafkatest.UniqueName(t, "txn")
		kafkatest.CreateTopic(t, addr, topic, 1, nil)
		txn := kafkatest.NewClient(t, addr, kgo.TransactionalID(kafkatest.UniqueName(t, "txn")), kgo.DefaultProduceTopic(topic))
		ctx := context.Background()
		require.NoError(t, txn.BeginTransaction())
		require.NoError(t, txn.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}, &kgo.Record{Value: []byte("b")}).FirstErr())
		require.NoError(t, txn.EndTransaction(ctx, kgo.TryCommit))
		require.Eventually(t, func() bool { return kafkatest.EndOffsets(t, addr, topic)[0] == 3 }, 30*time.Second, 50*time.Millisecond,
			"two records and the commit marker")

		got := kafkatest.ReadToEnd(t, addr, topic, 30*time.Second)
		require.Len(t, got, 2)
		assert.Equal(t, "a", string(got[0].Value))
		assert.Equal(t, "b", string(got[1].Value))
	})

	t.Run("committed offsets", func(t *testing.T) {
		topic := kafkatest.UniqueName(t, "off")
		group := kafkatest.UniqueName(t, "grp")
		kafkatest.CreateTopic(t, addr, topic, 2, nil)

		assert.Empty(t, kafkatest.CommittedOffsets(t, addr, group, topic), "nothing committed yet")

		var offsets kadm.Offsets
		offsets.AddOffset(topic, 1, 42, -1)
		resp, err := kafkatest.NewAdmin(t, addr).CommitOffsets(context.Background(), group, offsets)
		require.NoError(t, err)
		require.NoError(t, resp.Error())

		assert.Equal(t, map[int32]int64{1: 42}, kafkatest.CommittedOffsets(t, addr, group, topic))
	})

	t.Run("consumer group", func(t *testing.T) {
		topic := kafkatest.UniqueName(t, "cg")
		group := kafkatest.UniqueName(t, "cg")
		kafkatest.CreateTopic(t, addr, topic, 1, nil)
		kafkatest.Produce(t, addr, topic,
			&kgo.Record{Value: []byte("a")},
			&kgo.Record{Value: []byte("b")})

		cg := kafkatest.NewClient(t, addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		n := 0
		for n < 2 {
			fetches := cg.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatal("consumer group did not receive 2 messages")
			}
			require.NoError(t, fetches.Err())
			n += fetches.NumRecords()
		}
		require.NoError(t, cg.CommitUncommittedOffsets(ctx))
		cg.Close()

		assert.Equal(t, map[int32]int64{0: 2}, kafkatest.CommittedOffsets(t, addr, group, topic))
	})
}
