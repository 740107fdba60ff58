package jvmmixed

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// TestDistributedMixedKills runs JVM Connect 4.3.1 workers and Go workers in one group under a continuous load,
// led by either kind, and SIGKILLs workers of both kinds. Every status view of every live worker, and the
// status topic itself, must never show a FAILED connector or task, tasks must end on the survivors and come
// back to a joining JVM worker, and every produced record must reach the sink file (at least once: a killed
// worker's uncommitted records are delivered again).
func TestDistributedMixedKills(t *testing.T) {
	t.Parallel()
	cp := jvmClasspath(t)
	t.Run("jvm-led", func(t *testing.T) {
		m := newMixedGroup(t, cp, 6, 6)
		j1 := m.jvm() // first member: the JVM leads
		g1, g2 := m.goWorker("go1"), m.goWorker("go2")
		m.create(g1) // forwarded to the JVM leader
		own := m.awaitRunning("tasks on the JVM and both Go workers", 180*time.Second, covers(j1.ID, gid(g1), gid(g2)))
		t.Logf("JVM-led group: %v", own)
		stop := m.produce()

		m.restart(g1.URL, "restart sent to a Go worker while the JVM leads")
		m.pauseResume(j1.URL, g2.URL)

		j1.Kill()
		killed := time.Now()
		own = m.awaitRunning("every task on the Go workers after the JVM leader's SIGKILL", 180*time.Second, within(gid(g1), gid(g2)))
		t.Logf("after SIGKILL of the JVM leader: %v in %v; leader: %s", own, time.Since(killed).Round(10*time.Millisecond), m.leader())

		j2 := m.jvm()
		joined := time.Now()
		own = m.awaitRunning("a share for the JVM worker joining the Go-led group", 180*time.Second, covers(j2.ID))
		t.Logf("JVM worker joined: %v in %v", own, time.Since(joined).Round(10*time.Millisecond))
		m.restart(j2.URL, "restart sent to the JVM while a Go worker leads")

		m.finish(stop)
	})
	t.Run("go-led", func(t *testing.T) {
		m := newMixedGroup(t, cp, 4, 4)
		g1, g2 := m.goWorker("go1"), m.goWorker("go2") // go1 leads
		m.create(g2)
		m.awaitRunning("tasks on both Go workers", 180*time.Second, covers(gid(g1), gid(g2)))
		stop := m.produce()

		j1 := m.jvm()
		joined := time.Now()
		own := m.awaitRunning("tasks of the JVM worker joining the Go-led group running", 180*time.Second, covers(j1.ID))
		t.Logf("JVM worker joined: %v in %v", own, time.Since(joined).Round(10*time.Millisecond))
		m.restart(j1.URL, "restart sent to the JVM while a Go worker leads")
		m.pauseResume(g2.URL, j1.URL)

		g1.Kill()
		killed := time.Now()
		own = m.awaitRunning("every task on the JVM and the other Go worker after the Go leader's SIGKILL", 180*time.Second, within(j1.ID, gid(g2)))
		t.Logf("after SIGKILL of the Go leader: %v in %v; leader: %s", own, time.Since(killed).Round(10*time.Millisecond), m.leader())
		m.restart(g2.URL, "restart sent to the surviving Go worker")

		j1.Kill()
		killed = time.Now()
		own = m.awaitRunning("every task on the last Go worker after the JVM's SIGKILL", 180*time.Second, within(gid(g2)))
		t.Logf("after SIGKILL of the JVM: %v in %v", own, time.Since(killed).Round(10*time.Millisecond))

		m.finish(stop)
	})
}

// mixedGroup is a cluster of Go and JVM workers running one file sink connector, with a watcher that polls
// every live worker's status view of it for FAILED states.
type mixedGroup struct {
	*cluster
	t     *testing.T
	cp    string
	name  string
	topic string
	out   string
	tasks int

	mu     sync.Mutex
	jvms   []*jworker
	failed []string // FAILED states seen, one entry per state, worker and trace
	seen   map[string]bool
}

