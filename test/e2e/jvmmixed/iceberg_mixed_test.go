package jvmmixed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/icebergtest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// The Apache Iceberg Kafka Connect sink run by the JVM workers of TestIcebergConnectorAcrossJVMAndGo: the same
// connector class the Go workers implement, fetched from Maven Central with its dependencies
// (scripts/bench-iceberg-jvm/pom.xml) into the cache the side-by-side benchmark uses.
const (
	icebergSinkClass    = "org.apache.iceberg.connect.IcebergSinkConnector"
	icebergSinkVersion  = "1.10.1"
	icebergCommitMs     = 2000
	icebergTasks        = 4
	icebergPartitions   = 6
	icebergNamespace    = "mixed"
	icebergPhaseTimeout = 180 * time.Second
)

// TestIcebergConnectorAcrossJVMAndGo runs one Iceberg sink connector (the Apache sink's class and the config a
// JVM user has: a REST catalog, a pre-created table, schemaless JSON, 6 partitions, tasks.max=4) in one Connect
// group of JVM Connect 4.3.1 workers, whose plugin.path holds the Apache Iceberg sink 1.10.1, and Go workers, so
// that its tasks land on both kinds and both kinds' tasks and coordinators share its control topic. Under a
// continuous load of records with unique ids (an idempotent producer) workers of both kinds are SIGKILLed and
// others join; then every record in the topic must be in the table exactly once, read back by the independent
// readers (DuckDB and Iceberg's Java generic reader), no status view of a live worker nor the status topic may
// ever show a FAILED connector or task, and where a phase leaves only one kind of worker alive with data
// flowing, that kind's coordinator must have committed (the snapshot's iceberg-version tells Java's "Apache
// Iceberg 1.10.1" from iceberg-go's "Apache Iceberg Go").
//
//   - jvm-led: a JVM worker leads and commits alone, two Go workers join, one Go worker and then the JVM are
//     killed (the Go side must commit alone), a JVM worker joins the Go-led group.
//   - go-led: two Go workers lead and commit alone, a JVM worker joins and is killed, another joins, the Go
//     worker running the coordinator's task is killed (the task moves to the JVM or to the other Go worker).
//
// The Apache sink 1.10.1 has a liveness bug these kills hit in most runs (apache/iceberg#13593): a coordinator
// can outlive its task with the task's catalog closed, and then nothing is committed until its JVM exits
// (zombieSignature). The test then restarts that JVM worker, as an operator would, and logs it; the end check
// still wants every record exactly once. Its coordinator can also register one data file in two snapshots
// (apache/iceberg#16282): a file that a JVM worker wrote and only the JVM coordinator committed is logged and its
// rows counted once (jvmReregistered); any other row read twice fails the check. TestIcebergApacheSinkAloneBaseline
// runs the same kills on JVM workers alone.
//
// connectd speaks the Apache sink's control-topic events for this connector (connectors/iceberg/README.md,
// "Control protocols"). Run alone:
//
//	go test ./test/e2e/jvmmixed -run TestIcebergConnectorAcrossJVMAndGo -v -count=1 -timeout 30m
//
// (ICEBERG_MIXED_LOGS=DIR keeps every worker's whole log there, a directory per phase.)
func TestIcebergConnectorAcrossJVMAndGo(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a Kafka broker, JVM Connect workers with the Apache Iceberg sink and a REST catalog server: skipped under -short")
	}
	t.Parallel()
	cp, plugin, cat := icebergMixedSetup(t)
	workerproc.Binary(t)

	t.Run("jvm-led", func(t *testing.T) {
		g := newIcebergGroup(t, cp, plugin, cat, "jvm_led")
		j1 := g.icebergJVM() // first member: the JVM leads
		g.createSink(j1.URL)
		g.awaitRunning("every task on the JVM leader", icebergPhaseTimeout, within(j1.ID))
		g.mark("running on the JVM leader")
		stop := g.produce()
		g.awaitCommit("jvm", "a commit of the JVM coordinator while only JVM tasks run", g.started)

		g1, g2 := g.goWorker("go1"), g.goWorker("go2")
		joined := g.mark("two Go workers joined the JVM-led group")
		own := g.awaitRunning("tasks on the JVM and both Go workers", icebergPhaseTimeout, covers(j1.ID, gid(g1), gid(g2)))
		mixed := g.mark(fmt.Sprintf("tasks on both kinds after %v: %v; %s", time.Since(joined).Round(10*time.Millisecond), own, g.coordinatorAt()))
		g.awaitCommit("", "a commit with tasks on both kinds", mixed)

		g.atRoundStart()
		g1.Kill()
		killed := g.mark("SIGKILL of Go worker " + gid(g1) + ", as a commit round starts")
		own = g.awaitRunning("every task on the JVM and the other Go worker", icebergPhaseTimeout, within(j1.ID, gid(g2)))
		back := g.mark(fmt.Sprintf("tasks on the survivors after %v: %v; %s", time.Since(killed).Round(10*time.Millisecond), own, g.coordinatorAt()))
		g.awaitCommit("", "a commit after the Go worker's SIGKILL", back)
		g.handover(killed)

		g.atRoundStart()
		j1.Kill()
		killed = g.mark("SIGKILL of the JVM leader " + j1.ID + ", as a commit round starts")
		g.awaitRunning("every task on the last Go worker", icebergPhaseTimeout, within(gid(g2)))
		back = g.mark(fmt.Sprintf("every task on the Go worker after %v", time.Since(killed).Round(10*time.Millisecond)))
		g.awaitCommit("go", "a commit of the Go coordinator while only Go tasks run", back)
		g.handover(killed)

		j2 := g.icebergJVM()
		joined = g.mark("a JVM worker " + j2.ID + " started in the Go-led group")
		own = g.awaitRunning("a share for the JVM worker joining the Go-led group", icebergPhaseTimeout, covers(j2.ID))
		mixed = g.mark(fmt.Sprintf("the joining JVM worker runs tasks after %v: %v; %s", time.Since(joined).Round(10*time.Millisecond), own, g.coordinatorAt()))
		g.awaitCommit("", "a commit after the JVM worker joined", mixed)
		g.finish(stop)
	})

	t.Run("go-led", func(t *testing.T) {
		g := newIcebergGroup(t, cp, plugin, cat, "go_led")
		g1, g2 := g.goWorker("go1"), g.goWorker("go2") // go1 leads
		g.createSink(g2.URL)
		g.awaitRunning("tasks on both Go workers", icebergPhaseTimeout, covers(gid(g1), gid(g2)))
		g.mark("running on both Go workers")
		stop := g.produce()
		g.awaitCommit("go", "a commit of the Go coordinator while only Go tasks run", g.started)

		j1 := g.icebergJVM()
		joined := g.mark("a JVM worker " + j1.ID + " started in the Go-led group")
		own := g.awaitRunning("a share for the JVM worker", icebergPhaseTimeout, covers(j1.ID))
		mixed := g.mark(fmt.Sprintf("tasks on both kinds after %v: %v; %s", time.Since(joined).Round(10*time.Millisecond), own, g.coordinatorAt()))
		g.awaitCommit("", "a commit with tasks on both kinds", mixed)

		g.atRoundStart()
		j1.Kill()
		killed := g.mark("SIGKILL of the JVM worker " + j1.ID + ", as a commit round starts")
		g.awaitRunning("every task on the Go workers", icebergPhaseTimeout, within(gid(g1), gid(g2)))
		back := g.mark(fmt.Sprintf("every task on the Go workers after %v", time.Since(killed).Round(10*time.Millisecond)))
		g.awaitCommit("go", "a commit of the Go coordinator after the JVM's SIGKILL", back)
		g.handover(killed)

		j2 := g.icebergJVM()
		joined = g.mark("a second JVM worker " + j2.ID + " started")
		own = g.awaitRunning("a share for the second JVM worker", icebergPhaseTimeout, covers(j2.ID))
		at := g.coordinatorAt()
		g.mark(fmt.Sprintf("the second JVM worker runs tasks after %v: %v; %s", time.Since(joined).Round(10*time.Millisecond), own, at))

		// the Go worker of the coordinator's task: that task moves, to the JVM worker or to the other Go worker
		victim, survivor := g1, g2
		if strings.HasSuffix(at, " "+gid(g2)) {
			victim, survivor = g2, g1
		}
		g.atRoundStart()
		victim.Kill()
		killed = g.mark("SIGKILL of Go worker " + gid(victim) + ", as a commit round starts")
		own = g.awaitRunning("every task on the JVM and the other Go worker", icebergPhaseTimeout, within(j2.ID, gid(survivor)))
		back = g.mark(fmt.Sprintf("tasks on the survivors after %v: %v; %s", time.Since(killed).Round(10*time.Millisecond), own, g.coordinatorAt()))
		g.awaitCommit("", "a commit after the SIGKILL", back)
		g.handover(killed)
		g.finish(stop)
	})
}

