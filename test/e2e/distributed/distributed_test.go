package distributed

// Acceptance tests of distributed mode: real `connectd distributed` processes on loopback ports
// against a real broker.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// kafkaBootstrap is the shared test broker (TestMain is main_test.go's kafkatest.Main).
func kafkaBootstrap(t testing.TB) string { return kafkatest.Bootstrap(t) }

var freePort = workerproc.FreePort

func repoRoot(testing.TB) string { return workerproc.RepoRoot() }

type cluster struct {
	t       testing.TB
	kafka   string
	group   string
	dir     string
	extra   string
	mu      sync.Mutex // guards workers (the scale test reads it from other goroutines)
	workers []*dworker
}

// dworker is one `connectd distributed` process of the cluster.
type dworker struct {
	name string
	port int
	url  string
	cmd  *exec.Cmd
	log  *workerproc.Buffer
	done <-chan struct{}
}

// syncBuf is a buffer a JVM worker's output goes to while the test reads it.
type syncBuf = workerproc.Buffer

func newCluster(t testing.TB, extra string) *cluster {
	g := fmt.Sprintf("dist-%d", time.Now().UnixNano())
	return &cluster{t: t, kafka: kafkaBootstrap(t), group: g, dir: t.TempDir(), extra: extra}
}

func (c *cluster) start(name string, port int) *dworker {
	w := c.launch(name, port)
	w.awaitHealthy(c.t)
	return w
}

// launch starts a worker process without waiting for it to join.
func (c *cluster) launch(name string, port int) *dworker {
	t := c.t
	if port == 0 {
		port = freePort(t)
	}
	props := workerproc.DistributedProps(c.kafka, c.group) + fmt.Sprintf(`key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
listeners=http://127.0.0.1:%d
offset.flush.interval.ms=500
%s
`, port, c.extra)
	f := filepath.Join(c.dir, name+".properties")
	require.NoError(t, os.WriteFile(f, []byte(props), 0o644))
	p := workerproc.Start(t, "distributed", f)
	p.Name = name
	w := &dworker{name: name, port: port, url: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: p.Cmd, log: p.Out, done: p.Exited()}
	c.mu.Lock()
	c.workers = append(c.workers, w)
	c.mu.Unlock()
	return w
}

// awaitHealthy waits until the worker completed its first rebalance.
func (w *dworker) awaitHealthy(t testing.TB) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _ := httpDo("GET", w.url+"/health", ""); code == 200 {
			return
		}
		require.True(t, w.alive(), "%s exited:\n%s", w.name, w.log.String())
		require.True(t, time.Now().Before(deadline), "%s never became healthy:\n%s", w.name, w.log.String())
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *dworker) kill() {
	select {
	case <-w.done:
	default:
		_ = w.cmd.Process.Signal(syscall.SIGKILL)
		<-w.done
	}
}

func (w *dworker) alive() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

var httpDo = workerproc.Request

type (
	connStatus = workerproc.Status
	taskStatus = workerproc.TaskState
)

func status(t testing.TB, w *dworker, name string) (connStatus, bool) {
	return workerproc.ConnectorStatus(w.url, name)
}

// owners maps task id -> worker id when all n tasks are RUNNING on live workers.
func owners(t testing.TB, w *dworker, name string, n int, live map[string]bool) (map[int]string, bool) {
	cs, ok := status(t, w, name)
	if !ok || len(cs.Tasks) != n {
		return nil, false
	}
	out := map[int]string{}
	for _, ts := range cs.Tasks {
		if ts.State != "RUNNING" || !live[ts.WorkerID] {
			return nil, false
		}
		out[ts.ID] = ts.WorkerID
	}
	return out, true
}

func (c *cluster) live() map[string]bool {
	out := map[string]bool{}
	for _, w := range c.workers {
		if w.alive() {
			out[fmt.Sprintf("127.0.0.1:%d", w.port)] = true
		}
	}
	return out
}

func createTopic(t testing.TB, addr, topic string, parts int32) {
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
}

