package jvmmixed

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// TestDistributedJVMTakeover runs a real JVM Connect worker (connect-runtime from Maven Central) with the file
// sink, stops it, and starts Go workers on the same internal topics and group id: they read the JVM's config,
// status and session-key records and resume the sink from the JVM's committed offsets (connect-<name>) without
// reprocessing anything before them.
func TestDistributedJVMTakeover(t *testing.T) {
	cp := jvmClasspath(t)
	c := newCluster(t, "")
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 2)
	jurl, _, stopJVM := startJVM(c, cp)

	name := c.Group + "-file"
	out := filepath.Join(c.Dir, "sink.txt")
	cfg := fmt.Sprintf(`{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","tasks.max":"2","topics":%q,"file":%q}`, topic, out)
	var code int
	var body string
	require.Eventually(t, func() bool { // the JVM answers 409 until its first rebalance completes
		code, body = httpDo("PUT", jurl+"/connectors/"+name+"/config", cfg)
		return code == 201
	}, 60*time.Second, 250*time.Millisecond, "create on the JVM: %d %s", code, body)

	stop := producer(t, c.Kafka, topic, "v-")
	time.Sleep(time.Second)
	first := stop()
	require.Eventually(t, func() bool { return len(fileValues(t, out)) == first }, 60*time.Second, 200*time.Millisecond, "JVM sink did not write")
	jvmOffsets := func() string {
		_, body := httpDo("GET", jurl+"/connectors/"+name+"/offsets", "")
		return body
	}
	require.Eventually(t, func() bool {
		return strings.Count(jvmOffsets(), fmt.Sprintf(`"kafka_offset":%d`, first/2)) == 2
	}, 30*time.Second, 200*time.Millisecond, "JVM offsets %s", jvmOffsets())
	// pause it on the JVM side too: the Go side must see the target state, then resume it from Go
	_, infoJVM := httpDo("GET", jurl+"/connectors/"+name, "")
	stopJVM()

	// more data while nobody runs
	stop = producer(t, c.Kafka, topic, "w-")
	time.Sleep(time.Second)
	second := stop()

	g1 := c.Start("go1", 0)
	c.Start("go2", 0)
	_, infoGo := httpDo("GET", g1.URL+"/connectors/"+name, "")
	require.JSONEq(t, infoJVM, infoGo, "connector and task configs read from the JVM's config topic")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got := fileValues(t, out)
		if len(got) == first+second {
			break
		}
		if time.Now().After(deadline) {
			missing := []string{}
			for i := 0; i < second && len(missing) < 5; i++ {
				if got[fmt.Sprintf("w-%d", i)] == 0 {
					missing = append(missing, fmt.Sprintf("w-%d", i))
				}
			}
			t.Fatalf("distinct records in the file: %d, want %d (JVM %d + Go %d); missing e.g. %v", len(got), first+second, first, second, missing)
		}
	}
	time.Sleep(time.Second)
	for v, n := range fileValues(t, out) {
		require.Equal(t, 1, n, "record %s written twice: reprocessed before the JVM's committed offsets", v)
	}
	cs, ok := status(t, g1, name)
	require.True(t, ok)
	require.Equal(t, "RUNNING", cs.Connector.State)
}

// TestDistributedMixedJVMAndGo runs a JVM worker and Go workers in one group: whoever leads, the other side
// decodes its assignments, tasks spread over both kinds, task configs are forwarded between them (signed with
// the session key), and the JVM's REST shows the Go workers' statuses.
func TestDistributedMixedJVMAndGo(t *testing.T) {
	t.Parallel()
	cp := jvmClasspath(t)
	c := newCluster(t, "")
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 4)
	jurl, jid, stopJVM := startJVM(c, cp) // first member: the JVM leads
	g1 := c.Start("go1", 0)
	name := c.Group + "-mixed"
	out := filepath.Join(c.Dir, "sink.txt")
	cfg := fmt.Sprintf(`{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","tasks.max":"4","topics":%q,"file":%q}`, topic, out)
	code, body := httpDo("PUT", g1.URL+"/connectors/"+name+"/config", cfg) // Go forwards to the JVM leader
	require.Contains(t, []int{200, 201}, code, body)
	spread := func(w *dworker, want map[string]bool) map[int]string {
		var own map[int]string
		require.Eventually(t, func() bool {
			live := c.Live()
			for k := range want {
				live[k] = true
			}
			o, ok := owners(t, w, name, 4, live)
			if !ok {
				return false
			}
			seen := map[string]bool{}
			for _, x := range o {
				seen[x] = true
			}
			own = o
			return len(seen) == len(want)
		}, 90*time.Second, 200*time.Millisecond)
		return own
	}
	g1id := fmt.Sprintf("127.0.0.1:%d", g1.Port)
	own := spread(g1, map[string]bool{jid: true, g1id: true})
	t.Logf("JVM-led group: %v", own)
	_, jst := httpDo("GET", jurl+"/connectors/"+name+"/status", "")
	_, gst := httpDo("GET", g1.URL+"/connectors/"+name+"/status", "")
	// both show each instance's "version" (KIP-891), read from the other's status records
	require.JSONEq(t, jst, gst, "JVM and Go workers report the same status")
	checkVersions(t, gst, map[string]string{jid: "4.3.1", g1id: connect.DefaultPluginVersion})

	stop := producer(t, c.Kafka, topic, "v-")
	time.Sleep(time.Second)
	n := stop()
	require.Eventually(t, func() bool { return len(fileValues(t, out)) == n }, 60*time.Second, 200*time.Millisecond)

	// the JVM leaves: the Go worker leads and runs everything; a new JVM worker then gets its share from the
	// Go leader (it decodes our assignment and revocations)
	stopJVM()
	spread(g1, map[string]bool{g1id: true})
	_, jid2, _ := startJVM(c, cp)
	own = spread(g1, map[string]bool{jid2: true, g1id: true})
	t.Logf("Go-led group: %v", own)
	stop = producer(t, c.Kafka, topic, "w-")
	time.Sleep(time.Second)
	m := stop()
	require.Eventually(t, func() bool { return len(fileValues(t, out)) == n+m }, 60*time.Second, 200*time.Millisecond)
}

// checkVersions checks that the connector and every task of a status body carry the version of the plugin on
// the worker that runs it (by worker id).
func checkVersions(t testing.TB, body string, want map[string]string) {
	var v struct {
		Connector map[string]any   `json:"connector"`
		Tasks     []map[string]any `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	for _, m := range append([]map[string]any{v.Connector}, v.Tasks...) {
		w, _ := m["worker_id"].(string)
		require.Contains(t, want, w, body)
		assert.Equal(t, want[w], m["version"], "version of %v in %s", m, body)
	}
}
