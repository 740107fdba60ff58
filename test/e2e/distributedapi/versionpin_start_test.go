package distributedapi

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// TestDistributedStoredVersionPinFailsAtStart: a connector config stored in the config topic without validate
// (as a JVM worker hosting other versions of the plugin writes it) whose connector.plugin.version the installed
// plugin does not satisfy fails at start as the JVM's Worker.startConnector fails it: FAILED with the plugin
// loader's VersionedPluginLoadingException wrapped in a ConnectException, no tasks. A pin the installed version satisfies runs.
func TestDistributedStoredVersionPinFailsAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a Kafka broker and the connectd binary: skipped under -short")
	}
	t.Parallel()
	c := newCluster(t, "")
	w := c.Start("a", 0)
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 1)

	code, body := httpDo("GET", w.URL+"/connector-plugins", "")
	require.Equal(t, 200, code, body)
	var plugins []struct{ Class, Version string }
	require.NoError(t, json.Unmarshal([]byte(body), &plugins))
	const class = "org.apache.kafka.connect.file.FileStreamSinkConnector"
	version := ""
	for _, p := range plugins {
		if p.Class == class {
			version = p.Version
		}
	}
	require.NotEmpty(t, version, "%s not installed: %s", class, body)

	cl := kafkatest.NewClient(t, c.Kafka)
	store := func(name, pin string) {
		v, err := json.Marshal(map[string]any{"properties": map[string]string{
			"name": name, "connector.class": class, "tasks.max": "1", "topics": topic,
			"file": filepath.Join(c.Dir, name+".txt"), "connector.plugin.version": pin,
		}})
		require.NoError(t, err)
		require.NoError(t, cl.ProduceSync(context.Background(),
			&kgo.Record{Topic: c.Group + "-configs", Key: []byte("connector-" + name), Value: v}).FirstErr())
	}
	unmatched, matched := c.Group+"-unmatched", c.Group+"-matched"
	store(unmatched, "(,0.0.1)")
	store(matched, version)

	var st struct {
		Connector struct{ State, Trace string } `json:"connector"`
		Tasks     []json.RawMessage             `json:"tasks"`
	}
	require.Eventually(t, func() bool {
		code, body := httpDo("GET", w.URL+"/connectors/"+unmatched+"/status", "")
		return code == 200 && json.Unmarshal([]byte(body), &st) == nil && st.Connector.State == "FAILED"
	}, 30*time.Second, 100*time.Millisecond)
	// the JVM's Worker.startConnector wraps the plugin loader's exception (connectorClassLoader)
	lines := strings.Split(st.Connector.Trace, "\n")
	assert.Equal(t, fmt.Sprintf("org.apache.kafka.connect.errors.ConnectException: Failed to get class loader for connector %s, class %s", class, unmatched), lines[0])
	assert.Contains(t, lines, fmt.Sprintf("Caused by: org.apache.kafka.connect.runtime.isolation.VersionedPluginLoadingException: "+
		"Plugin %s not found that matches the version range (,0.0.1), available versions: [%s]", class, version))
	assert.Empty(t, st.Tasks, "a connector that never started has no tasks")

	require.Eventually(t, func() bool {
		cs, ok := status(t, w, matched)
		return ok && cs.Connector.State == "RUNNING" && len(cs.Tasks) == 1 && cs.Tasks[0].State == "RUNNING"
	}, 30*time.Second, 100*time.Millisecond, "a pin the installed version satisfies runs")
	code, body = httpDo("GET", w.URL+"/connectors/"+unmatched+"/status", "")
	require.Equal(t, 200, code, body)
	assert.Contains(t, body, `"state":"FAILED"`, "still failed, not started by a later rebalance")

	// the same unmatched pin with task configs stored too (a JVM worker hosting the pinned version ran the
	// connector and wrote them): Worker.startTask resolves the task's loader through the connector config's pin,
	// so each task fails with the loader's exception wrapped, instead of running the installed version
	withTasks := c.Group + "-pinned-tasks"
	store(withTasks, "(,0.0.1)")
	taskProps, err := json.Marshal(map[string]any{"properties": map[string]string{
		"task.class": "org.apache.kafka.connect.file.FileStreamSinkTask", "topics": topic,
		"file": filepath.Join(c.Dir, withTasks+".txt"),
	}})
	require.NoError(t, err)
	require.NoError(t, cl.ProduceSync(context.Background(),
		&kgo.Record{Topic: c.Group + "-configs", Key: []byte("task-" + withTasks + "-0"), Value: taskProps},
		&kgo.Record{Topic: c.Group + "-configs", Key: []byte("commit-" + withTasks), Value: []byte(`{"tasks":1}`)}).FirstErr())
	var ts struct {
		Connector struct{ State string } `json:"connector"`
		Tasks     []struct {
			ID    int    `json:"id"`
			State string `json:"state"`
			Trace string `json:"trace"`
		} `json:"tasks"`
	}
	require.Eventually(t, func() bool {
		code, body := httpDo("GET", w.URL+"/connectors/"+withTasks+"/status", "")
		return code == 200 && json.Unmarshal([]byte(body), &ts) == nil && len(ts.Tasks) == 1 && ts.Tasks[0].State == "FAILED"
	}, 30*time.Second, 100*time.Millisecond, "the stored task of a connector pinned to a version not installed fails")
	assert.Equal(t, "FAILED", ts.Connector.State)
	lines = strings.Split(ts.Tasks[0].Trace, "\n")
	assert.Equal(t, fmt.Sprintf("org.apache.kafka.connect.errors.ConnectException: Failed to get class loader for connector %s, class %s", class, withTasks), lines[0])
	assert.Contains(t, lines, fmt.Sprintf("Caused by: org.apache.kafka.connect.runtime.isolation.VersionedPluginLoadingException: "+
		"Plugin %s not found that matches the version range (,0.0.1), available versions: [%s]", class, version))
	assert.NotContains(t, ts.Tasks[0].Trace, "automatic restart", "only a new config changes the verdict")
	_, err = os.Stat(filepath.Join(c.Dir, withTasks+".txt"))
	assert.True(t, os.IsNotExist(err), "the task never ran: %v", err)
}