// producer writes "<prefix><n>" records round-robin over partitions until stopped; it returns how many it wrote.
func producer(t testing.TB, addr, topic, prefix string) (stop func() int) {
	p := kafkatest.NewClient(t, addr, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	var n int
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			batch := make([]*kgo.Record, 0, 20)
			for i := 0; i < 20; i++ {
				batch = append(batch, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s%d", prefix, n+i))})
			}
			if err := produceBatch(p, batch); err != nil {
				continue
			}
			n += len(batch)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() int {
		close(quit)
		<-done
		p.Close()
		return n
	}
}

// produceBatch sends a batch of a background producer and waits for it, a while at most.
func produceBatch(p *kgo.Client, batch []*kgo.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.ProduceSync(ctx, batch...).FirstErr()
}

func fileValues(t testing.TB, path string) map[string]int {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out[sc.Text()]++
	}
	return out
}

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
	c := newCluster(t, "")
	w1, w2, w3 := c.start("w1", 0), c.start("w2", 0), c.start("w3", 0)
	topic := c.group + "-in"
	createTopic(t, c.kafka, topic, 6)
	out := filepath.Join(c.dir, "sink.txt")
	sink := c.group + "-sink" // connector names are global through their consumer groups (connect-<name>)
	cfg := fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"6","topics":%q,"file":%q}`, topic, out)

	// created through any worker (non-leaders forward to the leader)
	code, body := httpDo("PUT", w2.url+"/connectors/"+sink+"/config", cfg)
	require.Contains(t, []int{200, 201}, code, body)

	var own map[int]string
	require.Eventually(t, func() bool {
		var ok bool
		own, ok = owners(t, w1, sink, 6, c.live())
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
			code, body := httpDo("GET", w.url+path, "")
			require.Equal(t, 200, code, path)
			if i == 0 {
				first = body
			} else {
				require.JSONEq(t, first, body, "%s differs between workers", path)
			}
		}
	}

	stopProducing := producer(t, c.kafka, topic, "v-")
	time.Sleep(2 * time.Second)

	// SIGKILL one worker under load: its tasks run elsewhere within 15 s
	victim := fmt.Sprintf("127.0.0.1:%d", w3.port)
	w3.kill()
	killed := time.Now()
	require.Eventually(t, func() bool {
		var ok bool
		own, ok = owners(t, w1, sink, 6, c.live())
		return ok
	}, 15*time.Second, 100*time.Millisecond, "tasks of the killed worker were not running elsewhere within 15 s")
	failover := time.Since(killed)
	t.Logf("failover after SIGKILL: %v", failover.Round(10*time.Millisecond))
	stayed := map[int]string{}
	for id, w := range own {
		stayed[id] = w
	}

	// a fourth worker joins and takes a share
	w4 := c.start("w4", 0)
	joined := time.Now()
	w4id := fmt.Sprintf("127.0.0.1:%d", w4.port)
	require.Eventually(t, func() bool {
		o, ok := owners(t, w1, sink, 6, c.live())
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
	hist := statusHistory(t, c.kafka, c.group+"-status", sink)
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

// TestDistributedNonLeaderWrites sends every write to each worker in turn: whichever is not the leader forwards
// or writes to the config topic, and the change shows on every worker.
func TestDistributedNonLeaderWrites(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "")
	ws := []*dworker{c.start("a", 0), c.start("b", 0)}
	topic := c.group + "-in"
	createTopic(t, c.kafka, topic, 2)
	out := filepath.Join(c.dir, "sink.txt")
	name := c.group + "-s"
	cfg := func(tasks int) string {
		return fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"%d","topics":%q,"file":%q}`, tasks, topic, out)
	}
	everywhere := func(msg string, cond func(w *dworker) bool) {
		for _, w := range ws {
			require.Eventually(t, func() bool { return cond(w) }, 30*time.Second, 100*time.Millisecond, "%s on %s", msg, w.name)
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
		code, body := httpDo("PUT", w.url+"/connectors/"+name+"/config", cfg(1))
		require.Contains(t, []int{200, 201}, code, body)
		everywhere("create", connState("RUNNING", 1))
		code, body = httpDo("PUT", other.url+"/connectors/"+name+"/config", cfg(2))
		require.Equal(t, 200, code, body)
		everywhere("reconfigure", connState("RUNNING", 2))
		code, body = httpDo("PUT", w.url+"/connectors/"+name+"/pause", "")
		require.Equal(t, 202, code, body)
		everywhere("pause", connState("PAUSED", 2))
		code, body = httpDo("PUT", other.url+"/connectors/"+name+"/resume", "")
		require.Equal(t, 202, code, body)
		everywhere("resume", connState("RUNNING", 2))
		code, body = httpDo("POST", w.url+"/connectors/"+name+"/restart?includeTasks=true", "")
		require.Equal(t, 202, code, body)
		everywhere("restart", connState("RUNNING", 2))
		code, body = httpDo("POST", other.url+"/connectors/"+name+"/tasks/1/restart", "")
		require.Equal(t, 204, code, body)
		code, body = httpDo("PUT", w.url+"/connectors/"+name+"/stop", "")
		require.Equal(t, 204, code, body)
		everywhere("stop", func(w *dworker) bool {
			cs, ok := status(t, w, name)
			return ok && cs.Connector.State == "STOPPED" && len(cs.Tasks) == 0
		})
		code, body = httpDo("DELETE", other.url+"/connectors/"+name, "")
		require.Equal(t, 204, code, body)
		everywhere("delete", func(w *dworker) bool {
			code, body := httpDo("GET", w.url+"/connectors", "")
			return code == 200 && strings.TrimSpace(body) == "[]"
		})
	}
}

