package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// GroupMembers counts the members of a classic group: one while a consumer is subscribed in it, none once the
// last member left.
func TestGroupMembers(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "ctl"))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	addr := c.ListenAddrs()[0]
	admin, err := NewTopicAdmin(ctx, map[string]string{"bootstrap.servers": addr})
	require.NoError(t, err)
	defer admin.Close()

	member, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("g-coord"), kgo.ConsumeTopics("ctl"))
	require.NoError(t, err)
	pollCtx, stop := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for pollCtx.Err() == nil {
			member.PollFetches(pollCtx)
		}
	}()
	require.Eventually(t, func() bool {
		n, err := admin.GroupMembers(ctx, "g-coord")
		return err == nil && n == 1
	}, 10*time.Second, 50*time.Millisecond, "a subscribed consumer is a member")

	stop()
	<-polled
	member.Close() // leaves the group
	require.Eventually(t, func() bool {
		n, err := admin.GroupMembers(ctx, "g-coord")
		return err == nil && n == 0
	}, 10*time.Second, 50*time.Millisecond, "the last member left")
}
