package distributed

// The scale scenario of distributed mode: real `connectd distributed` processes, many sink connectors created
// at once, workers added, one SIGKILLed and one SIGTERMed, records flowing throughout. TestDistributedScale is
// its small version with correctness assertions only; BenchmarkDistributedScale runs it at full size and
// reports the times (BENCHMARKS.md).

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// scaleParams sizes the scenario.
type scaleParams struct {
	workers    int // at the start
	add        int // joining after the connectors run
	connectors int // one topic each
	partitions int // per topic
	tasks      int // tasks.max per connector
	failover   bool
	killLeader bool // the SIGKILL hits the group's leader rather than another worker
}

func (p scaleParams) String() string {
	s := fmt.Sprintf("%d+%d workers, %d connectors x %d tasks, %d partitions/topic", p.workers, p.add, p.connectors, p.tasks, p.partitions)
	if p.failover && p.killLeader {
		s += ", SIGKILL of the leader"
	}
	return s
}

// scaleParamsFromEnv: SCALE_WORKERS, SCALE_ADD, SCALE_CONNECTORS, SCALE_PARTITIONS, SCALE_TASKS override def;
// SCALE_FAILOVER=0 leaves out the SIGKILL and SIGTERM; SCALE_KILL_LEADER=1 SIGKILLs the group's leader.
func scaleParamsFromEnv(t testing.TB, def scaleParams) scaleParams {
	if os.Getenv("SCALE_FAILOVER") == "0" {
		def.failover = false
	}
	if os.Getenv("SCALE_KILL_LEADER") == "1" {
		def.killLeader = true
	}
	for _, f := range []struct {
		env string
		dst *int
	}{{"SCALE_WORKERS", &def.workers}, {"SCALE_ADD", &def.add}, {"SCALE_CONNECTORS", &def.connectors},
		{"SCALE_PARTITIONS", &def.partitions}, {"SCALE_TASKS", &def.tasks}} {
		if v := os.Getenv(f.env); v != "" {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, f.env)
			*f.dst = n
		}
	}
	return def
}

type scaleResult struct {
	posts, create     time.Duration // the POSTs alone; first POST -> every task RUNNING
	createEvictions   int           // memberships lost while the connectors were created
	scaleOut          time.Duration // new workers started -> balanced, every task RUNNING
	moved             int           // tasks that changed workers in the scale-out
	sigkill, sigterm  time.Duration // signal -> every task RUNNING on the survivors
	sigtermExit       time.Duration // SIGTERM -> the worker's process exited
	restP50, restP99  time.Duration
	restCalls         int
	produced          int
	lost, duplicated  int
	rssMB, cpuPercent []float64 // per worker still running at the end
	evictions         int       // memberships lost over the whole run
	statusDiffs       []string  // statuses that never matched what runs where
}

// taskKey names one task of the scenario.
type taskKey struct {
	conn string
	task int
}

// clusterStatus reads GET /connectors?expand=status from one worker: task -> "STATE@worker".
func clusterStatus(w *dworker) (map[taskKey]string, bool) {
	code, body := httpDo("GET", w.URL+"/connectors?expand=status", "")
	if code != 200 {
		return nil, false
	}
	var all map[string]struct {
		Status connStatus `json:"status"`
	}
	if json.Unmarshal([]byte(body), &all) != nil {
		return nil, false
	}
	out := map[taskKey]string{}
	for name, c := range all {
		for _, ts := range c.Status.Tasks {
			out[taskKey{name, ts.ID}] = ts.State + "@" + ts.WorkerID
		}
	}
	return out, true
}

// runningOn is every task RUNNING on a live worker: task -> worker id; ok=false until all are.
func runningOn(w *dworker, names []string, tasks int, live map[string]bool) (map[taskKey]string, bool) {
	st, ok := clusterStatus(w)
	if !ok {
		return nil, false
	}
	out := map[taskKey]string{}
	for _, n := range names {
		for i := range tasks {
			s, found := st[taskKey{n, i}]
			id, isRunning := strings.CutPrefix(s, "RUNNING@")
			if !found || !isRunning || !live[id] {
				return nil, false
			}
			out[taskKey{n, i}] = id
		}
	}
	return out, true
}

