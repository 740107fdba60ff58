package distributedapi

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDistributedNonLeaderWrites sends every write to each worker in turn: whichever is not the leader forwards
// or writes to the config topic, and the change shows on every worker.
func TestDistributedNonLeaderWrites(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "")
	ws := []*dworker{c.Start("a", 0), c.Start("b", 0)}
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 2)
	out := filepath.Join(c.Dir, "sink.txt")
	name := c.Group + "-s"
	cfg := func(tasks int) string {
		return fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"%d","topics":%q,"file":%q}`, tasks, topic, out)
	}
	everywhere := func(msg string, cond func(w *dworker) bool) {
		for _, w := range ws {
			require.Eventually(t, func() bool { return cond(w) }, 30*time.Second, 100*time.Millisecond, "%s on %s", msg, w.Name)
		}
	}
	connState := func(state string, tasks int) func(w *dworker) bool {
		return func(w *dworker) bool {
			cs, ok := status(t, w, name)
			if !ok || cs.Connector.State != state || len(cs.Tasks) != tasks {
				return false
			}
			for _, ts := range cs.Tasks {
				if ts.State != state {
					return false
				}
			}
			return true
		}
	}
	for i, w := range ws {
		other := ws[(i+1)%len(ws)]
		code, body := httpDo("PUT", w.URL+"/connectors/"+name+"/config", cfg(1))
		require.Contains(t, []int{200, 201}, code, body)
		everywhere("create", connState("RUNNING", 1))
		code, body = httpDo("PUT", other.URL+"/connectors/"+name+"/config", cfg(2))
		require.Equal(t, 200, code, body)
		everywhere("reconfigure", connState("RUNNING", 2))
		code, body = httpDo("PUT", w.URL+"/connectors/"+name+"/pause", "")
		require.Equal(t, 202, code, body)
		everywhere("pause", connState("PAUSED", 2))
		code, body = httpDo("PUT", other.URL+"/connectors/"+name+"/resume", "")
		require.Equal(t, 202, code, body)
		everywhere("resume", connState("RUNNING", 2))
		code, body = httpDo("POST", w.URL+"/connectors/"+name+"/restart?includeTasks=true", "")
		require.Equal(t, 202, code, body)
		everywhere("restart", connState("RUNNING", 2))
		code, body = httpDo("POST", other.URL+"/connectors/"+name+"/tasks/1/restart", "")
		require.Equal(t, 204, code, body)
		code, body = httpDo("PUT", w.URL+"/connectors/"+name+"/stop", "")
		require.Equal(t, 204, code, body)
		everywhere("stop", func(w *dworker) bool {
			cs, ok := status(t, w, name)
			return ok && cs.Connector.State == "STOPPED" && len(cs.Tasks) == 0
		})
		code, body = httpDo("DELETE", other.URL+"/connectors/"+name, "")
		require.Equal(t, 204, code, body)
		everywhere("delete", func(w *dworker) bool {
			code, body := httpDo("GET", w.URL+"/connectors", "")
			return code == 200 && strings.TrimSpace(body) == "[]"
		})
	}
}

// TestDistributedAutoRestart: a failed task is restarted automatically with exponential backoff, the attempt
// and delay are shown in its status trace, and it runs again once the cause is gone.
func TestDistributedAutoRestart(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "task.restart.backoff.initial.ms=200\ntask.restart.backoff.max.ms=2000")
	w := c.Start("a", 0)
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 1)
	dir := filepath.Join(c.Dir, "later")
	name := c.Group + "-failing"
	cfg := fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"1","topics":%q,"file":%q}`, topic, filepath.Join(dir, "out.txt"))
	code, body := httpDo("PUT", w.URL+"/connectors/"+name+"/config", cfg)
	require.Equal(t, 201, code, body)
	var trace string
	require.Eventually(t, func() bool {
		cs, ok := status(t, w, name)
		if !ok || len(cs.Tasks) != 1 {
			return false
		}
		trace = cs.Tasks[0].Trace
		return cs.Tasks[0].State == "FAILED" && strings.Contains(trace, "automatic restart attempt 3 in 800 ms")
	}, 30*time.Second, 50*time.Millisecond, "trace: %s", trace)
	require.Contains(t, trace, "couldn't find or create file")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.Eventually(t, func() bool {
		cs, ok := status(t, w, name)
		return ok && len(cs.Tasks) == 1 && cs.Tasks[0].State == "RUNNING"
	}, 30*time.Second, 100*time.Millisecond)
}

// TestDistributedCreatedPaused: as on the JVM's distributed worker, a connector created with initial_state PAUSED
// has no tasks until resumed, restarting a task of a missing connector answers 404 Unknown connector, and the
// offsets of a group that never committed are an empty list.
func TestDistributedCreatedPaused(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "")
	w := c.Start("a", 0)
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 2)
	name := c.Group + "-p"
	code, body := httpDo("POST", w.URL+"/connectors", fmt.Sprintf(`{"name":%q,"config":{"connector.class":"FileStreamSink","tasks.max":"2","topics":%q,"file":%q},"initial_state":"PAUSED"}`,
		name, topic, filepath.Join(c.Dir, "sink.txt")))
	require.Equal(t, 201, code, body)
	assert.Contains(t, body, `"tasks":[]`)
	require.Eventually(t, func() bool { cs, ok := status(t, w, name); return ok && cs.Connector.State == "PAUSED" }, 30*time.Second, 100*time.Millisecond)
	time.Sleep(2 * time.Second) // a reconfiguration would have written task configs by now
	code, body = httpDo("GET", w.URL+"/connectors/"+name+"/status", "")
	require.Equal(t, 200, code, body)
	assert.Contains(t, body, `"tasks":[]`)
	code, body = httpDo("GET", w.URL+"/connectors/"+name+"/tasks", "")
	require.Equal(t, 200, code, body)
	assert.Equal(t, "[]", strings.TrimSpace(body))

	code, body = httpDo("POST", w.URL+"/connectors/nope/tasks/0/restart", "")
	assert.Equal(t, 404, code)
	assert.JSONEq(t, `{"error_code":404,"message":"Unknown connector: nope"}`, body)
	code, body = httpDo("POST", w.URL+"/connectors/"+name+"/tasks/5/restart", "")
	assert.Equal(t, 404, code)
	assert.JSONEq(t, fmt.Sprintf(`{"error_code":404,"message":"Unknown task: %s-5"}`, name), body)

	code, body = httpDo("PUT", w.URL+"/connectors/"+name+"/resume", "")
	require.Equal(t, 202, code, body)
	require.Eventually(t, func() bool {
		cs, ok := status(t, w, name)
		return ok && cs.Connector.State == "RUNNING" && len(cs.Tasks) == 2
	}, 30*time.Second, 100*time.Millisecond)

	// a second connector stopped from the start: its group never committed
	never := c.Group + "-never"
	code, body = httpDo("POST", w.URL+"/connectors", fmt.Sprintf(`{"name":%q,"config":{"connector.class":"FileStreamSink","topics":%q,"file":%q},"initial_state":"STOPPED"}`,
		never, topic, filepath.Join(c.Dir, "never.txt")))
	require.Equal(t, 201, code, body)
	require.Eventually(t, func() bool { cs, ok := status(t, w, never); return ok && cs.Connector.State == "STOPPED" }, 30*time.Second, 100*time.Millisecond)
	code, body = httpDo("GET", w.URL+"/connectors/"+never+"/offsets", "")
	assert.Equal(t, 200, code)
	assert.JSONEq(t, `{"offsets":[]}`, body)
}
