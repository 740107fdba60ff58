package distributed

// Acceptance tests of distributed mode: real `connectd distributed` processes on loopback ports
// against a real broker.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// statusHistory reads every status-task record of a connector from the status topic, in order per key.
func statusHistory(t testing.TB, addr, topic, connector string) map[string][]string {
	out := map[string][]string{}
	for _, m := range kafkatest.ReadToEnd(t, addr, topic, time.Minute) {
		k := string(m.Key)
		if strings.HasPrefix(k, "status-task-"+connector+"-") {
			var v struct {
				State    string `json:"state"`
				WorkerID string `json:"worker_id"`
			}
			_ = json.Unmarshal(m.Value, &v)
			out[k] = append(out[k], v.State+"@"+v.WorkerID)
		}
	}
	return out
}

func TestDistributedAcceptance(t *testing.T) {
	// The sink's consumers on the worker SIGKILLed below stay members of its consumer group (connect-<name>) until
	// their session times out, and the group's rebalances that the failover and the join start (eager: every member
	// gives up its partitions) wait for them; one that was still joining when it died is a member of the generation
	// that ends the wait and times out once more. The test measures the worker group's failover, not the broker's
	// session timeout: 6 s (heartbeats every second) instead of the consumer default of 45 s, two of which outlast
	// the 60 s the records get after the join.
	c := newCluster(t, "consumer.session.timeout.ms=6000\nconsumer.heartbeat.interval.ms=1000")
	w1, w2, w3 := c.Start("w1", 0), c.Start("w2", 0), c.Start("w3", 0)
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 6)
	out := filepath.Join(c.Dir, "sink.txt")
	sink := c.Group + "-sink" // connector names are global through their consumer groups (connect-<name>)
	cfg := fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"6","topics":%q,"file":%q}`, topic, out)

	// created through any worker (non-leaders forward to the leader)
	code, body := httpDo("PUT", w2.URL+"/connectors/"+sink+"/config", cfg)
	require.Contains(t, []int{200, 201}, code, body)

	var own map[int]string
	require.Eventually(t, func() bool {
		var ok bool
		own, ok = owners(t, w1, sink, 6, c.Live())
		return ok
	}, 60*time.Second, 200*time.Millisecond)
	perWorker := map[string]int{}
	for _, w := range own {
		perWorker[w]++
	}
	require.Len(t, perWorker, 3, "tasks.max=6 spreads over all three workers: %v", own)

	// every REST read answers the same on every worker
	for _, path := range []string{"/connectors?expand=status&expand=info", "/connectors/" + sink, "/connectors/" + sink + "/config", "/connectors/" + sink + "/tasks", "/connectors/" + sink + "/status"} {
		var first string
		for i, w := range []*dworker{w1, w2, w3} {
			code, body := httpDo("GET", w.URL+path, "")
			require.Equal(t, 200, code, path)
			if i == 0 {
				first = body
			} else {
				require.JSONEq(t, first, body, "%s differs between workers", path)
			}
		}
	}

	stopProducing := producer(t, c.Kafka, topic, "v-")
	time.Sleep(2 * time.Second)

	// SIGKILL one worker under load: its tasks run elsewhere within 15 s
	victim := fmt.Sprintf("127.0.0.1:%d", w3.Port)
	w3.Kill()
	killed := time.Now()
	require.Eventually(t, func() bool {
		var ok bool
		own, ok = owners(t, w1, sink, 6, c.Live())
		return ok
	}, 15*time.Second, 100*time.Millisecond, "tasks of the killed worker were not running elsewhere within 15 s")
	failover := time.Since(killed)
	t.Logf("failover after SIGKILL: %v", failover.Round(10*time.Millisecond))
	stayed := map[int]string{}
	for id, w := range own {
		stayed[id] = w
	}

	// a fourth worker joins and takes a share
	w4 := c.Start("w4", 0)
	joined := time.Now()
	w4id := fmt.Sprintf("127.0.0.1:%d", w4.Port)
	require.Eventually(t, func() bool {
		o, ok := owners(t, w1, sink, 6, c.Live())
		if !ok {
			return false
		}
		n := 0
		for _, w := range o {
			if w == w4id {
				n++
			}
		}
		own = o
		return n > 0
	}, 60*time.Second, 100*time.Millisecond)
	t.Logf("join rebalance: worker 4 running tasks after %v", time.Since(joined).Round(10*time.Millisecond))

	n := stopProducing()
	require.Eventually(t, func() bool {
		vals := fileValues(t, out)
		for i := 0; i < n; i++ {
			if vals[fmt.Sprintf("v-%d", i)] == 0 {
				return false
			}
		}
		return true
	}, 60*time.Second, 250*time.Millisecond, "records lost")
	t.Logf("%d records delivered across the failover and the join", n)

	// tasks that did not move were never stopped: their status history has one RUNNING and no UNASSIGNED
	hist := statusHistory(t, c.Kafka, c.Group+"-status", sink)
	for id, w := range own {
		if stayed[id] != w {
			continue
		}
		h := hist[fmt.Sprintf("status-task-%s-%d", sink, id)]
		running := 0
		for _, e := range h {
			require.NotEqual(t, "UNASSIGNED@"+w, e, "task %d on %s was stopped: %v", id, w, h)
			if e == "RUNNING@"+w {
				running++
			}
		}
		require.Equal(t, 1, running, "task %d on %s restarted: %v", id, w, h)
	}
	_ = victim
}

// TestDistributedRestartAll kills every worker and starts them again: connectors, target states and offsets
// come back as they were.
func TestDistributedRestartAll(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "")
	ports := []int{freePort(t), freePort(t)}
	a, b := c.Start("a", ports[0]), c.Start("b", ports[1])
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 2)
	stop := producer(t, c.Kafka, topic, "v-")
	time.Sleep(time.Second)
	n := stop()
	cn := func(name string) string { return c.Group + "-" + name }
	mk := func(name string) string {
		return fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"2","topics":%q,"file":%q}`, topic, filepath.Join(c.Dir, name+".txt"))
	}
	for _, name := range []string{"run", "paused", "stopped"} {
		code, body := httpDo("PUT", a.URL+"/connectors/"+cn(name)+"/config", mk(name))
		require.Contains(t, []int{200, 201}, code, body)
	}
	require.Eventually(t, func() bool {
		for _, name := range []string{"run", "paused", "stopped"} {
			if len(fileValues(t, filepath.Join(c.Dir, name+".txt"))) < n {
				return false
			}
		}
		return true
	}, 60*time.Second, 200*time.Millisecond)
	httpDo("PUT", b.URL+"/connectors/"+cn("paused")+"/pause", "")
	httpDo("PUT", b.URL+"/connectors/"+cn("stopped")+"/stop", "")
	require.Eventually(t, func() bool {
		p, ok1 := status(t, a, cn("paused"))
		s, ok2 := status(t, a, cn("stopped"))
		return ok1 && ok2 && p.Connector.State == "PAUSED" && s.Connector.State == "STOPPED" && len(s.Tasks) == 0
	}, 30*time.Second, 100*time.Millisecond)
	offsetsOf := func(w *dworker, name string) string {
		code, body := httpDo("GET", w.URL+"/connectors/"+cn(name)+"/offsets", "")
		if code != 200 {
			return fmt.Sprintf("HTTP %d %s", code, body)
		}
		var v struct {
			Offsets []json.RawMessage `json:"offsets"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			return err.Error()
		}
		var s []string
		for _, o := range v.Offsets {
			s = append(s, string(o))
		}
		sort.Strings(s)
		return strings.Join(s, ",")
	}
	var before map[string]string
	for deadline := time.Now().Add(30 * time.Second); ; { // offsets committed up to the end
		before = map[string]string{}
		for _, name := range []string{"run", "paused", "stopped"} {
			before[name] = offsetsOf(a, name)
		}
		if strings.Count(before["run"], "kafka_offset") == 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "offsets: %v", before)
		time.Sleep(200 * time.Millisecond)
	}
	_, infoBefore := httpDo("GET", a.URL+"/connectors?expand=info", "")

	a.Kill()
	b.Kill()
	a2, b2 := c.Start("a2", ports[0]), c.Start("b2", ports[1])
	_ = b2
	require.Eventually(t, func() bool {
		r, ok1 := status(t, a2, cn("run"))
		p, ok2 := status(t, a2, cn("paused"))
		s, ok3 := status(t, a2, cn("stopped"))
		return ok1 && ok2 && ok3 && r.Connector.State == "RUNNING" && p.Connector.State == "PAUSED" && s.Connector.State == "STOPPED"
	}, 60*time.Second, 200*time.Millisecond)
	_, infoAfter := httpDo("GET", a2.URL+"/connectors?expand=info", "")
	require.JSONEq(t, infoBefore, infoAfter)
	for name, off := range before {
		require.Equal(t, off, offsetsOf(a2, name), name)
	}
	// nothing before the committed offsets was reprocessed by the running connector
	time.Sleep(2 * time.Second)
	for v, k := range fileValues(t, filepath.Join(c.Dir, "run.txt")) {
		require.Equal(t, 1, k, "record %s written twice", v)
	}
	_ = context.Background
}
