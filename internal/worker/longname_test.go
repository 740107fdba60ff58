package worker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

func standaloneOnKfake(t *testing.T, topic string, extra map[string]string) (*herder.Standalone, string) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	addr := cluster.ListenAddrs()[0]
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	props := map[string]string{
		"bootstrap.servers":                 addr,
		"key.converter":                     sinktest.StringConverterClass,
		"value.converter":                   sinktest.StringConverterClass,
		"header.converter":                  "io.connectd.test.TestHeaderConverter",
		"offset.flush.interval.ms":          "200",
		"task.shutdown.graceful.timeout.ms": "2000",
		"listeners":                         fmt.Sprintf("http://127.0.0.1:%d", port),
	}
	for k, v := range extra {
		props[k] = v
	}
	cfg, err := worker.ParseConfig(props)
	require.NoError(t, err)
	status := herder.NewStatusTracker(cfg.WorkerID())
	w := worker.New(cfg, testRegistry(), status)
	h := herder.NewStandalone(w, status)
	require.NoError(t, h.Start(context.Background()))
	t.Cleanup(h.Stop)
	return h, addr
}

// A connector whose name makes its clients' ids longer than the clients allow (256 bytes) runs: the ids
// are shortened with a hash of the whole.
func TestConnectorWith300ByteNameRuns(t *testing.T) {
	const n = 3
	topic := "long-name"
	h, addr := standaloneOnKfake(t, topic, nil)
	connName := strings.Repeat("n", 290) + "-long-name"
	require.Len(t, connName, 300)
	msgs := make([]*kgo.Record, 0, n)
	for i := 0; i < n; i++ {
		msgs = append(msgs, &kgo.Record{Value: []byte(fmt.Sprintf("v%d", i))})
	}
	kafkatest.Produce(t, addr, topic, msgs...)
	sinkID := fmt.Sprintf("long-%d", time.Now().UnixNano())
	sink := sinktest.For(sinkID)
	_, created, err := h.PutConnectorConfig(context.Background(), connName, map[string]string{
		"name": connName, "connector.class": sinktest.Class, "tasks.max": "1", "topics": topic, "sink.id": sinkID,
		"errors.tolerance": "all", "errors.deadletterqueue.topic.name": "long-name-dlq", "errors.deadletterqueue.topic.replication.factor": "1",
	}, "", false)
	require.NoError(t, err)
	require.True(t, created)
	require.Eventually(t, func() bool { return sink.Count() >= n }, 15*time.Second, 20*time.Millisecond, "the task never consumed")
	st, err := h.ConnectorStatus(context.Background(), connName)
	require.NoError(t, err)
	require.Len(t, st.Tasks, 1)
	require.Equal(t, "RUNNING", string(st.Tasks[0].State), "task trace: %s", st.Tasks[0].Trace)
}

// Client ids past the limit are cut to it with a stable hash; shorter ones are kept.
func TestClientIDFits(t *testing.T) {
	short := "connector-consumer-sink-0"
	require.Equal(t, short, kafka.ClientID(short))
	a := "connector-consumer-" + strings.Repeat("é", 150) + "-0"
	b := "connector-consumer-" + strings.Repeat("é", 150) + "-1"
	require.LessOrEqual(t, len(kafka.ClientID(a)), kafka.MaxClientIDBytes)
	require.Equal(t, kafka.ClientID(a), kafka.ClientID(a), "stable")
	require.NotEqual(t, kafka.ClientID(a), kafka.ClientID(b), "tasks of one connector stay apart")
	require.True(t, strings.HasPrefix(kafka.ClientID(a), "connector-consumer-é"))
	require.True(t, strings.ToValidUTF8(kafka.ClientID(a), "?") == kafka.ClientID(a), "cut on a character boundary")
}

// tasks.max above the worker's bound is refused at create, naming the key.
func TestTasksMaxBoundedPerWorker(t *testing.T) {
	h, _ := standaloneOnKfake(t, "bounded", map[string]string{worker.TasksMaxPerWorkerKey: "50"})
	_, _, err := h.PutConnectorConfig(context.Background(), "many", map[string]string{
		"name": "many", "connector.class": sinktest.Class, "tasks.max": "100000", "topics": "bounded", "sink.id": "bounded-many",
	}, "", false)
	require.Error(t, err)
	var he *herder.RestError
	if errors.As(err, &he) {
		require.Equal(t, 400, he.Status)
	}
	require.Contains(t, err.Error(), "tasks.max")
	require.Contains(t, err.Error(), "Value must be no more than 50")
	_, created, err := h.PutConnectorConfig(context.Background(), "some", map[string]string{
		"name": "some", "connector.class": sinktest.Class, "tasks.max": "50", "topics": "bounded", "sink.id": "bounded-some",
	}, "", false)
	require.NoError(t, err)
	require.True(t, created)
}
