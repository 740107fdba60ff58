package kafkatest_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		admin, err := sarama.NewClusterAdmin([]string{addr}, kafkatest.NewConfig())
		require.NoError(t, err)
		defer admin.Close()
		results, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: topic}}, sarama.DescribeConfigsOptions{})
		require.NoError(t, err)
		require.Len(t, results, 1)
		require.Zero(t, results[0].ErrorCode, results[0].ErrorMsg)
		found := false
		for _, e := range results[0].Configs {
			if e.Name == "retention.ms" {
				found = true
				assert.Equal(t, retention, e.Value)
			}
		}
		assert.True(t, found, "retention.ms in topic config")

		const n = 30
		msgs := make([]*sarama.ProducerMessage, n)
		for i := range msgs {
			msgs[i] = &sarama.ProducerMessage{
				Key:     sarama.StringEncoder(fmt.Sprintf("k%d", i)),
				Value:   sarama.StringEncoder(fmt.Sprintf("v%d", i)),
				Headers: []sarama.RecordHeader{{Key: []byte("h"), Value: []byte("x")}},
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
		kafkatest.Produce(t, addr, topic, &sarama.ProducerMessage{Value: sarama.StringEncoder("hello")})
		got := kafkatest.ConsumeAll(t, addr, topic, 1, 60*time.Second)
		require.Len(t, got, 1)
		assert.Equal(t, "hello", string(got[0].Value))
	})

	t.Run("committed offsets", func(t *testing.T) {
		topic := kafkatest.UniqueName(t, "off")
		group := kafkatest.UniqueName(t, "grp")
		kafkatest.CreateTopic(t, addr, topic, 2, nil)

		assert.Empty(t, kafkatest.CommittedOffsets(t, addr, group, topic), "nothing committed yet")

		client, err := sarama.NewClient([]string{addr}, kafkatest.NewConfig())
		require.NoError(t, err)
		defer client.Close()
		om, err := sarama.NewOffsetManagerFromClient(group, client)
		require.NoError(t, err)
		pom, err := om.ManagePartition(topic, 1)
		require.NoError(t, err)
		pom.MarkOffset(42, "")
		om.Commit()
		require.NoError(t, pom.Close())
		require.NoError(t, om.Close())

		assert.Equal(t, map[int32]int64{1: 42}, kafkatest.CommittedOffsets(t, addr, group, topic))
	})

	t.Run("consumer group", func(t *testing.T) {
		topic := kafkatest.UniqueName(t, "cg")
		group := kafkatest.UniqueName(t, "cg")
		kafkatest.CreateTopic(t, addr, topic, 1, nil)
		kafkatest.Produce(t, addr, topic,
			&sarama.ProducerMessage{Value: sarama.StringEncoder("a")},
			&sarama.ProducerMessage{Value: sarama.StringEncoder("b")})

		cg, err := sarama.NewConsumerGroup([]string{addr}, group, kafkatest.NewConfig())
		require.NoError(t, err)
		h := &markAll{want: 2, done: make(chan struct{})}
		ctx, cancel := contextWithTimeout(60 * time.Second)
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			for ctx.Err() == nil {
				if err := cg.Consume(ctx, []string{topic}, h); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
		select {
		case <-h.done:
		case <-ctx.Done():
			t.Fatal("consumer group did not receive 2 messages")
		}
		cancel()
		require.NoError(t, <-errc)
		require.NoError(t, cg.Close()) // commits the marked offsets

		assert.Equal(t, map[int32]int64{0: 2}, kafkatest.CommittedOffsets(t, addr, group, topic))
	})
}
