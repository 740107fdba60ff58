package worker_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

// TestTaskStatusNote: what a running task notes through connect.TaskStatusNoter (from its own goroutine or
// another) is the trace of its RUNNING status, and an empty note clears it.
func TestTaskStatusNote(t *testing.T) {
	topic, connName := "status-note", "status-note-sink"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	addr := cluster.ListenAddrs()[0]
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers":                 addr,
		"key.converter":                     sinktest.StringConverterClass,
		"value.converter":                   sinktest.StringConverterClass,
		"header.converter":                  "io.connectd.test.TestHeaderConverter",
		"offset.flush.interval.ms":          "200",
		"task.shutdown.graceful.timeout.ms": "2000",
		"listeners":                         fmt.Sprintf("http://127.0.0.1:%d", port),
	})
	require.NoError(t, err)
	status := herder.NewStatusTracker(cfg.WorkerID())
	w := worker.New(cfg, testRegistry(), status)
	h := herder.NewStandalone(w, status)
	require.NoError(t, h.Start(context.Background()))
	t.Cleanup(h.Stop)

	sinkID := fmt.Sprintf("%s-%d", connName, time.Now().UnixNano())
	sink := sinktest.For(sinkID)
	_, _, err = h.PutConnectorConfig(context.Background(), connName, map[string]string{
		"name": connName, "connector.class": sinktest.Class, "tasks.max": "1", "topics": topic, "sink.id": sinkID,
	}, "", false)
	require.NoError(t, err)
	task := herder.ConnectorTaskID{Connector: connName, Task: 0}
	trace := func() (state.State, string) {
		ts, _ := status.Task(task)
		return ts.State, ts.Trace
	}
	produce := func(v string) {
		kafkatest.Produce(t, addr, topic, &kgo.Record{Value: []byte(v)})
	}

	produce(sinktest.StatusNotePrefix + "commits make no progress: the catalog is locked")
	require.Eventually(t, func() bool {
		st, tr := trace()
		return st == state.Running && tr == "commits make no progress: the catalog is locked"
	}, 10*time.Second, 20*time.Millisecond, "the note is the RUNNING status's trace")
	produce("v1")
	require.Eventually(t, func() bool { return sink.Count() >= 2 }, 10*time.Second, 20*time.Millisecond)
	st, tr := trace()
	require.Equal(t, state.Running, st)
	require.Equal(t, "commits make no progress: the catalog is locked", tr, "the note stays until the task clears it")

	produce(sinktest.StatusNotePrefix)
	require.Eventually(t, func() bool {
		st, tr := trace()
		return st == state.Running && tr == ""
	}, 10*time.Second, 20*time.Millisecond, "an empty note clears the trace")
}
