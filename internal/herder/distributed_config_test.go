package herder

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseDistributedConfig(t *testing.T) {
	base := func() map[string]string {
		return map[string]string{"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s"}
	}
	c, err := ParseDistributedConfig(base())
	require.NoError(t, err)
	require.Equal(t, "sessioned", c.Protocol)
	require.Equal(t, 10*time.Second, c.SessionTimeout)
	require.Equal(t, time.Second, c.HeartbeatInterval)
	require.Equal(t, 60*time.Second, c.RebalanceTimeout)
	require.Equal(t, time.Second, c.MaxDelay)
	require.Equal(t, 3*time.Second, c.SyncTimeout)
	require.Equal(t, int32(1), c.ConfigTopic.Partitions)
	require.True(t, c.ConfigTopic.SinglePartition)
	require.Equal(t, int32(25), c.OffsetTopic.Partitions)
	require.Equal(t, int32(5), c.StatusTopic.Partitions)
	require.Equal(t, int16(3), c.StatusTopic.Replication)
	require.Equal(t, "status.storage.topic", c.StatusTopic.Property)

	p := base()
	p["status.storage.partitions"] = "7"
	p["status.storage.replication.factor"] = "-1"
	p["status.storage.min.insync.replicas"] = "1"
	p["scheduled.rebalance.max.delay.ms"] = "0"
	p["connect.protocol"] = "eager"
	c, err = ParseDistributedConfig(p)
	require.NoError(t, err)
	require.Equal(t, int32(7), c.StatusTopic.Partitions)
	require.Equal(t, int16(-1), c.StatusTopic.Replication)
	require.Equal(t, map[string]string{"min.insync.replicas": "1"}, c.StatusTopic.Configs)
	require.Zero(t, c.MaxDelay)
	require.Equal(t, "eager", c.Protocol)

	for _, k := range []string{"group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"} {
		p := base()
		delete(p, k)
		_, err := ParseDistributedConfig(p)
		require.ErrorContains(t, err, `Missing required configuration "`+k+`"`)
	}
	p = base()
	p["connect.protocol"] = "cooperative"
	_, err = ParseDistributedConfig(p)
	require.ErrorContains(t, err, "connect.protocol")
	p = base()
	p["session.timeout.ms"] = "ten"
	_, err = ParseDistributedConfig(p)
	require.Error(t, err)
}
