package herder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

// TestStandaloneCreatedPausedHasNoTasks: like the JVM's herders, a connector created with initial_state PAUSED
// generates no task configs until it is resumed, so its info and status list no tasks.
func TestStandaloneCreatedPausedHasNoTasks(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	topic := kafkatest.UniqueName(t, "paused")
	kafkatest.CreateTopic(t, e.addr, topic, 2, nil)
	name := kafkatest.UniqueName(t, "paused-sink")
	info, created, err := e.h.PutConnectorConfig(ctx, name, sinkConfig(topic, name, 2), herder.TargetPaused, false)
	require.NoError(t, err)
	require.True(t, created)
	assert.Empty(t, info.Tasks)
	st := e.waitState(name, herder.StatePaused, 0)
	raw, err := json.Marshal(st.Tasks)
	require.NoError(t, err)
	assert.JSONEq(t, `[]`, string(raw))
	tasks, err := e.h.TaskConfigs(ctx, name)
	require.NoError(t, err)
	assert.Empty(t, tasks)

	require.NoError(t, e.h.ResumeConnector(ctx, name))
	e.waitState(name, herder.StateRunning, 2)
	// paused once running, the tasks stay (paused)
	require.NoError(t, e.h.PauseConnector(ctx, name))
	e.waitState(name, herder.StatePaused, 2)
}

// TestSinkOffsetsOfNeverCommittedGroup: GET /connectors/{c}/offsets of a sink connector whose consumer group
// never committed answers an empty list, on kfake (which answers GROUP_ID_NOT_FOUND) as on a real broker.
func TestSinkOffsetsOfNeverCommittedGroup(t *testing.T) {
	check := func(t *testing.T, addr string) {
		topic := kafkatest.UniqueName(t, "nocommit")
		kafkatest.CreateTopic(t, addr, topic, 1, nil)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := l.Addr().(*net.TCPAddr).Port
		require.NoError(t, l.Close())
		cfg, err := worker.ParseConfig(map[string]string{
			"bootstrap.servers": addr,
			"key.converter":     sinktest.StringConverterClass,
			"value.converter":   sinktest.StringConverterClass,
			"listeners":         fmt.Sprintf("http://127.0.0.1:%d", port),
		})
		require.NoError(t, err)
		st := herder.NewStatusTracker(cfg.WorkerID())
		h := herder.NewStandalone(worker.New(cfg, testRegistry(), st), st)
		require.NoError(t, h.Start(context.Background()))
		t.Cleanup(h.Stop)
		name := kafkatest.UniqueName(t, "nocommit-sink")
		_, _, err = h.PutConnectorConfig(context.Background(), name, sinkConfig(topic, name, 1), herder.TargetStopped, false)
		require.NoError(t, err)
		offs, err := h.ConnectorOffsets(context.Background(), name)
		require.NoError(t, err)
		raw, err := json.Marshal(offs)
		require.NoError(t, err)
		assert.JSONEq(t, `{"offsets":[]}`, string(raw))
	}
	t.Run("kfake", func(t *testing.T) {
		cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
		require.NoError(t, err)
		t.Cleanup(cluster.Close)
		check(t, cluster.ListenAddrs()[0])
	})
	t.Run("broker", func(t *testing.T) { check(t, kafkatest.Bootstrap(t)) })
}

// TestStandaloneStatusNote: a connector's connect.StatusNoter note is the trace of its RUNNING and PAUSED status.
func TestStandaloneStatusNote(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	topic := kafkatest.UniqueName(t, "note")
	kafkatest.CreateTopic(t, e.addr, topic, 1, nil)
	name := kafkatest.UniqueName(t, "note-sink")
	cfg := sinkConfig(topic, name, 1)
	cfg["status.note"] = "port 8443 mapped to 9440"
	e.create(name, cfg)
	st := e.waitState(name, herder.StateRunning, 1)
	assert.Equal(t, "port 8443 mapped to 9440", st.Connector.Trace)
	assert.Empty(t, st.Tasks[0].Trace)
	require.NoError(t, e.h.PauseConnector(ctx, name))
	st = e.waitState(name, herder.StatePaused, 1)
	assert.Equal(t, "port 8443 mapped to 9440", st.Connector.Trace)
}