func newMixedGroup(t *testing.T, cp string, partitions int32, tasks int) *mixedGroup {
	c := newCluster(t, "")
	m := &mixedGroup{cluster: c, t: t, cp: cp, name: c.Group + "-mixed", topic: c.Group + "-in",
		out: filepath.Join(c.Dir, "sink.txt"), tasks: tasks, seen: map[string]bool{}}
	createTopic(t, c.Kafka, m.topic, partitions)
	quit, done := make(chan struct{}), make(chan struct{})
	go m.watch(quit, done)
	t.Cleanup(func() { close(quit); <-done })
	return m
}

func gid(w *dworker) string { return fmt.Sprintf("127.0.0.1:%d", w.Port) }

func (m *mixedGroup) goWorker(name string) *dworker { return m.Start(name, 0) }

func (m *mixedGroup) jvm() *jworker {
	j := launchJVM(m.cluster, m.cp)
	m.mu.Lock()
	m.jvms = append(m.jvms, j)
	m.mu.Unlock()
	return j
}

type view struct{ ID, URL string }

// views lists the live workers of both kinds.
func (m *mixedGroup) views() []view {
	var out []view
	m.cluster.Mu.Lock()
	for _, w := range m.Workers {
		if w.Alive() {
			out = append(out, view{"go " + gid(w), w.URL})
		}
	}
	m.cluster.Mu.Unlock()
	m.mu.Lock()
	for _, j := range m.jvms {
		if j.Alive() {
			out = append(out, view{"jvm " + j.ID, j.URL})
		}
	}
	m.mu.Unlock()
	return out
}

// leader names the leader as far as the Go workers' last rebalances tell (for the log only).
func (m *mixedGroup) leader() string {
	m.cluster.Mu.Lock()
	defer m.cluster.Mu.Unlock()
	for _, w := range m.Workers {
		if !w.Alive() {
			continue
		}
		lines := strings.Split(w.Log.String(), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.Contains(lines[i], "rebalance done") {
				if strings.Contains(lines[i], "leader=true") || strings.Contains(lines[i], `"leader":true`) {
					return "go " + gid(w)
				}
				break
			}
		}
	}
	return "a JVM worker"
}

func (m *mixedGroup) liveIDs() map[string]bool {
	out := map[string]bool{}
	for _, v := range m.views() {
		out[strings.Fields(v.ID)[1]] = true
	}
	return out
}

type mixedStatus struct {
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"connector"`
	Tasks []taskStatus `json:"tasks"`
}

func (m *mixedGroup) statusOf(v view) (mixedStatus, bool) {
	code, body := httpDo("GET", v.URL+"/connectors/"+m.name+"/status", "")
	var s mixedStatus
	if code != 200 || json.Unmarshal([]byte(body), &s) != nil {
		return s, false
	}
	return s, true
}

func (m *mixedGroup) watch(quit, done chan struct{}) {
	defer close(done)
	for {
		select {
		case <-quit:
			return
		case <-time.After(250 * time.Millisecond):
		}
		for _, v := range m.views() {
			s, ok := m.statusOf(v)
			if !ok {
				continue
			}
			if s.Connector.State == "FAILED" {
				m.noteFailed(fmt.Sprintf("connector on %s (seen by %s):\n%s", s.Connector.WorkerID, v.ID, s.Connector.Trace))
			}
			for _, ts := range s.Tasks {
				if ts.State == "FAILED" {
					m.noteFailed(fmt.Sprintf("task %d on %s (seen by %s):\n%s", ts.ID, ts.WorkerID, v.ID, ts.Trace))
				}
			}
		}
	}
}

func (m *mixedGroup) noteFailed(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.seen[s] {
		m.seen[s] = true
		m.failed = append(m.failed, s)
	}
}

// check fails the test at once on a FAILED state any worker showed so far.
func (m *mixedGroup) check() {
	m.t.Helper()
	m.mu.Lock()
	failed := append([]string(nil), m.failed...)
	m.mu.Unlock()
	if len(failed) > 0 {
		m.t.Fatalf("FAILED state in a status view:\n%s", strings.Join(failed, "\n---\n"))
	}
}

// waitFor polls cond until it holds, failing on a FAILED state seen meanwhile; detail says what was seen last.
func (m *mixedGroup) waitFor(what string, timeout time.Duration, cond func() (bool, string)) {
	m.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m.check()
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("%s: not reached within %v; last seen: %s", what, timeout, detail)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// create creates the file sink connector through w. Its consumer group (connect-<name>) keeps a SIGKILLed
// worker's consumers until their session times out and its eager rebalances wait for them (a consumer that was
// still joining times out once more): the test is about the workers under kills, not the broker's session
// timeout, so the consumers get 6 s (heartbeats every second) instead of the default of 45 s.
func (m *mixedGroup) create(w *dworker) {
	cfg := fmt.Sprintf(`{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","tasks.max":"%d","topics":%q,"file":%q,`+
		`"consumer.override.session.timeout.ms":"6000","consumer.override.heartbeat.interval.ms":"1000"}`, m.tasks, m.topic, m.out)
	code, body := httpDo("PUT", w.URL+"/connectors/"+m.name+"/config", cfg)
	require.Contains(m.t, []int{200, 201}, code, body)
}

