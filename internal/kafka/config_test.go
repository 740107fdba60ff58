package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

func consumerOptValue(t *testing.T, props map[string]string, opt any) any {
	t.Helper()
	opts, err := ConsumerOpts(props)
	require.NoError(t, err)
	cl, err := kgo.NewClient(append(opts, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"))...)
	require.NoError(t, err)
	defer cl.Close()
	return cl.OptValue(opt)
}

func TestConsumerOptsFetchSizes(t *testing.T) {
	require.EqualValues(t, DefaultMaxPartitionFetchBytes, consumerOptValue(t, nil, kgo.FetchMaxPartitionBytes))
	require.EqualValues(t, 50<<20, consumerOptValue(t, nil, kgo.FetchMaxBytes)) // the JVM's fetch.max.bytes default
	props := map[string]string{"max.partition.fetch.bytes": "1048576", "fetch.max.bytes": "8388608"}
	require.EqualValues(t, 1<<20, consumerOptValue(t, props, kgo.FetchMaxPartitionBytes))
	require.EqualValues(t, 8<<20, consumerOptValue(t, props, kgo.FetchMaxBytes))

	for _, key := range []string{"fetch.max.bytes", "max.partition.fetch.bytes", "fetch.min.bytes", "session.timeout.ms"} {
		_, err := ConsumerOpts(map[string]string{key: "lots"})
		require.ErrorContains(t, err, key)
	}
}

func TestConsumerOptsGroupKeys(t *testing.T) {
	props := map[string]string{"session.timeout.ms": "10000", "heartbeat.interval.ms": "3000", "max.poll.interval.ms": "60000", "client.id": "c1"}
	require.Equal(t, 10*time.Second, consumerOptValue(t, props, kgo.SessionTimeout))
	require.Equal(t, 3*time.Second, consumerOptValue(t, props, kgo.HeartbeatInterval))
	require.Equal(t, time.Minute, consumerOptValue(t, props, kgo.RebalanceTimeout))
	require.Equal(t, "c1", consumerOptValue(t, props, kgo.ClientID))
	require.Equal(t, 5*time.Minute, consumerOptValue(t, nil, kgo.RebalanceTimeout)) // the JVM's max.poll.interval.ms
	require.Equal(t, 500*time.Millisecond, consumerOptValue(t, nil, kgo.FetchMaxWait))

	_, err := ConsumerOpts(map[string]string{"auto.offset.reset": "sometimes"})
	require.ErrorContains(t, err, "auto.offset.reset")
	_, err = ConsumerOpts(map[string]string{"security.protocol": "SASL_PLAINTEXT"})
	require.ErrorContains(t, err, "sasl.jaas.config")
}

// The JVM's assignor class names map to the same group protocols, in order; an unknown one is refused.
func TestGroupBalancers(t *testing.T) {
	names := func(s string) []string {
		bs, err := groupBalancers(s)
		require.NoError(t, err)
		var out []string
		for _, b := range bs {
			out = append(out, b.ProtocolName())
		}
		return out
	}
	require.Equal(t, []string{"range"}, names(""))
	require.Equal(t, []string{"range", "cooperative-sticky"}, names("org.apache.kafka.clients.consumer.RangeAssignor, org.apache.kafka.clients.consumer.CooperativeStickyAssignor"))
	require.Equal(t, []string{"cooperative-sticky"}, names("org.apache.kafka.clients.consumer.CooperativeStickyAssignor"))
	require.Equal(t, []string{"roundrobin", "sticky"}, names("org.apache.kafka.clients.consumer.RoundRobinAssignor,org.apache.kafka.clients.consumer.StickyAssignor"))
	_, err := groupBalancers("com.example.MyAssignor")
	require.ErrorContains(t, err, "com.example.MyAssignor")
}

func TestRetryBackoffIsTheJVMs(t *testing.T) {
	b := retryBackoff(100*time.Millisecond, time.Second)
	for tries, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 50: time.Second} {
		for range 20 {
			d := b(tries)
			require.GreaterOrEqual(t, d, want*8/10, "try %d", tries)
			require.LessOrEqual(t, d, want*12/10, "try %d", tries)
		}
	}
}
