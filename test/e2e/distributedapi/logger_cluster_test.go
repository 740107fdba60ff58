package distributedapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDistributedClusterLoggerLevel: PUT /admin/loggers/{ns}?scope=cluster on one worker sets
// the level on every worker (they read the logger-cluster record from the config topic); a
// worker that starts later ignores the older record, as JVM workers do.
func TestDistributedClusterLoggerLevel(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "")
	a, b := c.Start("a", 0), c.Start("b", 0)
	const ns = "org.apache.kafka.connect.runtime.WorkerSinkTask"
	level := func(url string) string {
		code, body := httpDo("GET", url+"/admin/loggers/"+ns, "")
		if code != 200 {
			return ""
		}
		var v struct{ Level string }
		_ = json.Unmarshal([]byte(body), &v)
		return v.Level
	}
	require.NotEqual(t, "DEBUG", level(b.URL))
	code, body := httpDo("PUT", a.URL+"/admin/loggers/"+ns+"?scope=cluster", `{"level":"DEBUG"}`)
	require.Equal(t, 204, code, body)
	for _, w := range []*dworker{a, b} {
		require.Eventually(t, func() bool { return level(w.URL) == "DEBUG" }, 30*time.Second, 100*time.Millisecond, w.Name)
	}
	late := c.Start("c", 0)
	require.Eventually(t, func() bool { code, _ := httpDo("GET", late.URL+"/connectors", ""); return code == 200 }, 30*time.Second, 100*time.Millisecond)
	time.Sleep(2 * time.Second) // it has read the config topic by now
	require.NotEqual(t, "DEBUG", level(late.URL), "a record written before the worker started does not apply")
}