// TestIcebergApacheSinkAloneBaseline runs the scenario of TestIcebergConnectorAcrossJVMAndGo with JVM workers
// only (two workers, the coordinator's worker SIGKILLed twice, a third joins): the harness on its own and the
// Apache sink's own guarantee under these kills, the reference the mixed phases are compared with. No connectd
// code runs in it, and the Apache sink 1.10.1 does not keep its guarantee here in every run: besides the stalled
// coordinator (zombieSignature), it registers a data file twice (apache/iceberg#16282) and, after a coordinator
// restart, can leave records whose offsets its workers committed out of every snapshot. So it is not part of
// make test; make test-jvm-baseline runs it.
func TestIcebergApacheSinkAloneBaseline(t *testing.T) {
	if os.Getenv("ICEBERG_JVM_BASELINE") == "" {
		t.Skip("the Apache sink alone under SIGKILL, a baseline that needs no connectd: make test-jvm-baseline (ICEBERG_JVM_BASELINE=1)")
	}
	cp, plugin, cat := icebergMixedSetup(t)
	g := newIcebergGroup(t, cp, plugin, cat, "jvm_only")
	j1, j2 := g.icebergJVM(), g.icebergJVM()
	g.createSink(j2.URL)
	g.awaitRunning("tasks on both JVM workers", icebergPhaseTimeout, covers(j1.ID, j2.ID))
	g.mark("running on both JVM workers; " + g.coordinatorAt())
	stop := g.produce()
	g.awaitCommit("jvm", "a commit of the JVM coordinator", g.started)

	for kill := 1; kill <= 2; kill++ {
		victim := g.coordinatorJVM()
		g.atRoundStart()
		victim.Kill()
		killed := g.mark(fmt.Sprintf("SIGKILL %d: the JVM worker %s of the coordinator's task, as a commit round starts", kill, victim.ID))
		var live []string
		for _, j := range g.jvms {
			if j.Alive() {
				live = append(live, j.ID)
			}
		}
		g.awaitRunning("every task on the surviving JVM workers", icebergPhaseTimeout, within(live...))
		back := g.mark(fmt.Sprintf("tasks on %v again after %v; %s", live, time.Since(killed).Round(10*time.Millisecond), g.coordinatorAt()))
		g.awaitCommit("jvm", "a commit of the JVM coordinator after the SIGKILL", back)
		if kill == 1 {
			j3 := g.icebergJVM()
			joined := g.mark("a third JVM worker " + j3.ID + " started")
			g.awaitRunning("a share for the joining JVM worker", icebergPhaseTimeout, covers(j3.ID))
			back := g.mark(fmt.Sprintf("the joining JVM worker runs tasks after %v; %s", time.Since(joined).Round(10*time.Millisecond), g.coordinatorAt()))
			g.awaitCommit("jvm", "a commit after the join", back)
		}
	}
	g.finish(stop)
}