// TestDistributedRestartAll kills every worker and starts them again: connectors, target states and offsets
// come back as they were.
func TestDistributedRestartAll(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "")
	ports := []int{freePort(t), freePort(t)}
	a, b := c.start("a", ports[0]), c.start("b", ports[1])
	topic := c.group + "-in"
	createTopic(t, c.kafka, topic, 2)
	stop := producer(t, c.kafka, topic, "v-")
	time.Sleep(time.Second)
	n := stop()
	cn := func(name string) string { return c.group + "-" + name }
	mk := func(name string) string {
		return fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"2","topics":%q,"file":%q}`, topic, filepath.Join(c.dir, name+".txt"))
	}
	for _, name := range []string{"run", "paused", "stopped"} {
		code, body := httpDo("PUT", a.url+"/connectors/"+cn(name)+"/config", mk(name))
		require.Contains(t, []int{200, 201}, code, body)
	}
	require.Eventually(t, func() bool {
		for _, name := range []string{"run", "paused", "stopped"} {
			if len(fileValues(t, filepath.Join(c.dir, name+".txt"))) < n {
				return false
			}
		}
		return true
	}, 60*time.Second, 200*time.Millisecond)
	httpDo("PUT", b.url+"/connectors/"+cn("paused")+"/pause", "")
	httpDo("PUT", b.url+"/connectors/"+cn("stopped")+"/stop", "")
	require.Eventually(t, func() bool {
		p, ok1 := status(t, a, cn("paused"))
		s, ok2 := status(t, a, cn("stopped"))
		return ok1 && ok2 && p.Connector.State == "PAUSED" && s.Connector.State == "STOPPED" && len(s.Tasks) == 0
	}, 30*time.Second, 100*time.Millisecond)
	offsetsOf := func(w *dworker, name string) string {
		code, body := httpDo("GET", w.url+"/connectors/"+cn(name)+"/offsets", "")
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
	_, infoBefore := httpDo("GET", a.url+"/connectors?expand=info", "")

	a.kill()
	b.kill()
	a2, b2 := c.start("a2", ports[0]), c.start("b2", ports[1])
	_ = b2
	require.Eventually(t, func() bool {
		r, ok1 := status(t, a2, cn("run"))
		p, ok2 := status(t, a2, cn("paused"))
		s, ok3 := status(t, a2, cn("stopped"))
		return ok1 && ok2 && ok3 && r.Connector.State == "RUNNING" && p.Connector.State == "PAUSED" && s.Connector.State == "STOPPED"
	}, 60*time.Second, 200*time.Millisecond)
	_, infoAfter := httpDo("GET", a2.url+"/connectors?expand=info", "")
	require.JSONEq(t, infoBefore, infoAfter)
	for name, off := range before {
		require.Equal(t, off, offsetsOf(a2, name), name)
	}
	// nothing before the committed offsets was reprocessed by the running connector
	time.Sleep(2 * time.Second)
	for v, k := range fileValues(t, filepath.Join(c.dir, "run.txt")) {
		require.Equal(t, 1, k, "record %s written twice", v)
	}
	_ = context.Background
}

// jvmClasspath returns the classpath of a JVM Connect worker from Maven Central (testdata/distributed/jvm.sh).
func jvmClasspath(t testing.TB) string {
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatalf("java is required for the JVM takeover test: %v", err)
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "testdata", "distributed", "jvm.sh"), "classpath")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "fetching the JVM Connect jars: %s", stderr.String())
	return strings.TrimSpace(string(out))
}

// jworker is a JVM Connect distributed worker (ConnectDistributed) process.
type jworker struct {
	t    testing.TB
	url  string
	id   string // worker id, host:port
	cmd  *exec.Cmd
	log  *syncBuf
	done chan struct{}
}

// startJVM runs a JVM worker in the cluster's group and returns its REST URL, its worker id and a stop
// function (SIGTERM, wait).
func (c *cluster) startJVM(cp string) (url, id string, stop func()) {
	j := c.launchJVM(cp)
	return j.url, j.id, j.stop
}

// launchJVM starts a JVM worker in the cluster's group and waits until its REST listener answers.
func (c *cluster) launchJVM(cp string) *jworker { return c.launchJVMWith(cp, jvmLaunch{}) }

// jvmLaunch is what a JVM worker's launch may add to launchJVM's defaults.
type jvmLaunch struct {
	port    int    // 0: a free port
	heap    string // -Xmx; 256m when empty
	props   string // worker properties appended to the defaults
	loggers []string
	name    string // of the properties files ("jvm" when empty)
}

// launchJVMWith starts a JVM worker in the cluster's group with o and waits until its REST listener answers.
func (c *cluster) launchJVMWith(cp string, o jvmLaunch) *jworker {
	t := c.t
	port, heap, name := o.port, o.heap, o.name
	if port == 0 {
		port = freePort(t)
	}
	if heap == "" {
		heap = "256m"
	}
	if name == "" {
		name = "jvm"
	}
	props := workerproc.DistributedProps(c.kafka, c.group) + fmt.Sprintf(`key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
