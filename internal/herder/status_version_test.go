package herder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
)

// versionedConnector reports different connector and task versions, so a status shows which instance each
// version came from (the JVM asks the running WorkerConnector / WorkerTask for version()).
const versionedClass = "io.connectd.test.VersionedSinkConnector"

type versionedConnector struct{ sinktest.Connector }

func (*versionedConnector) Version() string           { return "7.1.0-conn" }
func (*versionedConnector) NewTask() connect.SinkTask { return &versionedTask{} }

type versionedTask struct{ sinktest.Task }

func (*versionedTask) Version() string { return "7.1.0-task" }

var versionedSinkPlugin = connect.Plugin{Class: versionedClass, Type: connect.PluginSink, New: func() any { return &versionedConnector{} }}

// TestPluginVersionJSON pins the JVM 4.3.1 encoding (ConnectorStateInfo.AbstractState: version is written
// null when unknown and left out only when "undefined"; key order state, worker_id, version, trace). The
// expected strings are what the JVM's Jackson mapper produced for the same TaskState values.
func TestPluginVersionJSON(t *testing.T) {
	cases := []struct {
		name string
		in   herder.TaskState
		want string
	}{
		{"known", herder.TaskState{ID: 0, AbstractState: herder.AbstractState{State: herder.StateRunning, WorkerID: "127.0.0.1:57957", Version: herder.VersionOf("4.3.1")}},
			`{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:57957","version":"4.3.1"}`},
		{"unknown is null", herder.TaskState{ID: 0, AbstractState: herder.AbstractState{State: herder.StateUnassigned, WorkerID: "w:1"}},
			`{"id":0,"state":"UNASSIGNED","worker_id":"w:1","version":null}`},
		{"undefined is left out", herder.TaskState{ID: 0, AbstractState: herder.AbstractState{State: herder.StateRunning, WorkerID: "w:1", Version: herder.VersionOf("undefined")}},
			`{"id":0,"state":"RUNNING","worker_id":"w:1"}`},
		{"empty is kept", herder.TaskState{ID: 0, AbstractState: herder.AbstractState{State: herder.StateRunning, WorkerID: "w:1", Version: herder.VersionOf("")}},
			`{"id":0,"state":"RUNNING","worker_id":"w:1","version":""}`},
		{"trace after version", herder.TaskState{ID: 0, AbstractState: herder.AbstractState{State: herder.StateFailed, WorkerID: "w:1", Version: herder.VersionOf("4.3.1"), Trace: "boom"}},
			`{"id":0,"state":"FAILED","worker_id":"w:1","version":"4.3.1","trace":"boom"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.want, string(b))
			var back herder.TaskState
			require.NoError(t, json.Unmarshal(b, &back))
			if c.name != "undefined is left out" { // a missing key reads back as unknown
				assert.Equal(t, c.in, back)
			}
		})
	}
}

// TestStandaloneStatusVersion: connector and task status carry the running instances' version(), in the
// status bodies and in GET /connectors?expand=status (same ConnectorStateInfo).
func TestStandaloneStatusVersion(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	topic := kafkatest.UniqueName(t, "ver")
	kafkatest.CreateTopic(t, e.addr, topic, 2, nil)
	name := kafkatest.UniqueName(t, "ver-sink")
	cfg := sinkConfig(topic, name, 2)
	cfg["connector.class"] = versionedClass
	e.create(name, cfg)
	st := e.waitState(name, herder.StateRunning, 2)

	b, err := json.Marshal(st)
	require.NoError(t, err)
	wid := e.w.ID()
	assert.JSONEq(t, `{"name":"`+name+`","connector":{"state":"RUNNING","worker_id":"`+wid+`","version":"7.1.0-conn"},`+
		`"tasks":[{"id":0,"state":"RUNNING","worker_id":"`+wid+`","version":"7.1.0-task"},`+
		`{"id":1,"state":"RUNNING","worker_id":"`+wid+`","version":"7.1.0-task"}],"type":"sink"}`, string(b))

	ts, err := e.h.TaskStatus(ctx, herder.ConnectorTaskID{Connector: name, Task: 1})
	require.NoError(t, err)
	b, err = json.Marshal(ts)
	require.NoError(t, err)
	assert.Equal(t, `{"id":1,"state":"RUNNING","worker_id":"`+wid+`","version":"7.1.0-task"}`, string(b))

	// PAUSED is reported by the running instances too, so it keeps the version (JVM onPause)
	require.NoError(t, e.h.PauseConnector(ctx, name))
	st = e.waitState(name, herder.StatePaused, 2)
	assert.Equal(t, herder.VersionOf("7.1.0-conn"), st.Connector.Version)
	assert.Equal(t, herder.VersionOf("7.1.0-task"), st.Tasks[1].Version)

	// STOPPED: the connector instance stays (JVM onStop writes its version), the tasks are gone
	require.NoError(t, e.h.StopConnector(ctx, name))
	st, err = e.h.ConnectorStatus(ctx, name)
	require.NoError(t, err)
	b, err = json.Marshal(st)
	require.NoError(t, err)
	assert.Equal(t, `{"name":"`+name+`","connector":{"state":"STOPPED","worker_id":"`+wid+`","version":"7.1.0-conn"},"tasks":[],"type":"sink"}`, string(b))
}

// TestStatusTrackerVersion: states reported for an instance the worker no longer runs (UNASSIGNED, DESTROYED)
// or never ran (a connector class that cannot be loaded) carry an unknown version, as the JVM writes them.
func TestStatusTrackerVersion(t *testing.T) {
	st := herder.NewStatusTracker("w:1")
	st.SetVersions(fakeVersions{"c": "1.0", "c/0": "1.1"})
	id := state.TaskID{Connector: "c", Task: 0}
	st.ConnectorState("c", state.Running, "")
	st.TaskState(id, state.Failed, "trace")
	info, err := st.ConnectorStateInfo("c", 2)
	require.NoError(t, err)
	assert.Equal(t, herder.VersionOf("1.0"), info.Connector.Version)
	assert.Equal(t, herder.VersionOf("1.1"), info.Tasks[0].Version)
	assert.Equal(t, herder.PluginVersion{}, info.Tasks[1].Version, "no status yet: unknown")

	st.TaskState(id, state.Unassigned, "")
	ts, ok := st.Task(id)
	require.True(t, ok)
	assert.Equal(t, herder.PluginVersion{}, ts.Version)

	st.ConnectorState("missing", state.Failed, "no class")
	info, err = st.ConnectorStateInfo("missing", 0)
	require.NoError(t, err)
	assert.Equal(t, herder.PluginVersion{}, info.Connector.Version)
}

type fakeVersions map[string]string

func (f fakeVersions) ConnectorVersion(name string) *string {
	if v, ok := f[name]; ok {
		return &v
	}
	return nil
}

func (f fakeVersions) TaskVersion(id state.TaskID) *string {
	return f.ConnectorVersion(fmt.Sprintf("%s/%d", id.Connector, id.Task))
}