// icebergMixedSetup prepares what both Iceberg cluster tests need: the JVM Connect classpath, the Apache sink's
// plugin path, the DuckDB reader's venv (before any clock starts) and a REST catalog with the test namespace.
func icebergMixedSetup(t *testing.T) (cp, plugin string, cat icebergCatalog) {
	t.Helper()
	cp = jvmClasspath(t)
	plugin = icebergSinkPluginPath(t)
	icebergtest.Python(t)
	dir := t.TempDir()
	cat = &restCatalog{uri: icebergtest.StartRESTCatalog(t, dir), warehouse: "file://" + filepath.Join(dir, "warehouse")}
	cat.createNamespace(t, icebergNamespace)
	return cp, plugin, cat
}

// icebergCatalog is the catalog both kinds of worker share: the test creates the table in it, reads the
// snapshots both sides committed from it, and gives the sink the catalog keys that reach it.
type icebergCatalog interface {
	createNamespace(t testing.TB, ns string)
	createTable(t testing.TB, ns, name string)
	load(ns, name string) (*tableMeta, error)
	sinkProps() map[string]string
}

func (c *restCatalog) sinkProps() map[string]string {
	return map[string]string{"iceberg.catalog.type": "rest", "iceberg.catalog.uri": c.uri, "iceberg.catalog.warehouse": c.warehouse}
}

// icebergGroup is a mixedGroup (its FAILED watcher, status views and topic) running one Apache-sink Iceberg
// connector into a table of the shared catalog.
type icebergGroup struct {
	*mixedGroup
	plugin  string
	cat     icebergCatalog
	tbl     string // table name in icebergNamespace
	control string // the connector's control topic
	started time.Time

	evMu   sync.Mutex
	events []string // what the test did, by time since the start

	zombies  []string    // the Apache sink's stalled coordinators the test restarted a worker for (see unstall)
	pastLogs [][2]string // worker id and log of each JVM incarnation restartJVM replaced
}

func newIcebergGroup(t *testing.T, cp, plugin string, cat icebergCatalog, tbl string) *icebergGroup {
	m := newMixedGroup(t, cp, icebergPartitions, icebergTasks)
	g := &icebergGroup{mixedGroup: m, plugin: plugin, cat: cat, tbl: tbl, control: m.Group + "-control", started: time.Now()}
	// the control topic exists before either side starts (1 partition, as the Apache sink's docs ask for; the sink
	// itself creates no topic and relies on the broker's auto-creation otherwise)
	createTopic(t, m.Kafka, g.control, 1)
	// pre-created: with iceberg.tables.auto-create-enabled the JVM tasks race each other creating it
	cat.createTable(t, icebergNamespace, tbl)
	t.Cleanup(func() { g.keepLogs() })
	return g
}

// mark logs a step with the time since the phase started and returns its time.
func (g *icebergGroup) mark(what string) time.Time {
	now := time.Now()
	s := fmt.Sprintf("+%5.1fs %s", now.Sub(g.started).Seconds(), what)
	g.evMu.Lock()
	g.events = append(g.events, s)
	g.evMu.Unlock()
	g.t.Log(s)
	return now
}

// icebergJVM starts a JVM Connect worker with the Apache Iceberg sink on its plugin.path and adds it to the
// group's status views.
func (g *icebergGroup) icebergJVM() *jworker {
	j := launchIcebergJVM(g.cluster, g.cp, g.plugin, 0)
	g.mu.Lock()
	g.jvms = append(g.jvms, j)
	g.mu.Unlock()
	return j
}

func (g *icebergGroup) sinkConfig() string {
	cfg := map[string]string{
		"connector.class":                    icebergSinkClass,
		"tasks.max":                          strconv.Itoa(icebergTasks),
		"topics":                             g.topic,
		"key.converter":                      "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                    "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":     "false",
		"iceberg.tables":                     icebergNamespace + "." + g.tbl,
		"iceberg.tables.auto-create-enabled": "false",
		"iceberg.control.topic":              g.control,
		"iceberg.control.commit.interval-ms": strconv.Itoa(icebergCommitMs),
		// a round missing a killed task's answers commits what it has after this (default 30 s)
		"iceberg.control.commit.timeout-ms": "10000",
		// the sink's consumer group (connect-<name>) and the Apache sink's control consumers (<group>-coord,
		// cg-control-*) notice a SIGKILLed member after 6 s instead of the consumer default of 45 s
		"consumer.override.session.timeout.ms":    "6000",
		"consumer.override.heartbeat.interval.ms": "1000",
		"iceberg.kafka.session.timeout.ms":        "6000",
		"iceberg.kafka.heartbeat.interval.ms":     "1000",
	}
	for k, v := range g.cat.sinkProps() {
		cfg[k] = v
	}
	b, err := json.Marshal(cfg)
	require.NoError(g.t, err)
	return string(b)
}

// createSink creates the connector through the REST API at url (forwarded to the leader when that worker does
// not lead).
func (g *icebergGroup) createSink(url string) {
	g.t.Helper()
	cfg := g.sinkConfig()
	g.waitFor("creating the connector", 90*time.Second, func() (bool, string) {
		code, body := httpDo("PUT", url+"/connectors/"+g.name+"/config", cfg)
		if code == 409 || code == 0 { // no leader yet (the JVM answers 409 until its first rebalance)
			return false, fmt.Sprintf("%d %s", code, body)
		}
		require.Contains(g.t, []int{200, 201}, code, body)
		return true, ""
	})
	g.mark("connector created through " + url)
}

