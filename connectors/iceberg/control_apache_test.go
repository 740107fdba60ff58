package iceberg

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// apacheStartCommit is a START_COMMIT event of the Apache Iceberg sink for the group connect-cdc-golden, as
// its own classes encode it (testdata/iceberg/apache-events/capture.sh).
func apacheStartCommit(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "iceberg", "apache-events", "start-commit.b64"))
	require.NoError(t, err)
	ev, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return ev
}

// TestConnectdPayload: connectd-protocol messages travel framed as Apache events (which an Apache sink on the
// same control topic decodes and ignores); plain JSON of earlier versions is still read; an Apache sink event
// of the connector's own group is told apart.
func TestConnectdPayload(t *testing.T) {
	ev := apacheStartCommit(t)
	msg, apache := connectdPayload(ev, "connect-cdc-golden")
	require.True(t, apache)
	require.Nil(t, msg)
	_, apache = connectdPayload(ev, "connect-other")
	require.False(t, apache, "another connector's event")

	own, err := json.Marshal(ctlMsg{Type: ctlStart, Group: "connect-cdc-golden", Round: "r1"})
	require.NoError(t, err)
	framed, err := frameConnectd("connect-cdc-golden", own)
	require.NoError(t, err)
	msg, apache = connectdPayload(framed, "connect-cdc-golden")
	require.False(t, apache)
	require.Equal(t, own, msg)
	msg, apache = connectdPayload(own, "connect-cdc-golden")
	require.False(t, apache)
	require.Equal(t, own, msg, "plain JSON of earlier versions")

	for _, cut := range []int{3, 40, len(framed) - len(own) - 1} {
		msg, apache = connectdPayload(framed[:cut], "connect-cdc-golden")
		require.False(t, apache)
		require.NotEqual(t, own, msg, "cut at %d", cut)
	}
}

// TestControlTopicApacheEventsFailTasks: under the connectd protocol, an Apache sink's event of this connector on
// the control topic (a JVM worker runs some of its tasks) fails the tasks with the reason instead of committing
// half of the connector; another connector's events change nothing.
func TestControlTopicApacheEventsFailTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl-apache")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	ctlTopic := kafkatest.UniqueName(t, "ctl")
	props, _ := sinkProps(t, map[string]string{
		"topics":                             topic,
		"iceberg.tables":                     "shop.events",
		"iceberg.control.coordination":       "topic",
		"iceberg.control.topic":              ctlTopic,
		"iceberg.control.commit.interval-ms": "300",
		"iceberg.connect.group-id":           "connect-cdc-golden",
		"iceberg.control.protocol":           "connectd",
	})
	task := startProcTask(t, props, "a:8083", addr)
	require.NoError(t, task.Open([]connect.TopicPartition{{Topic: topic, Partition: 0}}))
	put := func(off int64) error {
		return task.Put(context.Background(), []*connect.SinkRecord{{Topic: topic, Partition: 0, Offset: off,
			Value: map[string]any{"id": off}}})
	}
	require.NoError(t, put(0))

	cfg := sarama.NewConfig()
	cfg.Producer.Return.Successes = true
	prod, err := sarama.NewSyncProducer([]string{addr}, cfg)
	require.NoError(t, err)
	defer prod.Close()
	send := func(v []byte) {
		_, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: ctlTopic, Key: sarama.StringEncoder("jvm-producer"), Value: sarama.ByteEncoder(v)})
		require.NoError(t, err)
	}
	other := strings.Replace(string(apacheStartCommit(t)), "connect-cdc-golden", "connect-cdc-others", 1)
	send([]byte(other))
	off := int64(1)
	require.Never(t, func() bool { off++; return put(off) != nil }, 2*time.Second, 100*time.Millisecond, "another connector's events")

	send(apacheStartCommit(t))
	var perr error
	require.Eventually(t, func() bool { off++; perr = put(off); return perr != nil }, 60*time.Second, 100*time.Millisecond)
	require.Contains(t, perr.Error(), "carries the Apache Iceberg sink's events for this connector (group connect-cdc-golden)")
}