type ownership map[int]string

func (o ownership) has(worker string) bool {
	for _, w := range o {
		if w == worker {
			return true
		}
	}
	return false
}

// covers: every given worker runs at least one task.
func covers(workers ...string) func(ownership) bool {
	return func(o ownership) bool {
		for _, w := range workers {
			if !o.has(w) {
				return false
			}
		}
		return true
	}
}

// within: the tasks run on the given workers only.
func within(workers ...string) func(ownership) bool {
	return func(o ownership) bool {
		allowed := map[string]bool{}
		for _, w := range workers {
			allowed[w] = true
		}
		for _, w := range o {
			if !allowed[w] {
				return false
			}
		}
		return true
	}
}

// settled: every live worker of both kinds shows the connector and all its tasks in state on live workers,
// all with the same owners, and those owners satisfy want.
func (m *mixedGroup) settled(state string, want func(ownership) bool) (ownership, bool, string) {
	live := m.liveIDs()
	var first ownership
	for _, v := range m.views() {
		s, ok := m.statusOf(v)
		if !ok {
			return nil, false, v.ID + ": no status"
		}
		if s.Connector.State != state || !live[s.Connector.WorkerID] {
			return nil, false, fmt.Sprintf("%s: connector %s on %s", v.ID, s.Connector.State, s.Connector.WorkerID)
		}
		if len(s.Tasks) != m.tasks {
			return nil, false, fmt.Sprintf("%s: %d tasks", v.ID, len(s.Tasks))
		}
		own := ownership{}
		for _, ts := range s.Tasks {
			if ts.State != state || !live[ts.WorkerID] {
				return nil, false, fmt.Sprintf("%s: task %d %s on %s", v.ID, ts.ID, ts.State, ts.WorkerID)
			}
			own[ts.ID] = ts.WorkerID
		}
		if first == nil {
			first = own
		} else if fmt.Sprint(first) != fmt.Sprint(own) {
			return nil, false, fmt.Sprintf("views differ: %v, %s: %v", first, v.ID, own)
		}
	}
	if first == nil {
		return nil, false, "no live worker"
	}
	if want != nil && !want(first) {
		return first, false, fmt.Sprintf("owners %v", first)
	}
	return first, true, ""
}

func (m *mixedGroup) awaitState(what, state string, timeout time.Duration, want func(ownership) bool) ownership {
	m.t.Helper()
	var own ownership
	m.waitFor(what, timeout, func() (bool, string) {
		o, ok, detail := m.settled(state, want)
		own = o
		return ok, detail
	})
	return own
}

func (m *mixedGroup) awaitRunning(what string, timeout time.Duration, want func(ownership) bool) ownership {
	m.t.Helper()
	return m.awaitState(what, "RUNNING", timeout, want)
}

// send retries a write while the group has no leader to take it (409 during a rebalance).
func (m *mixedGroup) send(method, url string) (int, string) {
	m.t.Helper()
	var code int
	var body string
	m.waitFor(method+" "+url, 90*time.Second, func() (bool, string) {
		code, body = httpDo(method, url, "")
		return code != 409 && code != 0, fmt.Sprintf("%d %s", code, body)
	})
	return code, body
}