// produce writes {"id": n, "payload": ...} records with unique, increasing ids round-robin over the partitions
// with an idempotent producer (a produce retried by the client cannot store a record twice) until stopped. A
// batch that fails is not sent again (its ids may or may not be stored): what the table must hold is read back
// from the topic at the end.
func (g *icebergGroup) produce() (stop func() int) {
	t := g.t
	p := kafkatest.NewClient(t, g.Kafka, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	var acked, failed, next int
	quit, done := make(chan struct{}), make(chan struct{})
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
				id := next + i
				batch = append(batch, &kgo.Record{Topic: g.topic,
					Value: []byte(fmt.Sprintf(`{"id":%d,"payload":"record %d of %s"}`, id, id, g.tbl))})
			}
			next += len(batch)
			if err := produceBatch(p, batch); err != nil {
				failed++
			} else {
				acked += len(batch)
			}
			time.Sleep(40 * time.Millisecond)
		}
	}()
	g.mark("producing")
	return func() int {
		close(quit)
		<-done
		p.Close()
		g.mark(fmt.Sprintf("stopped producing: %d records acknowledged, %d batches failed", acked, failed))
		return acked
	}
}

// sinkSnapshots lists the table's snapshots a sink coordinator committed (they carry kafka.connect.commit-id).
func (g *icebergGroup) sinkSnapshots() ([]icebergSnapshot, error) {
	tm, err := g.cat.load(icebergNamespace, g.tbl)
	if err != nil {
		return nil, err
	}
	var out []icebergSnapshot
	for _, s := range tm.Snapshots {
		if s.Summary["kafka.connect.commit-id"] != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// committerKind tells which implementation committed a snapshot: both Iceberg libraries write their
// iceberg-version into every snapshot summary, Java "Apache Iceberg 1.10.1 (commit …)", iceberg-go "Apache
// Iceberg Go <version>".
func committerKind(s icebergSnapshot) string {
	v := s.Summary["iceberg-version"]
	switch {
	case strings.HasPrefix(v, "Apache Iceberg Go"):
		return "go"
	case strings.HasPrefix(v, "Apache Iceberg"):
		return "jvm"
	}
	return "unknown (iceberg-version " + strconv.Quote(v) + ")"
}

// awaitCommit waits for a sink snapshot committed at or after since, by a coordinator of the given kind ("jvm",
// "go", or "" for either), failing on a FAILED state meanwhile.
func (g *icebergGroup) awaitCommit(kind, what string, since time.Time) {
	g.t.Helper()
	var found icebergSnapshot
	g.waitFor(what, 180*time.Second, func() (bool, string) {
		if g.unstall() {
			return false, "restarted a JVM worker with a stalled coordinator"
		}
		snaps, err := g.sinkSnapshots()
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, s := range snaps {
			if s.TimestampMs < since.UnixMilli() {
				continue
			}
			k := committerKind(s)
			seen = append(seen, k)
			if kind == "" || k == kind {
				found = s
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d sink snapshots, since then by %v", len(snaps), seen)
	})
	g.mark(fmt.Sprintf("%s: snapshot %d by the %s coordinator (%s records added)", what, found.ID, committerKind(found), found.Summary["added-records"]))
}

// handover logs how long after the SIGKILL at killed the first sink snapshot came, against the target of one
// commit interval plus 15 s, and returns it (false: no snapshot since). TestIcebergCommitterHandover holds the
// median of its runs to the target.
func (g *icebergGroup) handover(killed time.Time) (time.Duration, bool) {
	g.t.Helper()
	snaps, err := g.sinkSnapshots()
	if err != nil {
		g.mark("handover: " + err.Error())
		return 0, false
	}
	first := int64(0)
	for _, s := range snaps {
		if s.TimestampMs >= killed.UnixMilli() && (first == 0 || s.TimestampMs < first) {
			first = s.TimestampMs
		}
	}
	if first == 0 {
		g.mark("handover: no sink snapshot since the SIGKILL")
		return 0, false
	}
	took := time.UnixMilli(first).Sub(killed)
	target := time.Duration(icebergCommitMs)*time.Millisecond + 15*time.Second
	g.mark(fmt.Sprintf("handover: the first snapshot %v after the SIGKILL (target %v: within %v)",
		took.Round(10*time.Millisecond), target, took <= target))
	return took, true
}

// zombieSignature is what the Apache sink 1.10.1 logs every commit interval when a coordinator outlived its task:
// IcebergSinkTask.stop closes the task's catalog after CommitterImpl.close, which stops the coordinator only if
// describing the connector's consumer group finds it STABLE with the first partition in the task's assignment.
// A task stopped while the group rebalances (after a SIGKILL, or when a restarted connector's new task configs,
// a new random iceberg.coordinator.transactional.suffix, restart every task) leaves its coordinator thread running
// with a closed REST client: it keeps the <group>-coord consumer group's only partition, reads every answer and
// fails every table commit, and the coordinator of the task's successor gets no partition, so nothing is
// committed until that JVM exits.
const zombieSignature = "Commit failed, will try again next cycle (org.apache.iceberg.connect.channel.Coordinator)\njava.lang.IllegalStateException: Connection pool shut down"

// unstall restarts (SIGKILL, then the same worker id) a live JVM worker whose log shows the Apache sink's stalled
// coordinator (zombieSignature) twice, as an operator would, and says whether it did. The phase goes on: the
// records stay in the control topic and the next coordinator commits them, which the end check verifies.
func (g *icebergGroup) unstall() bool {
	for _, j := range g.jvms {
		if !j.Alive() {
			continue
		}
		log := j.Log.String()
		n := strings.Count(log, zombieSignature)
		if n < 2 {
			continue
		}
		first := strings.Index(log, zombieSignature)
		start := strings.LastIndex(log[:first], "\n[")
		evidence := log[start+1 : first+len(zombieSignature)]
		g.zombies = append(g.zombies, j.ID)
		g.mark(fmt.Sprintf("the Apache sink's coordinator on JVM worker %s is stalled (%d failed commits with its catalog closed, first:\n%s\n); restarting that worker", j.ID, n, evidence))
		g.restartJVM(j)
		return true
	}
	return false
}

// restartJVM SIGKILLs a JVM worker and starts it again with the same worker id (port), in place: the phase's
// variable and the group's status views follow the new process.
func (g *icebergGroup) restartJVM(j *jworker) {
	j.Kill()
	g.pastLogs = append(g.pastLogs, [2]string{j.ID, j.Log.String()})
	port, err := strconv.Atoi(j.ID[strings.LastIndexByte(j.ID, ':')+1:])
	require.NoError(g.t, err)
	n := launchIcebergJVM(g.cluster, g.cp, g.plugin, port)
	g.mu.Lock()
	*j = *n
	g.mu.Unlock()
	g.awaitRunning("the restarted JVM worker back with tasks", icebergPhaseTimeout, covers(j.ID))
	g.mark("JVM worker " + j.ID + " restarted and running tasks")
}

// coordinatorJVM returns the live JVM worker running the task that holds partition 0 of the topic: the Apache
// sink starts its coordinator in that task (CommitterImpl.containsFirstPartition).
func (g *icebergGroup) coordinatorJVM() *jworker {
	g.t.Helper()
	var out *jworker
	g.waitFor("the JVM worker of the task holding partition 0", 60*time.Second, func() (bool, string) {
		w, detail := g.partitionZeroWorker()
		if w == "" {
			return false, detail
		}
		for _, j := range g.jvms {
			if j.Alive() && j.ID == w {
				out = j
				return true, ""
			}
		}
		return false, "partition 0 on " + w + ", not a live JVM worker"
	})
	return out
}

// coordinatorAt says where the task holding partition 0 runs (both sides elect that task's committer as the
// coordinator), waiting up to 20 s for the connector's consumer group to settle, for the log.
func (g *icebergGroup) coordinatorAt() string {
	var w, detail string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if w, detail = g.partitionZeroWorker(); w != "" || time.Now().After(deadline) {
			break
		}
	}
	if w == "" {
		return "partition 0: " + detail
	}
	for _, v := range g.views() {
		if strings.HasSuffix(v.ID, " "+w) {
			return "partition 0 on " + v.ID
		}
	}
	return "partition 0 on " + w
}

// atRoundStart waits (up to two commit intervals) until the control topic's end offset moves: a commit round
// starts, or its answers arrive. A SIGKILL then hits the round in flight.
func (g *icebergGroup) atRoundStart() {
	admin := kafkatest.NewAdmin(g.t, g.Kafka)
	defer admin.Close()
	start, err := controlEnd(admin, g.control)
	require.NoError(g.t, err)
	for deadline := time.Now().Add(2 * icebergCommitMs * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if end, err := controlEnd(admin, g.control); err == nil && end > start {
			return
		}
	}
}

// controlEnd is the end offset of the control topic's partition 0.
func controlEnd(admin *kadm.Client, control string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listed, err := admin.ListEndOffsets(ctx, control)
	if err != nil {
		return 0, err
	}
	o, ok := listed.Lookup(control, 0)
	if !ok {
		return 0, fmt.Errorf("no end offset of %s/0", control)
	}
	return o.Offset, o.Err
}

// partitionZeroWorker finds the worker id of the task whose consumer (client id connector-consumer-<name>-<task>,
// on both kinds of worker) holds partition 0 in the connector's consumer group.
func (g *icebergGroup) partitionZeroWorker() (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin := kafkatest.NewAdmin(g.t, g.Kafka)
	defer admin.Close()
	described, err := admin.DescribeGroups(ctx, "connect-"+g.name)
	if err == nil {
		err = described.Error()
	}
	ds := described.Sorted()
	if err != nil || len(ds) != 1 {
		return "", fmt.Sprintf("describe connect-%s: %v", g.name, err)
	}
	if ds[0].State != "Stable" {
		return "", "connect-" + g.name + " is " + ds[0].State
	}
	task := -1
	for _, mem := range ds[0].Members {
		as, ok := mem.Assigned.AsConsumer()
		if !ok || as == nil {
			continue
		}
		for _, at := range as.Topics {
			if at.Topic != g.topic {
				continue
			}
			for _, p := range at.Partitions {
				if p == 0 {
					prefix := "connector-consumer-" + g.name + "-"
					if n, err := strconv.Atoi(strings.TrimPrefix(mem.ClientID, prefix)); err == nil && strings.HasPrefix(mem.ClientID, prefix) {
						task = n
					}
				}
			}
		}
	}
	if task < 0 {
		return "", "no member holds partition 0"
	}
	own, ok, detail := g.settled("RUNNING", nil)
	if !ok {
		return "", detail
	}
	return own[task], ""
}

// topicIDs reads the whole topic back: the ids of the records it holds (with their count: each must be 1).
func (g *icebergGroup) topicIDs() map[int64]int {
	t := g.t
	t.Helper()
	total := 0
	for _, end := range kafkatest.EndOffsets(t, g.Kafka, g.topic) {
		total += int(end)
	}
	msgs := kafkatest.ConsumeAll(t, g.Kafka, g.topic, total, 120*time.Second)
	require.Len(t, msgs, total, "records read back from the topic")
	out := make(map[int64]int, total)
	for _, m := range msgs {
		var v struct {
			ID int64 `json:"id"`
		}
		require.NoError(t, json.Unmarshal(m.Value, &v), "record %s", m.Value)
		out[v.ID]++
	}
	return out
}

// finish stops the producer, waits until the table holds a row for every record of the topic, lets a few more
// commit intervals pass (a late commit would add a duplicate), then checks with both independent readers that
// every record is in the table exactly once, and the status topic for FAILED records the polling may have missed.
func (g *icebergGroup) finish(stop func() int) {
	t := g.t
	t.Helper()
	acked := stop()
	stopped := time.Now()
	want := g.topicIDs()
	var twice []int64
	for id, n := range want {
		if n != 1 {
			twice = append(twice, id)
		}
	}
	require.Empty(t, twice, "ids stored more than once in the topic (the producer is idempotent and never resends)")
	require.GreaterOrEqual(t, len(want), acked, "the topic holds fewer records than were acknowledged")
	t.Logf("the topic holds %d records (%d acknowledged)", len(want), acked)

	lastSnap, lastDetail := int64(-1), ""
	g.waitFor("a row for every record of the topic in the table", 300*time.Second, func() (bool, string) {
		if g.unstall() {
			return false, "restarted a JVM worker with a stalled coordinator"
		}
		tm, err := g.cat.load(icebergNamespace, g.tbl)
		if err != nil {
			return false, err.Error()
		}
		cur := tm.current()
		if cur == nil {
			return false, "no snapshot"
		}
		total, _ := strconv.Atoi(cur.Summary["total-records"])
		if total < len(want) {
			return false, fmt.Sprintf("the current snapshot holds %d records of %d", total, len(want))
		}
		if cur.ID == lastSnap {
			return false, lastDetail
		}
		lastSnap = cur.ID
		res := icebergtest.Read(t, tm.MetadataLocation, "SELECT count(*), count(DISTINCT id) FROM t", nil)
		rows, distinct := num(t, res.Rows[0][0]), num(t, res.Rows[0][1])
		lastDetail = fmt.Sprintf("DuckDB: %d rows, %d distinct ids, %d records in the topic", rows, distinct, len(want))
		return distinct >= int64(len(want)), lastDetail
	})
	g.mark(fmt.Sprintf("every record in the table %v after the producer stopped", time.Since(stopped).Round(100*time.Millisecond)))
	time.Sleep(3 * icebergCommitMs * time.Millisecond)

	g.logGroups()
	if len(g.zombies) > 0 {
		t.Logf("the Apache sink's coordinator stalled %d times (a coordinator that outlived its task, its catalog closed); restarted JVM workers %v", len(g.zombies), g.zombies)
	}
	tm, err := g.cat.load(icebergNamespace, g.tbl)
	require.NoError(t, err)
	duck := icebergtest.Read(t, tm.MetadataLocation, "SELECT id FROM t", nil)
	var duckIDs []int64
	for _, r := range duck.Rows {
		duckIDs = append(duckIDs, num(t, r[0]))
	}
	javaIDs := javaReadIDs(t, tm.MetadataLocation)
	g.logSnapshots(tm)
	if again := g.jvmReregistered(tm); len(again) > 0 {
		duckIDs, javaIDs = withoutOneCopy(duckIDs, again), withoutOneCopy(javaIDs, again)
	}
	for _, r := range []struct {
		name string
		ids  []int64
	}{{"DuckDB", duckIDs}, {"the Iceberg Java reader", javaIDs}} {
		missing, dups, extra := diffIDs(want, r.ids)
		require.True(t, len(missing) == 0 && len(dups) == 0 && len(extra) == 0,
			"%s reads %d rows for %d records: %d records missing (e.g. %v), %d ids more than once (e.g. %v), %d ids not in the topic (e.g. %v)",
			r.name, len(r.ids), len(want), len(missing), head(missing), len(dups), head(dups), len(extra), head(extra))
	}
	t.Logf("every one of the %d records exactly once in the table (DuckDB and the Iceberg Java reader)", len(want))

	var failed []string
	for _, r := range g.statusRecords() {
		if r.state == "FAILED" {
			failed = append(failed, fmt.Sprintf("%s on %s:\n%s", r.key, r.worker, r.trace))
		}
	}
	require.Empty(t, failed, "FAILED records in the status topic")
	g.check()
	g.mark("phase done")
}

// logSnapshots logs every sink snapshot: when, by which kind of coordinator, how many records, and the summary
// keys the coordinator wrote (the Apache sink: kafka.connect.commit-id, kafka.connect.offsets.<control>.<group>
// with the control topic's offsets, kafka.connect.valid-through-ts).
func (g *icebergGroup) logSnapshots(tm *tableMeta) {
	kinds := map[string]int{}
	var lines []string
	examples := map[string]bool{}
	for _, s := range tm.Snapshots {
		if s.Summary["kafka.connect.commit-id"] == "" {
			continue
		}
		k := committerKind(s)
		kinds[k]++
		lines = append(lines, fmt.Sprintf("+%.1fs %s +%s", time.UnixMilli(s.TimestampMs).Sub(g.started).Seconds(), k, s.Summary["added-records"]))
		if !examples[k] {
			examples[k] = true
			var keys []string
			for key, v := range s.Summary {
				if strings.HasPrefix(key, "kafka.connect.") || strings.HasPrefix(key, "connectd.") || key == "iceberg-version" {
					keys = append(keys, key+"="+v)
				}
			}
			sort.Strings(keys)
			g.t.Logf("first snapshot of the %s coordinator: %s", k, strings.Join(keys, " "))
		}
	}
	g.t.Logf("%d sink snapshots by kind %v; each (time since the phase start, committer, records added): %s",
		len(lines), kinds, strings.Join(lines, ", "))
	g.evMu.Lock()
	g.t.Logf("phase timeline:\n%s", strings.Join(g.events, "\n"))
	g.evMu.Unlock()
}

var txnIDRe = regexp.MustCompile(`transactionalId=([^,\]\s]+)`)

// logGroups logs the consumer groups of the connector and of the Apache sink's control consumers (the
// cg-control-<uuid> groups are told apart from other tests' by their subscription to this control topic), with
// the committed offsets of the control topic, and the transactional ids the JVM workers' logs name.
func (g *icebergGroup) logGroups() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := kafkatest.NewAdmin(g.t, g.Kafka)
	defer a.Close()
	all, err := a.ListGroups(ctx)
	if err != nil {
		g.t.Logf("groups: %v", err)
		return
	}
	var names []string
	for n := range all {
		if strings.Contains(n, g.name) || strings.HasPrefix(n, "cg-control-") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	described, err := a.DescribeGroups(ctx, names...)
	if err != nil {
		g.t.Logf("describe groups: %v", err)
		return
	}
	var lines []string
	for _, d := range described.Sorted() {
		topics := map[string]bool{}
		for _, m := range d.Members {
			if md, ok := m.Join.AsConsumer(); ok && md != nil {
				for _, tp := range md.Topics {
					topics[tp] = true
				}
			}
		}
		committed := int64(-1)
		if off, err := a.FetchOffsets(ctx, d.Group); err == nil {
			if o, ok := off.Lookup(g.control, 0); ok && o.Err == nil {
				committed = o.At
			}
		}
		if !strings.Contains(d.Group, g.name) && !topics[g.control] && committed < 0 {
			continue // another test's
		}
		var ts, clients []string
		for tp := range topics {
			ts = append(ts, tp)
		}
		for _, m := range d.Members {
			clients = append(clients, m.ClientID+"@"+m.ClientHost)
		}
		sort.Strings(ts)
		sort.Strings(clients)
		lines = append(lines, fmt.Sprintf("%s: %s, subscribed to %v, committed control-topic offset %d, %d members %v",
			d.Group, d.State, ts, committed, len(d.Members), clients))
	}
	if end, err := controlEnd(a, g.control); err == nil {
		lines = append(lines, fmt.Sprintf("control topic %s: end offset %d", g.control, end))
	}
	g.t.Logf("consumer groups:\n%s", strings.Join(lines, "\n"))
	txn := map[string]bool{}
	logs := make([]string, 0, len(g.jvms)+len(g.pastLogs))
	for _, j := range g.jvms {
		logs = append(logs, j.Log.String())
	}
	for _, l := range g.pastLogs {
		logs = append(logs, l[1])
	}
	for _, l := range logs {
		for _, m := range txnIDRe.FindAllStringSubmatch(l, -1) {
			txn[m[1]] = true
		}
	}
	var ids []string
	for id := range txn {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	g.t.Logf("transactional ids in the JVM workers' logs: %v", ids)
}

// keepLogs copies every worker's whole log into $ICEBERG_MIXED_LOGS/<phase>.
func (g *icebergGroup) keepLogs() {
	dir := os.Getenv("ICEBERG_MIXED_LOGS")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, strings.ReplaceAll(g.t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		g.t.Logf("keeping logs: %v", err)
		return
	}
	g.cluster.Mu.Lock()
	for _, w := range g.Workers {
		_ = os.WriteFile(filepath.Join(dir, "go-"+w.Name+"-"+strconv.Itoa(w.Port)+".log"), []byte(w.Log.String()), 0o644)
	}
	g.cluster.Mu.Unlock()
	for _, j := range g.jvms {
		_ = os.WriteFile(filepath.Join(dir, "jvm-"+strings.ReplaceAll(j.ID, ":", "_")+".log"), []byte(j.Log.String()), 0o644)
	}
	for i, l := range g.pastLogs {
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("jvm-%s-before-restart-%d.log", strings.ReplaceAll(l[0], ":", "_"), i)), []byte(l[1]), 0o644)
	}
	g.t.Logf("worker logs kept in %s", dir)
}

// diffIDs compares the ids read from the table with the records of the topic.
func diffIDs(want map[int64]int, got []int64) (missing, dups, extra []int64) {
	seen := make(map[int64]int, len(got))
	for _, id := range got {
		seen[id]++
	}
	for id := range want {
		if seen[id] == 0 {
			missing = append(missing, id)
		}
	}
	for id, n := range seen {
		if want[id] == 0 {
			extra = append(extra, id)
		} else if n > 1 {
			dups = append(dups, id)
		}
	}
	for _, s := range [][]int64{missing, dups, extra} {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	}
	return missing, dups, extra
}

// jvmReregistered finds the data files the table references more than once where no connectd code took part:
// written by a JVM worker (parquet-mr) and every reference committed by the Apache sink's coordinator. Its
// 1.10.1 coordinator registers a file again after a rebalance of its control consumer (apache/iceberg#16282,
// #13763), so the rows of such a file are read twice. It logs each such file and returns the ids each adds
// beyond its first reference, which the end check then counts once; a file written or committed by connectd
// that is referenced twice is not returned and fails the check.
func (g *icebergGroup) jvmReregistered(tm *tableMeta) map[int64]int {
	t := g.t
	t.Helper()
	loc := strings.TrimPrefix(strings.TrimPrefix(tm.MetadataLocation, "file://"), "file:")
	q := "SELECT file_path, list(manifest_sequence_number) FROM iceberg_metadata(" + sqlQuote(loc) + ")" +
		" WHERE manifest_content = 'DATA' AND status <> 'DELETED' AND content <> 'DELETED'" +
		" GROUP BY file_path HAVING count(*) > 1"
	res := icebergtest.Read(t, tm.MetadataLocation, q, nil)
	bySeq := map[int64]icebergSnapshot{}
	for _, s := range tm.Snapshots {
		bySeq[s.Sequence] = s
	}
	again := map[int64]int{}
	for _, row := range res.Rows {
		file := fmt.Sprint(row[0])
		seqs, _ := row[1].([]any)
		path := strings.TrimPrefix(strings.TrimPrefix(file, "file://"), "file:")
		meta := icebergtest.Read(t, tm.MetadataLocation, "SELECT created_by FROM parquet_file_metadata("+sqlQuote(path)+")", nil)
		writer := fmt.Sprint(meta.Rows[0][0])
		var snaps []string
		jvmOnly := strings.HasPrefix(writer, "parquet-mr")
		for _, v := range seqs {
			s, ok := bySeq[num(t, v)]
			kind := "unknown"
			if ok {
				kind = committerKind(s)
			}
			jvmOnly = jvmOnly && kind == "jvm"
			snaps = append(snaps, fmt.Sprintf("%d by the %s coordinator (commit %s)", s.ID, kind, s.Summary["kafka.connect.commit-id"]))
		}
		if !jvmOnly {
			t.Logf("data file %s (written by %s) is referenced %d times: %s", file, writer, len(seqs), strings.Join(snaps, ", "))
			continue
		}
		ids := icebergtest.Read(t, tm.MetadataLocation, "SELECT id FROM read_parquet("+sqlQuote(path)+")", nil)
		for _, r := range ids.Rows {
			again[num(t, r[0])] += len(seqs) - 1
		}
		t.Logf("the Apache sink's coordinator registered data file %s (written by %s, %d rows) %d times (apache/iceberg#16282): %s; "+
			"its rows are counted once", file, writer, len(ids.Rows), len(seqs), strings.Join(snaps, ", "))
	}
	return again
}

// withoutOneCopy drops from ids the extra copies that again counts.
func withoutOneCopy(ids []int64, again map[int64]int) []int64 {
	left := make(map[int64]int, len(again))
	for id, n := range again {
		left[id] = n
	}
	out := ids[:0:0]
	for _, id := range ids {
		if left[id] > 0 {
			left[id]--
			continue
		}
		out = append(out, id)
	}
	return out
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func head(ids []int64) []int64 {
	if len(ids) > 10 {
		return ids[:10]
	}
	return ids
}

func num(t testing.TB, v any) int64 {
	t.Helper()
	n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	require.NoError(t, err, "not an integer: %v", v)
	return n
}

// javaReadIDs reads the id column with Apache Iceberg's Java generic reader (IcebergGenerics, which applies
// every delete file), test/cdcmodel/testdata/javareader.
func javaReadIDs(t testing.TB, metadataLocation string) []int64 {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "test", "cdcmodel", "testdata", "javareader", "read.sh"), metadataLocation)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "Iceberg Java reader: %s", stderr.String())
	var res icebergtest.Result
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	require.NoError(t, d.Decode(&res))
	ids := make([]int64, 0, len(res.Rows))
	for _, m := range res.Maps() {
		ids = append(ids, num(t, m["id"]))
	}
	return ids
}