listeners=http://127.0.0.1:%d
offset.flush.interval.ms=500
scheduled.rebalance.max.delay.ms=1000
heartbeat.interval.ms=1000
`, port) + o.props
	pf := filepath.Join(c.dir, fmt.Sprintf("%s-%d.properties", name, port))
	require.NoError(t, os.WriteFile(pf, []byte(props), 0o644))
	l4j := filepath.Join(c.dir, name+"-log4j2.properties")
	require.NoError(t, os.WriteFile(l4j, []byte(strings.Join(append([]string{
		"rootLogger.level=WARN", "rootLogger.appenderRef.stdout.ref=STDOUT",
		"appender.stdout.type=Console", "appender.stdout.name=STDOUT",
		"appender.stdout.layout.type=PatternLayout", "appender.stdout.layout.pattern=[%d] %p %m (%c)%n",
	}, o.loggers...), "\n")+"\n"), 0o644))
	// java itself, not a wrapper script, so that a signal to cmd.Process reaches the JVM
	jvm := exec.Command("java", "-Xmx"+heap, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dlog4j2.configurationFile="+l4j,
		"-cp", cp, "org.apache.kafka.connect.cli.ConnectDistributed", pf)
	j := &jworker{t: t, url: fmt.Sprintf("http://127.0.0.1:%d", port), id: fmt.Sprintf("127.0.0.1:%d", port), cmd: jvm, log: &syncBuf{}, done: make(chan struct{})}
	jvm.Stdout, jvm.Stderr = j.log, j.log
	require.NoError(t, jvm.Start())
	go func() { _ = jvm.Wait(); close(j.done) }()
	t.Cleanup(func() {
		j.kill()
		if t.Failed() {
			s := j.log.String()
			if len(s) > 6000 {
				s = s[len(s)-6000:]
			}
			t.Logf("JVM worker %s log tail:\n%s", j.id, s)
		}
	})
	require.Eventually(t, func() bool {
		code, _ := httpDo("GET", j.url+"/connectors", "")
		return code == 200 || !j.alive()
	}, 120*time.Second, 250*time.Millisecond, "JVM worker did not start")
	require.True(t, j.alive(), "JVM worker exited:\n%s", j.log.String())
	return j
}

// stop stops the worker gracefully (SIGTERM) and waits for it to exit.
func (j *jworker) stop() {
	_ = j.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-j.done:
	case <-time.After(60 * time.Second):
		j.t.Fatal("JVM worker did not stop")
	}
}

// kill ends the JVM with SIGKILL: no shutdown hook runs, it does not leave the group.
func (j *jworker) kill() {
	select {
	case <-j.done:
	default:
		_ = j.cmd.Process.Signal(syscall.SIGKILL)
		<-j.done
	}
}

func (j *jworker) alive() bool {
	select {
	case <-j.done:
		return false
	default:
		return true
	}
}

// TestDistributedJVMTakeover runs a real JVM Connect worker (connect-runtime from Maven Central) with the file
// sink, stops it, and starts Go workers on the same internal topics and group id: they read the JVM's config,
// status and session-key records and resume the sink from the JVM's committed offsets (connect-<name>) without
// reprocessing anything before them.
func TestDistributedJVMTakeover(t *testing.T) {
	cp := jvmClasspath(t)
	c := newCluster(t, "")
	topic := c.group + "-in"
	createTopic(t, c.kafka, topic, 2)
	jurl, _, stopJVM := c.startJVM(cp)

	name := c.group + "-file"
	out := filepath.Join(c.dir, "sink.txt")
	cfg := fmt.Sprintf(`{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","tasks.max":"2","topics":%q,"file":%q}`, topic, out)
	var code int
	var body string
	require.Eventually(t, func() bool { // the JVM answers 409 until its first rebalance completes
		code, body = httpDo("PUT", jurl+"/connectors/"+name+"/config", cfg)
		return code == 201
	}, 60*time.Second, 250*time.Millisecond, "create on the JVM: %d %s", code, body)

	stop := producer(t, c.kafka, topic, "v-")
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
	stop = producer(t, c.kafka, topic, "w-")
	time.Sleep(time.Second)
	second := stop()

	g1 := c.start("go1", 0)
	c.start("go2", 0)
	_, infoGo := httpDo("GET", g1.url+"/connectors/"+name, "")
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

// TestDistributedAutoRestart: a failed task is restarted automatically with exponential backoff, the attempt
// and delay are shown in its status trace, and it runs again once the cause is gone.
func TestDistributedAutoRestart(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "task.restart.backoff.initial.ms=200\ntask.restart.backoff.max.ms=2000")
	w := c.start("a", 0)
	topic := c.group + "-in"
	createTopic(t, c.kafka, topic, 1)
	dir := filepath.Join(c.dir, "later")
	name := c.group + "-failing"
	cfg := fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"1","topics":%q,"file":%q}`, topic, filepath.Join(dir, "out.txt"))
	code, body := httpDo("PUT", w.url+"/connectors/"+name+"/config", cfg)
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

// TestDistributedMixedJVMAndGo runs a JVM worker and Go workers in one group: whoever leads, the other side
// decodes its assignments, tasks spread over both kinds, task configs are forwarded between them (signed with
// the session key), and the JVM's REST shows the Go workers' statuses.
func TestDistributedMixedJVMAndGo(t *testing.T) {
	t.Parallel()
	cp := jvmClasspath(t)
	c := newCluster(t, "")
	topic := c.group + "-in"
	createTopic(t, c.kafka, topic, 4)
	jurl, jid, stopJVM := c.startJVM(cp) // first member: the JVM leads
	g1 := c.start("go1", 0)
	name := c.group + "-mixed"
	out := filepath.Join(c.dir, "sink.txt")
	cfg := fmt.Sprintf(`{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","tasks.max":"4","topics":%q,"file":%q}`, topic, out)
	code, body := httpDo("PUT", g1.url+"/connectors/"+name+"/config", cfg) // Go forwards to the JVM leader
	require.Contains(t, []int{200, 201}, code, body)
	spread := func(w *dworker, want map[string]bool) map[int]string {
		var own map[int]string
		require.Eventually(t, func() bool {
			live := c.live()
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
	g1id := fmt.Sprintf("127.0.0.1:%d", g1.port)
	own := spread(g1, map[string]bool{jid: true, g1id: true})
	t.Logf("JVM-led group: %v", own)
	_, jst := httpDo("GET", jurl+"/connectors/"+name+"/status", "")
	_, gst := httpDo("GET", g1.url+"/connectors/"+name+"/status", "")
	// both show each instance's "version" (KIP-891), read from the other's status records
	require.JSONEq(t, jst, gst, "JVM and Go workers report the same status")
	checkVersions(t, gst, map[string]string{jid: "4.3.1", g1id: connect.DefaultPluginVersion})

	stop := producer(t, c.kafka, topic, "v-")
	time.Sleep(time.Second)
	n := stop()
	require.Eventually(t, func() bool { return len(fileValues(t, out)) == n }, 60*time.Second, 200*time.Millisecond)

	// the JVM leaves: the Go worker leads and runs everything; a new JVM worker then gets its share from the
	// Go leader (it decodes our assignment and revocations)
	stopJVM()
	spread(g1, map[string]bool{g1id: true})
	_, jid2, _ := c.startJVM(cp)
	own = spread(g1, map[string]bool{jid2: true, g1id: true})
	t.Logf("Go-led group: %v", own)
	stop = producer(t, c.kafka, topic, "w-")
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

// TestDistributedCreatedPaused: as on the JVM's distributed worker, a connector created with initial_state PAUSED
// has no tasks until resumed, restarting a task of a missing connector answers 404 Unknown connector, and the
// offsets of a group that never committed are an empty list.
func TestDistributedCreatedPaused(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "")
	w := c.start("a", 0)
	topic := c.group + "-in"
	createTopic(t, c.kafka, topic, 2)
	name := c.group + "-p"
	code, body := httpDo("POST", w.url+"/connectors", fmt.Sprintf(`{"name":%q,"config":{"connector.class":"FileStreamSink","tasks.max":"2","topics":%q,"file":%q},"initial_state":"PAUSED"}`,
		name, topic, filepath.Join(c.dir, "sink.txt")))
	require.Equal(t, 201, code, body)
	assert.Contains(t, body, `"tasks":[]`)
	require.Eventually(t, func() bool { cs, ok := status(t, w, name); return ok && cs.Connector.State == "PAUSED" }, 30*time.Second, 100*time.Millisecond)
	time.Sleep(2 * time.Second) // a reconfiguration would have written task configs by now
	code, body = httpDo("GET", w.url+"/connectors/"+name+"/status", "")
	require.Equal(t, 200, code, body)
	assert.Contains(t, body, `"tasks":[]`)
	code, body = httpDo("GET", w.url+"/connectors/"+name+"/tasks", "")
	require.Equal(t, 200, code, body)
	assert.Equal(t, "[]", strings.TrimSpace(body))

	code, body = httpDo("POST", w.url+"/connectors/nope/tasks/0/restart", "")
	assert.Equal(t, 404, code)
	assert.JSONEq(t, `{"error_code":404,"message":"Unknown connector: nope"}`, body)
	code, body = httpDo("POST", w.url+"/connectors/"+name+"/tasks/5/restart", "")
	assert.Equal(t, 404, code)
	assert.JSONEq(t, fmt.Sprintf(`{"error_code":404,"message":"Unknown task: %s-5"}`, name), body)

	code, body = httpDo("PUT", w.url+"/connectors/"+name+"/resume", "")
	require.Equal(t, 202, code, body)
	require.Eventually(t, func() bool {
		cs, ok := status(t, w, name)
		return ok && cs.Connector.State == "RUNNING" && len(cs.Tasks) == 2
	}, 30*time.Second, 100*time.Millisecond)

	// a second connector stopped from the start: its group never committed
	never := c.group + "-never"
	code, body = httpDo("POST", w.url+"/connectors", fmt.Sprintf(`{"name":%q,"config":{"connector.class":"FileStreamSink","topics":%q,"file":%q},"initial_state":"STOPPED"}`,
		never, topic, filepath.Join(c.dir, "never.txt")))
	require.Equal(t, 201, code, body)
	require.Eventually(t, func() bool { cs, ok := status(t, w, never); return ok && cs.Connector.State == "STOPPED" }, 30*time.Second, 100*time.Millisecond)
	code, body = httpDo("GET", w.url+"/connectors/"+never+"/offsets", "")
	assert.Equal(t, 200, code)
	assert.JSONEq(t, `{"offsets":[]}`, body)
}