// restart restarts the connector and its tasks through the given worker's REST API and waits until the status
// topic has a RUNNING record written after the request for the connector and every task, and every view shows
// them all RUNNING.
func (m *mixedGroup) restart(through, what string) {
	m.t.Helper()
	before := map[string]int{}
	for _, r := range m.statusRecords() {
		before[r.key]++
	}
	keys := []string{"status-connector-" + m.name}
	for i := 0; i < m.tasks; i++ {
		keys = append(keys, fmt.Sprintf("status-task-%s-%d", m.name, i))
	}
	code, body := m.send("POST", through+"/connectors/"+m.name+"/restart?includeTasks=true")
	require.Equal(m.t, 202, code, "%s: %s", what, body)
	m.waitFor(what, 180*time.Second, func() (bool, string) {
		idx := map[string]int{}
		restarted := map[string]bool{}
		for _, r := range m.statusRecords() {
			idx[r.key]++
			if idx[r.key] > before[r.key] && r.state == "RUNNING" {
				restarted[r.key] = true
			}
		}
		for _, k := range keys {
			if !restarted[k] {
				return false, k + " not RUNNING again since the restart"
			}
		}
		_, ok, detail := m.settled("RUNNING", nil)
		return ok, detail
	})
}

// pauseResume pauses the connector through one worker and resumes it through the other.
func (m *mixedGroup) pauseResume(pause, resume string) {
	m.t.Helper()
	code, body := m.send("PUT", pause+"/connectors/"+m.name+"/pause")
	require.Equal(m.t, 202, code, body)
	m.awaitState("paused everywhere", "PAUSED", 120*time.Second, nil)
	code, body = m.send("PUT", resume+"/connectors/"+m.name+"/resume")
	require.Equal(m.t, 202, code, body)
	m.awaitRunning("resumed everywhere", 120*time.Second, nil)
}

func (m *mixedGroup) produce() (stop func() int) { return producer(m.t, m.Kafka, m.topic, "v-") }

// finish stops the producer, waits for every record in the sink file and checks the status topic for FAILED
// records the polling may have missed (a task restarted automatically between two polls).
func (m *mixedGroup) finish(stop func() int) {
	m.t.Helper()
	n := stop()
	var vals map[string]int
	m.waitFor("every produced record in the sink file", 240*time.Second, func() (bool, string) {
		vals = fileValues(m.t, m.out)
		var missing []string
		for i := 0; i < n; i++ {
			if v := fmt.Sprintf("v-%d", i); vals[v] == 0 {
				missing = append(missing, v)
			}
		}
		if len(missing) > 0 {
			if len(missing) > 5 {
				missing = append(missing[:5], "…")
			}
			return false, fmt.Sprintf("%d of %d missing, e.g. %v", len(missing), n, missing)
		}
		return true, ""
	})
	lines, dup := 0, 0
	for v, k := range vals {
		require.True(m.t, strings.HasPrefix(v, "v-"), "unexpected line %q in the sink file", v)
		lines += k
		dup += k - 1
	}
	m.t.Logf("%d records produced, all in the sink file; %d lines, %d duplicates (redelivered after a kill)", n, lines, dup)
	var failed []string
	for _, r := range m.statusRecords() {
		if r.state == "FAILED" {
			failed = append(failed, fmt.Sprintf("%s on %s:\n%s", r.key, r.worker, r.trace))
		}
	}
	require.Empty(m.t, failed, "FAILED records in the status topic")
	m.check()
}

type statusRecord struct{ key, state, worker, trace string }

// statusRecords reads the connector's status records (connector and tasks) from the status topic, in order per
// partition; one connector's records of one key share a partition.
func (m *mixedGroup) statusRecords() []statusRecord {
	t := m.t
	t.Helper()
	topic := m.Group + "-status"
	var out []statusRecord
	for _, msg := range kafkatest.ReadToEnd(t, m.Kafka, topic, time.Minute) {
		k := string(msg.Key)
		if k == "status-connector-"+m.name || strings.HasPrefix(k, "status-task-"+m.name+"-") {
			var v struct {
				State    string `json:"state"`
				WorkerID string `json:"worker_id"`
				Trace    string `json:"trace"`
			}
			_ = json.Unmarshal(msg.Value, &v)
			out = append(out, statusRecord{key: k, state: v.State, worker: v.WorkerID, trace: v.Trace})
		}
	}
	return out
}