func balanced(own map[taskKey]string, live map[string]bool) bool {
	per := map[string]int{}
	for id := range live {
		per[id] = 0
	}
	for _, id := range own {
		per[id]++
	}
	lo, hi := -1, 0
	for _, n := range per {
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	return hi-lo <= 1
}

// localTasks is what a worker actually runs: the tasks whose metrics series exist on it (created when a task
// instance starts there, removed when it stopped).
func localTasks(w *dworker) (map[taskKey]bool, bool) {
	code, body := httpDo("GET", w.URL+"/metrics", "")
	if code != 200 {
		return nil, false
	}
	out := map[taskKey]bool{}
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, "connectd_sink_task_sink_record_read_total{") {
			continue
		}
		var k taskKey
		for _, kv := range strings.Split(l[strings.IndexByte(l, '{')+1:strings.IndexByte(l, '}')], ",") {
			name, v, _ := strings.Cut(kv, "=")
			v = strings.Trim(v, `"`)
			switch name {
			case "connector":
				k.conn = v
			case "task":
				k.task, _ = strconv.Atoi(v)
			}
		}
		out[k] = true
	}
	return out, true
}

// statusesTrue compares what every live worker's REST says with what each worker runs: every task runs on
// exactly one worker, and every worker reports it RUNNING there. It returns the differences.
func statusesTrue(c *cluster, names []string, tasks int) []string {
	runs := map[taskKey][]string{}
	live := c.LiveWorkers()
	for _, w := range live {
		lt, ok := localTasks(w)
		if !ok {
			return []string{w.Name + ": /metrics unavailable"}
		}
		for k := range lt {
			runs[k] = append(runs[k], fmt.Sprintf("127.0.0.1:%d", w.Port))
		}
	}
	var diffs []string
	for _, w := range live {
		st, ok := clusterStatus(w)
		if !ok {
			return []string{w.Name + ": status unavailable"}
		}
		for _, n := range names {
			for i := range tasks {
				k := taskKey{n, i}
				if len(runs[k]) != 1 {
					diffs = append(diffs, fmt.Sprintf("%s-%d runs on %v", n, i, runs[k]))
					continue
				}
				if want := "RUNNING@" + runs[k][0]; st[k] != want {
					diffs = append(diffs, fmt.Sprintf("%s says %s-%d is %s, it is %s", w.Name, n, i, st[k], want))
				}
			}
		}
	}
	return diffs
}

func evictions(c *cluster) int {
	n := 0
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, w := range c.Workers {
		n += strings.Count(w.Log.String(), "membership lost")
	}
	return n
}

// term sends SIGTERM (unless the process already exited) and waits for the worker to exit.
func term(t testing.TB, w *dworker) {
	if err := w.Cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		require.NoError(t, err)
	}
	select {
	case <-w.Done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not exit within 60 s of SIGTERM", w.Name)
	}
}

// procUsage is a live worker's resident memory (MB) and its CPU use since it started (% of one core).
func procUsage(w *dworker, started time.Time) (float64, float64) {
	pid := w.Cmd.Process.Pid
	var rss float64
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				rss = kb / 1024
			}
		}
	}
	var cpu float64
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) > 12 {
			ut, _ := strconv.ParseFloat(f[11], 64)
			st, _ := strconv.ParseFloat(f[12], 64)
			cpu = (ut + st) / 100 / time.Since(started).Seconds() * 100 // USER_HZ = 100
		}
	}
	return rss, cpu
}

// scaleProducer writes "<topic>:<n>" records to every topic, round-robin over partitions, until stopped.
type scaleProducer struct {
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	produced map[string]int // topic -> records acknowledged
}

