package reconcile

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// inFlightKeys reads exactly the records of each range [From, To), on several partitions, and names their keys.
func TestInFlightKeysReadsRanges(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "t"))
	require.NoError(t, err)
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	for i := 0; i < 400; i++ {
		require.NoError(t, cl.ProduceSync(context.Background(),
			&kgo.Record{Topic: "t", Partition: int32(i % 2), Key: []byte(fmt.Sprintf(`{"id":%d}`, i))}).FirstErr())
	}
	cl.Close()
	got, err := inFlightKeys(context.Background(), c.ListenAddrs()[0], []offsetRange{
		{TP: tp{Topic: "t", Partition: 0}, From: 150, To: 153}, // ids 300, 302, 304
		{TP: tp{Topic: "t", Partition: 1}, From: 0, To: 2},     // ids 1, 3
	}, []string{"id"})
	require.NoError(t, err)
	want := map[string]bool{}
	for _, id := range []string{"300", "302", "304", "1", "3"} {
		want[keyText([]string{"id"}, []string{id})] = true
	}
	require.Equal(t, want, got)
}
