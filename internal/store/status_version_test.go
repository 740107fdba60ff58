package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/state"
)

// TestStatusRecordVersion: the status-topic values of KIP-891 workers. The inputs are records a JVM 4.3.1
// distributed worker wrote (FileStreamSinkConnector): the "version" key is always there, null once the
// instance is gone (UNASSIGNED). Ours are written the same way, key for key, and pre-4.1 records without
// the key read back as unknown.
func TestStatusRecordVersion(t *testing.T) {
	s := NewStatusStore()
	s.Apply(Record{Key: "status-connector-capsink", Value: []byte(`{"state":"RUNNING","trace":null,"worker_id":"127.0.0.1:57957","generation":2,"version":"4.3.1"}`)})
	s.Apply(Record{Key: "status-task-capsink-0", Value: []byte(`{"state":"RUNNING","trace":null,"worker_id":"127.0.0.1:57957","generation":3,"version":"4.3.1"}`)})
	s.Apply(Record{Key: "status-task-capsink-1", Value: []byte(`{"state":"UNASSIGNED","trace":null,"worker_id":"127.0.0.1:57957","generation":3,"version":null}`)})
	s.Apply(Record{Key: "status-task-old-0", Value: []byte(`{"state":"RUNNING","trace":null,"worker_id":"w:1","generation":1}`)})

	require.NotNil(t, s.Connector("capsink").Version)
	assert.Equal(t, "4.3.1", *s.Connector("capsink").Version)
	require.NotNil(t, s.Task(state.TaskID{Connector: "capsink", Task: 0}).Version)
	assert.Equal(t, "4.3.1", *s.Task(state.TaskID{Connector: "capsink", Task: 0}).Version)
	assert.Nil(t, s.Task(state.TaskID{Connector: "capsink", Task: 1}).Version)
	assert.Nil(t, s.Task(state.TaskID{Connector: "old", Task: 0}).Version)

	v := "4.3.1"
	assert.Equal(t, `{"state":"RUNNING","trace":null,"worker_id":"127.0.0.1:57957","generation":3,"version":"4.3.1"}`,
		string(statusValue(Status{State: state.Running, WorkerID: "127.0.0.1:57957", Generation: 3, Version: &v})))
	assert.Equal(t, `{"state":"UNASSIGNED","trace":null,"worker_id":"127.0.0.1:57957","generation":3,"version":null}`,
		string(statusValue(Status{State: state.Unassigned, WorkerID: "127.0.0.1:57957", Generation: 3})))
}
