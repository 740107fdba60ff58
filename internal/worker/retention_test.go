package worker_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/metrics"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

// TestTopicRetentionShorterThanReplayWindow: a sink connector's task 0 exports the retention of the topics it
// consumes, and flags the topic whose retention.ms is shorter than connectd.topic.retention.required.ms; an
// unbounded and a compacted topic are not flagged.
func TestTopicRetentionShorterThanReplayWindow(t *testing.T) {
	h, addr := standaloneOnKfake(t, "unused", map[string]string{worker.RetentionRequiredKey: "86400000"}) // one day
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	hour, unbounded, compact := "3600000", "-1", "compact"
	for topic, cfg := range map[string]map[string]*string{
		"ret-short":     {"retention.ms": &hour},
		"ret-unbounded": {"retention.ms": &unbounded},
		"ret-compacted": {"retention.ms": &hour, "cleanup.policy": &compact},
	} {
		_, err := adm.CreateTopic(ctx, 1, 1, cfg, topic)
		require.NoError(t, err)
	}
	const conn = "retention-watch"
	_, _, err = h.PutConnectorConfig(ctx, conn, map[string]string{
		"name": conn, "connector.class": sinktest.Class, "tasks.max": "1", "sink.id": "retention-watch",
		"topics": "ret-short,ret-unbounded,ret-compacted",
	}, "", false)
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		return testutil.CollectAndCount(metrics.TopicRetention, "connectd_sink_topic_retention_seconds") >= 3
	}, 20*time.Second, 50*time.Millisecond, "no retention series")
	require.Equal(t, 3600.0, testutil.ToFloat64(metrics.TopicRetention.WithLabelValues(conn, "ret-short")))
	require.Equal(t, 1.0, testutil.ToFloat64(metrics.TopicRetentionShort.WithLabelValues(conn, "ret-short")))
	require.True(t, math.IsInf(testutil.ToFloat64(metrics.TopicRetention.WithLabelValues(conn, "ret-unbounded")), 1))
	require.Equal(t, 0.0, testutil.ToFloat64(metrics.TopicRetentionShort.WithLabelValues(conn, "ret-unbounded")))
	require.Equal(t, 0.0, testutil.ToFloat64(metrics.TopicRetentionShort.WithLabelValues(conn, "ret-compacted")))
}