func startScaleProducer(t testing.TB, addr string, topics []string) *scaleProducer {
	p := kafkatest.NewClient(t, addr, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	sp := &scaleProducer{stop: make(chan struct{}), done: make(chan struct{}), produced: map[string]int{}}
	go func() {
		defer close(sp.done)
		defer p.Close()
		for {
			select {
			case <-sp.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			var batch []*kgo.Record
			sp.mu.Lock()
			for _, tp := range topics {
				for i := range 5 {
					batch = append(batch, &kgo.Record{Topic: tp, Value: []byte(fmt.Sprintf("%s:%d", tp, sp.produced[tp]+i))})
				}
			}
			sp.mu.Unlock()
			if produceBatch(p, batch) != nil {
				continue // nothing counted: a partly written batch only shows up as duplicates-free extras
			}
			sp.mu.Lock()
			for _, tp := range topics {
				sp.produced[tp] += 5
			}
			sp.mu.Unlock()
		}
	}()
	return sp
}

func (sp *scaleProducer) finish() map[string]int {
	close(sp.stop)
	<-sp.done
	return sp.produced
}

// restLoad times GET /connectors?expand=status on random live workers from a few clients.
type restLoad struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	lat  []time.Duration
}

func startRESTLoad(c *cluster, clients int) *restLoad {
	rl := &restLoad{stop: make(chan struct{})}
	cl := &http.Client{Timeout: 30 * time.Second}
	for range clients {
		rl.wg.Add(1)
		go func() {
			defer rl.wg.Done()
			for {
				select {
				case <-rl.stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				live := c.LiveWorkers()
				if len(live) == 0 {
					continue
				}
				w := live[rand.IntN(len(live))]
				start := time.Now()
				resp, err := cl.Get(w.URL + "/connectors?expand=status")
				if err != nil {
					continue // a worker that was just killed
				}
				resp.Body.Close()
				if resp.StatusCode == 200 {
					rl.mu.Lock()
					rl.lat = append(rl.lat, time.Since(start))
					rl.mu.Unlock()
				}
			}
		}()
	}
	return rl
}

func (rl *restLoad) finish() (p50, p99 time.Duration, n int) {
	close(rl.stop)
	rl.wg.Wait()
	slices.Sort(rl.lat)
	if len(rl.lat) == 0 {
		return 0, 0, 0
	}
	return rl.lat[len(rl.lat)/2], rl.lat[len(rl.lat)*99/100], len(rl.lat)
}

// awaitTopics waits until the broker serves every partition of the just-created topics with a leader: a
// sink task started before gets "unknown topic or partition" from its consumer group session, restarts it
// from the last commit and redelivers what it had put (duplicates that are no part of what is measured).
func awaitTopics(t testing.TB, addr string, topics []string, parts int) {
	for _, tp := range topics {
		kafkatest.AwaitTopic(t, addr, tp, int32(parts), time.Minute)
	}
}

// runScale plays the scenario and returns what it measured. Failures of correctness (evictions while
// creating, statuses that do not match what runs, lost records) are returned in the result for the caller to
// judge; only a scenario that cannot go on fails t.
func runScale(t testing.TB, p scaleParams) scaleResult {
	var res scaleResult
	c := newCluster(t, "")
	workerproc.Binary(t) // built before anything is timed
	for i := range p.workers {
		c.Start(fmt.Sprintf("w%d", i+1), 0)
	}
	started := time.Now()
	var names, topics []string
	for i := range p.connectors {
		tp := fmt.Sprintf("%s-t%d", c.Group, i)
		createTopic(t, c.Kafka, tp, int32(p.partitions))
		topics = append(topics, tp)
		names = append(names, fmt.Sprintf("%s-c%d", c.Group, i))
	}
	awaitTopics(t, c.Kafka, topics, p.partitions)
	prod := startScaleProducer(t, c.Kafka, topics)
	rest := startRESTLoad(c, 4)
	first := c.Workers[0]
	evBefore := evictions(c)

	// creation: sequential POSTs spread over the workers, as an operator's script would send them
	t0 := time.Now()
	for i, n := range names {
		cfg := fmt.Sprintf(`{"name":%q,"config":{"connector.class":"FileStreamSink","tasks.max":"%d","topics":%q,"file":%q}}`,
			n, p.tasks, topics[i], filepath.Join(c.Dir, n+".txt"))
		w := c.Workers[i%len(c.Workers)]
		code, body := httpDo("POST", w.URL+"/connectors", cfg)
		require.Equal(t, 201, code, "POST %s to %s: %s", n, w.Name, body)
	}
	res.posts = time.Since(t0)
	var own map[taskKey]string
	require.Eventually(t, func() bool {
		var ok bool
		own, ok = runningOn(first, names, p.tasks, c.Live())
		return ok
	}, 5*time.Minute, 100*time.Millisecond, "tasks not all RUNNING after creation")
	res.create = time.Since(t0)
	res.createEvictions = evictions(c) - evBefore

	if p.add > 0 {
		before := own
		t0 = time.Now()
		var added []*dworker // started at once, as when a deployment is scaled out
		for i := range p.add {
			added = append(added, c.Launch(fmt.Sprintf("w%d", p.workers+i+1), 0))
		}
		for _, w := range added {
			w.AwaitHealthy(t)
		}
		require.Eventually(t, func() bool {
			var ok bool
			own, ok = runningOn(first, names, p.tasks, c.Live())
			return ok && balanced(own, c.Live())
		}, 5*time.Minute, 100*time.Millisecond, "not balanced after the scale-out")
		res.scaleOut = time.Since(t0)
		for k, w := range own {
			if before[k] != w {
				res.moved++
			}
		}
	}

	if p.failover && len(c.Workers) >= 3 {
		victim := c.Workers[1]
		if p.killLeader {
			victim = leaderOf(t, c)
		}
		if victim == first { // statuses are read from a survivor
			first = c.Workers[1]
		}
		t0 = time.Now()
		victim.Kill()
		t.Logf("SIGKILL of %s at %s", victim.Name, t0.UTC().Format("15:04:05.000")) // for a timeline from SCALE_LOGS
		require.Eventually(t, func() bool {
			_, ok := runningOn(first, names, p.tasks, c.Live())
			return ok
		}, 5*time.Minute, 100*time.Millisecond, "tasks of the SIGKILLed worker not running elsewhere")
		res.sigkill = time.Since(t0)
		// the stopping worker counts as gone from the signal on: its tasks must run elsewhere
		killed := victim
		for _, w := range c.Workers[2:] {
			if w.Alive() && w != first {
				victim = w
				break
			}
		}
		require.NotSame(t, killed, victim, "no worker left to SIGTERM")
		survivors := func() map[string]bool {
			l := c.Live()
			delete(l, fmt.Sprintf("127.0.0.1:%d", victim.Port))
			return l
		}
		t0 = time.Now()
		require.NoError(t, victim.Cmd.Process.Signal(syscall.SIGTERM))
		require.Eventually(t, func() bool {
			_, ok := runningOn(first, names, p.tasks, survivors())
			return ok
		}, 5*time.Minute, 100*time.Millisecond, "tasks of the SIGTERMed worker not running elsewhere")
		res.sigterm = time.Since(t0)
		term(t, victim) // waits for the exit
		res.sigtermExit = time.Since(t0)
	}

	res.restP50, res.restP99, res.restCalls = rest.finish()
	for _, w := range c.LiveWorkers() {
		rss, cpu := procUsage(w, started)
		res.rssMB = append(res.rssMB, rss)
		res.cpuPercent = append(res.cpuPercent, cpu)
	}
	produced := prod.finish()
	for _, n := range produced {
		res.produced += n
	}
	// every acknowledged record reaches its connector's file (at least once)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res.lost, res.duplicated = 0, 0
		for i, tp := range topics {
			vals := fileValues(t, filepath.Join(c.Dir, names[i]+".txt"))
			for j := range produced[tp] {
				switch n := vals[fmt.Sprintf("%s:%d", tp, j)]; {
				case n == 0:
					res.lost++
				case n > 1:
					res.duplicated += n - 1
				}
			}
		}
		if res.lost == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	res.evictions = evictions(c)
	res.statusDiffs = scaleStatusesTrue(c, names, p.tasks)
	if dir := os.Getenv("SCALE_LOGS"); dir != "" { // the workers' logs, for a closer look at a run
		for _, w := range c.AllWorkers() {
			_ = os.WriteFile(filepath.Join(dir, c.Group+"-"+w.Name+".log"), []byte(w.Log.String()), 0o644)
		}
	}
	// a benchmark's cleanups run after its last iteration: stop this run's workers now, or every later run
	// shares the machine with them
	for _, w := range c.AllWorkers() {
		w.Kill()
	}
	return res
}

// scaleStatusesTrue waits (bounded) until every worker's statuses match what runs where, and returns the
// differences left if they never do.
func scaleStatusesTrue(c *cluster, names []string, tasks int) []string {
	var diffs []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if diffs = statusesTrue(c, names, tasks); len(diffs) == 0 {
			return nil
		}
	}
	return diffs
}

// TestDistributedScale: 20 connectors created one POST after another on 4 workers: no worker loses its group
// membership while they are created, and at the end every worker's REST status is what actually runs where.
// No times are asserted (BenchmarkDistributedScale measures them).
func TestDistributedScale(t *testing.T) {
	p := scaleParamsFromEnv(t, scaleParams{workers: 4, connectors: 20, partitions: 2, tasks: 2})
	c := newCluster(t, "")
	tStart := time.Now()
	for i := range p.workers {
		c.Start(fmt.Sprintf("w%d", i+1), 0)
	}
	t.Logf("%d workers healthy after %v", p.workers, time.Since(tStart).Round(time.Millisecond))
	var names, topics []string
	for i := range p.connectors {
		tp := fmt.Sprintf("%s-t%d", c.Group, i)
		createTopic(t, c.Kafka, tp, int32(p.partitions))
		topics = append(topics, tp)
		names = append(names, fmt.Sprintf("%s-c%d", c.Group, i))
	}
	awaitTopics(t, c.Kafka, topics, p.partitions)
	t0 := time.Now()
	for i, n := range names {
		tp := topics[i]
		cfg := fmt.Sprintf(`{"name":%q,"config":{"connector.class":"FileStreamSink","tasks.max":"%d","topics":%q,"file":%q}}`,
			n, p.tasks, tp, filepath.Join(c.Dir, n+".txt"))
		w := c.Workers[i%len(c.Workers)]
		code, body := httpDo("POST", w.URL+"/connectors", cfg)
		require.Equal(t, 201, code, "POST %s to %s: %s", n, w.Name, body)
	}
	posts := time.Since(t0)
	require.Eventually(t, func() bool {
		_, ok := runningOn(c.Workers[0], names, p.tasks, c.Live())
		return ok
	}, 5*time.Minute, 200*time.Millisecond, "tasks not all RUNNING")
	t.Logf("%s: POSTs %v, all RUNNING %v after the first", p, posts.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	require.Zero(t, evictions(c), "workers lost their group membership while connectors were created")
	tCheck := time.Now()
	require.Empty(t, scaleStatusesTrue(c, names, p.tasks), "statuses differ from what runs")
	t.Logf("statuses checked in %v", time.Since(tCheck).Round(time.Millisecond))
}

// BenchmarkDistributedScale runs the whole scenario (default: 4 workers + 2 joining, 20 connectors with
// tasks.max=6 on 6-partition topics, a SIGKILL and a SIGTERM, records produced throughout) once per
// iteration and reports its times; SCALE_* variables resize it (scaleParamsFromEnv). Each run's numbers are
// logged as a BENCHMARKS.md table row.
//
//	scripts/with-kafka.sh go test -run '^$' -bench DistributedScale -benchtime 3x -timeout 60m ./test/e2e/distributed/
func BenchmarkDistributedScale(b *testing.B) {
	p := scaleParamsFromEnv(b, scaleParams{workers: 4, add: 2, connectors: 20, partitions: 6, tasks: 6, failover: true})
	b.Logf("scenario: %s", p)
	b.Log("| run | POSTs s | all RUNNING s | evictions creating | scale-out s | moved | SIGKILL s | SIGTERM s (exit s) | REST p50/p99 ms | records | lost | dup | RSS MB | CPU % |")
	var sum scaleResult
	for i := 0; i < b.N; i++ {
		r := runScale(b, p)
		rss, cpu := "", ""
		for j := range r.rssMB {
			rss += fmt.Sprintf("%.0f ", r.rssMB[j])
			cpu += fmt.Sprintf("%.0f ", r.cpuPercent[j])
		}
		b.Logf("| %d | %.1f | %.1f | %d | %.1f | %d | %.1f | %.1f (%.1f) | %.0f/%.0f | %d | %d | %d | %s| %s|", i+1,
			r.posts.Seconds(), r.create.Seconds(), r.createEvictions, r.scaleOut.Seconds(), r.moved, r.sigkill.Seconds(),
			r.sigterm.Seconds(), r.sigtermExit.Seconds(), ms(r.restP50), ms(r.restP99), r.produced, r.lost, r.duplicated, rss, cpu)
		if r.createEvictions > 0 || r.lost > 0 || len(r.statusDiffs) > 0 {
			b.Errorf("run %d: %d evictions while creating, %d records lost, statuses wrong: %v", i+1, r.createEvictions, r.lost, r.statusDiffs)
		}
		sum.create += r.create
		sum.scaleOut += r.scaleOut
		sum.sigkill += r.sigkill
		sum.sigterm += r.sigterm
	}
	n := float64(b.N)
	b.ReportMetric(sum.create.Seconds()/n, "create_s")
	b.ReportMetric(sum.scaleOut.Seconds()/n, "scaleout_s")
	b.ReportMetric(sum.sigkill.Seconds()/n, "sigkill_s")
	b.ReportMetric(sum.sigterm.Seconds()/n, "sigterm_s")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
