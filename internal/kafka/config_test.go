package kafka

import (
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
)

func TestApplyConsumerFetchSizes(t *testing.T) {
	c := sarama.NewConfig()
	require.NoError(t, ApplyConsumer(c, nil))
	require.EqualValues(t, DefaultMaxPartitionFetchBytes, c.Consumer.Fetch.Default)
	require.EqualValues(t, 50<<20, c.Consumer.Fetch.MaxBytes) // the JVM's fetch.max.bytes default

	c = sarama.NewConfig()
	require.NoError(t, ApplyConsumer(c, map[string]string{"max.partition.fetch.bytes": "1048576", "fetch.max.bytes": "8388608"}))
	require.EqualValues(t, 1<<20, c.Consumer.Fetch.Default)
	require.EqualValues(t, 8<<20, c.Consumer.Fetch.MaxBytes)

	require.Error(t, ApplyConsumer(sarama.NewConfig(), map[string]string{"fetch.max.bytes": "lots"}))
	require.Error(t, ApplyConsumer(sarama.NewConfig(), map[string]string{"max.partition.fetch.bytes": "lots"}))
}