// icebergSinkPluginPath returns a plugin.path entry holding the Apache Iceberg sink and its dependencies (one
// plugin directory), copied from Maven Central once (scripts/bench-iceberg-jvm/pom.xml, as
// scripts/bench-iceberg-jvm.sh does).
func icebergSinkPluginPath(t testing.TB) string {
	t.Helper()
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	dir := filepath.Join(home, ".cache", "connectd", "iceberg-sink-jvm-"+icebergSinkVersion+"-pg")
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	script := `set -euo pipefail
mkdir -p "$1/plugin"
exec 9>"$1.lock"; flock 9
if [[ ! -f "$1/.complete" ]]; then
  mvn -q -B -f "$2" dependency:copy-dependencies -DoutputDirectory="$1/plugin" >&2
  touch "$1/.complete"
fi`
	cmd := exec.Command("bash", "-c", script, "fetch", dir, filepath.Join(repoRoot(t), "scripts", "bench-iceberg-jvm", "pom.xml"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "fetching the Apache Iceberg sink %s from Maven Central: %s", icebergSinkVersion, out)
	return dir
}

// launchIcebergJVM starts a JVM Connect distributed worker in the cluster's group (on port, or a free one when 0)
// with the Apache Iceberg sink on its plugin.path, a heap for the sink's writers, and the sink's and the
// transactional producers' INFO lines in its log. The Apache sink reads the worker's properties file back from
// the command line (IcebergSinkConfig's loadWorkerProps) for the Kafka clients of its control topic.
func launchIcebergJVM(c *cluster, cp, pluginPath string, port int) *jworker {
	return launchJVMWith(c, cp, jvmLaunch{port: port, heap: "768m", name: "jvm-iceberg",
		props: "plugin.path=" + pluginPath + "\nplugin.discovery=service_load\n",
		loggers: []string{"logger.iceberg.name=org.apache.iceberg.connect", "logger.iceberg.level=INFO",
			"logger.txn.name=org.apache.kafka.clients.producer.internals.TransactionManager", "logger.txn.level=INFO"}})
}

// restCatalog is the REST catalog server both kinds of worker use, reached over its REST API (no client library:
// the metadata it answers with is what both sides committed).
type restCatalog struct{ uri, warehouse string }

func (c *restCatalog) post(t testing.TB, path, body string) {
	t.Helper()
	code, resp := httpDo("POST", c.uri+path, body)
	require.Equal(t, 200, code, "POST %s: %s", path, resp)
}

func (c *restCatalog) createNamespace(t testing.TB, ns string) {
	t.Helper()
	c.post(t, "/v1/namespaces", fmt.Sprintf(`{"namespace":[%q],"properties":{}}`, ns))
}

// createTable creates an unpartitioned format-2 table with the records' two fields.
func (c *restCatalog) createTable(t testing.TB, ns, name string) {
	t.Helper()
	c.post(t, "/v1/namespaces/"+ns+"/tables", fmt.Sprintf(`{"name":%q,"schema":{"type":"struct","schema-id":0,"fields":[
		{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"payload","required":false,"type":"string"}]},
		"properties":{"format-version":"2"}}`, name))
}

type icebergSnapshot struct {
	ID          int64             `json:"snapshot-id"`
	Sequence    int64             `json:"sequence-number"`
	TimestampMs int64             `json:"timestamp-ms"`
	Summary     map[string]string `json:"summary"`
}

type tableMeta struct {
	MetadataLocation string
	Current          int64
	Snapshots        []icebergSnapshot
}

func (m *tableMeta) current() *icebergSnapshot {
	for i := range m.Snapshots {
		if m.Snapshots[i].ID == m.Current {
			return &m.Snapshots[i]
		}
	}
	return nil
}

func (c *restCatalog) load(ns, name string) (*tableMeta, error) {
	code, body := httpDo("GET", c.uri+"/v1/namespaces/"+ns+"/tables/"+name, "")
	if code != 200 {
		return nil, fmt.Errorf("load %s.%s: %d %s", ns, name, code, body)
	}
	var v struct {
		MetadataLocation string `json:"metadata-location"`
		Metadata         struct {
			Current   *int64            `json:"current-snapshot-id"`
			Snapshots []icebergSnapshot `json:"snapshots"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return nil, err
	}
	m := &tableMeta{MetadataLocation: v.MetadataLocation, Current: -1, Snapshots: v.Metadata.Snapshots}
	if v.Metadata.Current != nil {
		m.Current = *v.Metadata.Current
	}
	return m, nil
}
