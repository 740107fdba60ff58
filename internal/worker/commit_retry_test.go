package worker_test

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

// TestSinkCommitRetriedAfterFailedOffsetCommit: when the OffsetCommit carrying a partition's last
// offset fails (the coordinator answers COORDINATOR_NOT_AVAILABLE, a retriable error), the offset must
// still end up committed although the topic is idle and no offset changes any more; otherwise the
// records would be redelivered after a restart.
func TestSinkCommitRetriedAfterFailedOffsetCommit(t *testing.T) {
	const n = 5
	topic := "commit-retry"
	connName := "commit-retry-sink"
	group := "connect-" + connName

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	addr := cluster.ListenAddrs()[0]

	// Fail the first OffsetCommit of the group that carries the final offset n; let all others through.
	var failed atomic.Bool
	var commits, commitsAfterFail atomic.Int32
	cluster.ControlKey(int16(kmsg.OffsetCommit), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		req := kreq.(*kmsg.OffsetCommitRequest)
		if req.Group != group {
			return nil, nil, false
		}
		commits.Add(1)
		if failed.Load() {
			commitsAfterFail.Add(1)
			return nil, nil, false
		}
		final := false
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				if (rt.Topic == topic || rt.Topic == "") && rp.Offset == n { // OffsetCommit v10+ names the topic by its id
					final = true
				}
			}
		}
		if !final {
			return nil, nil, false
		}
		failed.Store(true)
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Version = req.Version
		for _, rt := range req.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.CoordinatorNotAvailable.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})

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

	msgs := make([]*kgo.Record, 0, n)
	for i := 0; i < n; i++ {
		msgs = append(msgs, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	kafkatest.Produce(t, addr, topic, msgs...)

	sinkID := fmt.Sprintf("%s-%d", connName, time.Now().UnixNano())
	sink := sinktest.For(sinkID)
	_, created, err := h.PutConnectorConfig(context.Background(), connName, map[string]string{
		"name": connName, "connector.class": sinktest.Class, "tasks.max": "1", "topics": topic, "sink.id": sinkID,
	}, "", false)
	require.NoError(t, err)
	require.True(t, created)

	require.Eventually(t, func() bool { return sink.Count() >= n }, 10*time.Second, 20*time.Millisecond)
	require.Eventually(t, failed.Load, 5*time.Second, 20*time.Millisecond, "no OffsetCommit carrying offset %d was seen", n)

	// One client for the checks (kafkatest.CommittedOffsets fails the test from its own goroutine).
	admin := kafkatest.NewAdmin(t, addr)
	committed := func() int64 {
		resp, err := admin.FetchOffsetsForTopics(context.Background(), group, topic)
		if err != nil {
			return -2
		}
		b, ok := resp.Lookup(topic, 0)
		if !ok || b.Err != nil {
			return -2
		}
		return b.At
	}
	// The topic is idle now; only a re-sent commit can move the committed offset to n.
	var last int64
	ok := assertEventually(func() bool { last = committed(); return last == n }, 4*time.Second, 50*time.Millisecond)
	require.True(t, ok, "committed offset of %s stayed at %d, want %d: the failed OffsetCommit was never re-sent "+
		"(%d OffsetCommits for the group, %d after the injected failure)", group, last, n, commits.Load(), commitsAfterFail.Load())
}

func assertEventually(cond func() bool, timeout, tick time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(tick)
	}
}
