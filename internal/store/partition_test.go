package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLogPartitionsKeysAsTheJVM: a key's records must land on the partition a JVM worker writes it to, or a
// worker reading the status topic of a mixed cluster sees one task's records of both kinds on two partitions
// and keeps whichever partition it happens to read last. The partitions are those of kafka-clients 4.3.1
// (Utils.toPositive(Utils.murmur2(key)) % partitions).
func TestLogPartitionsKeysAsTheJVM(t *testing.T) {
	addr := bootstrap(t)
	want := map[string][2]int32{ // key: partition of 5, partition of 25
		"status-connector-sink": {3, 8},
		"status-task-sink-0":    {1, 21},
		"status-task-sink-1":    {3, 8},
		"status-task-sink-2":    {3, 13},
		"status-task-sink-3":    {0, 20},
	}
	for i, parts := range []int32{5, 25} {
		topic := uniq("connect-partitions")
		require.NoError(t, EnsureTopic(context.Background(), admin(t, addr), TopicSpec{Name: topic, Property: "status.storage.topic", Partitions: parts, Replication: 1}))
		lg, err := NewLog(clientProps(addr), topic, func(Record) {})
		require.NoError(t, err)
		require.NoError(t, lg.Start(context.Background()))
		for key, p := range want {
			got, _, err := lg.Send(key, []byte("{}"))
			require.NoError(t, err)
			require.Equal(t, p[i], got, "partition of %q among %d", key, parts)
		}
		require.NoError(t, lg.Close())
	}
}
