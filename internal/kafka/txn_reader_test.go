package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/connectd/connectd/connect"
)

// Offsets sent to a transaction count for the group when it commits and not when it aborts; a read_committed
// reader sees the committed transaction's records and never the aborted one's, an uncommitted reader both.
func TestTransactionOffsetsAndReaders(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "ctl"), kfake.SeedTopics(2, "src"))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	props := map[string]string{"bootstrap.servers": c.ListenAddrs()[0]}
	admin, err := NewTopicAdmin(ctx, props)
	require.NoError(t, err)
	defer admin.Close()
	md, err := admin.Metadata(ctx, "src", "missing")
	require.NoError(t, err)
	require.Equal(t, map[string][]int32{"src": {0, 1}}, md.Partitions)
	require.Equal(t, 1, md.Brokers)

	committed, err := NewTopicReader(ctx, props, connect.TopicReaderSpec{Topic: "ctl", ReadCommitted: true})
	require.NoError(t, err)
	defer committed.Close()
	all, err := NewTopicReader(ctx, props, connect.TopicReaderSpec{Topic: "ctl", Partitions: map[int32]connect.ReadPosition{0: {Offset: connect.ReadFromStart}}})
	require.NoError(t, err)
	defer all.Close()

	tx, err := NewTransactionalProducer(ctx, props, "tx-1")
	require.NoError(t, err)
	defer tx.Close()
	send := func(value string, offset int64, commit bool) {
		require.NoError(t, tx.BeginTransaction())
		require.Error(t, tx.SendOffsetsToTransaction(ctx, "g", []connect.TopicPartitionOffset{{Topic: "src", Partition: 0, Offset: 1}}),
			"offsets before any record of the transaction")
		require.NoError(t, tx.Produce(ctx, &connect.ProducerRecord{Topic: "ctl", Partition: 0, Value: []byte(value)}))
		require.NoError(t, tx.SendOffsetsToTransaction(ctx, "g", []connect.TopicPartitionOffset{
			{Topic: "src", Partition: 0, Offset: offset}, {Topic: "src", Partition: 1, Offset: offset + 1}}))
		if commit {
			require.NoError(t, tx.CommitTransaction(ctx))
		} else {
			require.NoError(t, tx.AbortTransaction(ctx))
		}
	}
	send("one", 10, true)
	offs, err := admin.GroupOffsets(ctx, "g", "src")
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 10, 1: 11}, offs)
	send("aborted", 20, false)
	send("two", 30, true)
	offs, err = admin.GroupOffsets(ctx, "g", "src")
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 30, 1: 31}, offs)

	read := func(r *TopicReader, n int) []string {
		var out []string
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for len(out) < n {
			recs, err := r.Poll(pctx)
			require.NoError(t, err, "read so far: %v", out)
			for _, rec := range recs {
				out = append(out, string(rec.Value))
			}
		}
		return out
	}
	require.Equal(t, []string{"one", "two"}, read(committed, 2))
	require.Equal(t, []string{"one", "aborted", "two"}, read(all, 3))

	require.NoError(t, admin.CommitGroupOffsets(ctx, "g-coord", []connect.TopicPartitionOffset{{Topic: "ctl", Partition: 0, Offset: 4}}))
	offs, err = admin.GroupOffsets(ctx, "g-coord", "ctl")
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 4}, offs)
	offs, err = admin.GroupOffsets(ctx, "never", "ctl")
	require.NoError(t, err)
	require.Empty(t, offs)

	// a reader from a time: the records stamped at or after it
	later, err := NewTopicReader(ctx, props, connect.TopicReaderSpec{Topic: "ctl",
		Partitions: map[int32]connect.ReadPosition{0: {After: time.Now().Add(time.Hour)}}})
	require.NoError(t, err)
	defer later.Close()
	p, err := NewProducer(ctx, props)
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, p.Produce(ctx, &connect.ProducerRecord{Topic: "ctl", Partition: 0, Value: []byte("after")}))
	require.Equal(t, []string{"after"}, read(later, 1), "nothing is stamped after the time: the reader starts at the end")

	// a closed reader's Poll returns
	closed, err := NewTopicReader(ctx, props, connect.TopicReaderSpec{Topic: "ctl"})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { _, err := closed.Poll(ctx); done <- err }()
	time.Sleep(100 * time.Millisecond)
	closed.Close()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Poll did not return after Close")
	}
}
