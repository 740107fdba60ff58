package iceberg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// Snapshot summary properties the distributed commit protocol writes (literals on purpose:
// the test pins the wire names, not the package constants).
const (
	distSummaryCommitID     = "kafka.connect.commit-id"
	distSummaryContributors = "connectd.commit.contributors"
)

// distProc is one incarnation of a `connectd distributed` worker process.
// distProc is one incarnation of a worker slot.
type distProc struct {
	*workerproc.Proc
	slot, gen int
	url       string
}

func (p *distProc) alive() bool { return p.Alive() }

func (p *distProc) sigkill() { p.Kill() }

// distStartWorker starts `connectd distributed props`; wait for it with healthy.
func distStartWorker(t *testing.T, slot, gen int, props, url string) *distProc {
	t.Helper()
	p := &distProc{Proc: workerproc.Start(t, "distributed", props), slot: slot, gen: gen, url: url}
	p.Name = fmt.Sprintf("w%d-%d", slot, gen)
	return p
}

// healthy waits until the process's REST answers /health with 200.
func (p *distProc) healthy(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _ := distHTTP("GET", p.url+"/health", ""); code == 200 {
			return
		}
		require.True(t, p.alive(), "w%d exited:\n%s", p.slot, p.Log())
		require.True(t, time.Now().Before(deadline), "w%d never became healthy:\n%s", p.slot, p.Log())
		time.Sleep(50 * time.Millisecond)
	}
}

func distHTTP(method, url, body string) (int, string) {
	return workerproc.RequestWithin(10*time.Second, method, url, body)
}

type distConnStatus = workerproc.Status

// TestE2EDistributedSingleCommitter ("one snapshot per table per commit
// interval across all tasks of a connector"): three `connectd distributed` processes on the real
// broker run one Iceberg sink with six tasks spread over them. A Debezium CDC stream arrives in
// bursts; between bursts the worker processes are SIGKILLed round-robin (and started again), so
// the elected committer dies too, at least once inside a table commit (killInsideCommit). Afterwards the independent reader (DuckDB) sees exactly the
// expected current state in the upsert table and every record exactly once in the raw history
// table, and the snapshots show the fan-in: per table at most one snapshot per commit round
// (kafka.connect.commit-id), some history snapshot holding data files of >= 2 processes
// (connectd.commit.contributors), and both tables committed in the same rounds.
func TestE2EDistributedSingleCommitter(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e")
	}
	workerproc.Binary(t) // built before the clock starts
	addr := kafkatest.Bootstrap(t)
	started := time.Now()
	topic := kafkatest.UniqueName(t, "ice-dist-cdc")
	const parts = 6
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
	control := kafkatest.UniqueName(t, "ice-dist-control")
	kafkatest.CreateTopic(t, addr, control, 1, nil)
	group := kafkatest.UniqueName(t, "ice-dist-workers")
	name := kafkatest.UniqueName(t, "ice-dist") // connector names are global through connect-<name>
	dir := t.TempDir()
	catDB := filepath.Join(dir, "catalog.db")
	wh := filepath.Join(dir, "warehouse")

	// three worker slots; a restarted slot reuses its properties (same port, same worker id)
	const slots = 3
	props, urls := distWorkerProps(t, dir, addr, group, slots)
	var procs [slots]*distProc
	var all []*distProc // every incarnation
	gens := 0
	start := func(slot int) {
		procs[slot] = distStartWorker(t, slot, gens, props[slot], urls[slot])
		all = append(all, procs[slot])
		gens++
	}
	for i := 0; i < slots; i++ {
		start(i)
	}
	for _, p := range procs {
		p.healthy(t)
	}
	t.Logf("%d workers healthy after %v", slots, time.Since(started).Round(time.Millisecond))
	anyURL := func() string {
		for _, p := range procs {
			if p.alive() {
				return p.url
			}
		}
		return urls[0]
	}

	// the connector, created through a worker that need not be the leader
	cfg := map[string]string{
		"connector.class":                              "org.apache.iceberg.connect.IcebergSinkConnector",
		"tasks.max":                                    "6",
		"topics":                                       topic,
		"consumer.override.max.poll.records":           "150",
		"consumer.override.session.timeout.ms":         "6000",
		"consumer.override.heartbeat.interval.ms":      "1000",
		"iceberg.tables":                               "shop.customers,shop.customers_history",
		"iceberg.tables.auto-create-enabled":           "true",
		"iceberg.tables.default-id-columns":            "id",
		"iceberg.table.shop.customers.partition-by":    "region",
		"iceberg.table.shop.customers_history.raw-cdc": "true",
		"iceberg.catalog.type":                         "sql",
		"iceberg.catalog.uri":                          "jdbc:sqlite:" + catDB,
		"iceberg.catalog.warehouse":                    wh,
		"iceberg.control.topic":                        control,
		"iceberg.control.commit.interval-ms":           "2000",
		// a round whose answers miss a killed process's partitions waits this long (default 30 s)
		"iceberg.control.commit.timeout-ms":           "5000",
		"iceberg.control.commit.max-buffered-records": "1000000",
	}
	body, err := json.Marshal(map[string]any{"name": name, "config": cfg})
	require.NoError(t, err)
	var lastCreate string
	distEventually(t, 60*time.Second, 250*time.Millisecond, func() bool { // 409 while the first rebalance is under way
		code, resp := distHTTP("POST", urls[1]+"/connectors", string(body))
		lastCreate = fmt.Sprintf("%d %s", code, resp)
		return code == 201 || code == 200 || (code == 409 && strings.Contains(resp, "already exists"))
	}, func() string { return "creating the connector: " + lastCreate })

	status := func() (distConnStatus, bool) {
		code, resp := distHTTP("GET", anyURL()+"/connectors/"+name+"/status", "")
		var cs distConnStatus
		if code != 200 || json.Unmarshal([]byte(resp), &cs) != nil {
			return cs, false
		}
		return cs, true
	}
	// taskWorkers maps worker id -> running tasks when all 6 tasks are RUNNING.
	taskWorkers := func() (map[string]int, string) {
		cs, ok := status()
		if !ok {
			return nil, "no status"
		}
		out := map[string]int{}
		desc := fmt.Sprintf("connector %s@%s;", cs.Connector.State, cs.Connector.WorkerID)
		running := 0
		for _, tk := range cs.Tasks {
			desc += fmt.Sprintf(" %d:%s@%s", tk.ID, tk.State, tk.WorkerID)
			if tk.State == "FAILED" {
				desc += " (" + distFirstLine(tk.Trace) + ")"
			}
			if tk.State == "RUNNING" {
				running++
				out[tk.WorkerID]++
			}
		}
		if len(cs.Tasks) != 6 || running != 6 {
			return nil, desc
		}
		return out, desc
	}
	var spread map[string]int
	var lastStatus string
	distEventually(t, 60*time.Second, 200*time.Millisecond, func() bool {
		spread, lastStatus = taskWorkers()
		return len(spread) >= 2
	}, func() string { return "6 RUNNING tasks on >= 2 workers: " + lastStatus })
	t.Logf("tasks running after %v: %v", time.Since(started).Round(time.Millisecond), spread)

	// the CDC stream, keyed over the 6 partitions
	events, want := cdcStream(404, 6000, 600, parts)
	// kafkatest produces idempotently: a produce retried while the machine is loaded must not store a
	// record twice, or the history table (one row per Kafka record) holds more rows than were produced
	var next [parts]int64
	produce := func(evs []cdcEvent) {
		var msgs []*kgo.Record
		for _, e := range evs {
			p := int32(e.ID % parts)
			k, v := debeziumJSON(e, next[p])
			next[p]++
			msgs = append(msgs, &kgo.Record{Topic: topic, Partition: p, Key: k, Value: v})
		}
		kafkatest.ProducePartitioned(t, addr, topic, msgs...)
	}

	scfg, err := iceberg.ParseConfig(map[string]string{"name": name, iceberg.KeyTables: "x.y", "iceberg.catalog.type": "sql",
		"iceberg.catalog.uri": "jdbc:sqlite:" + catDB, "iceberg.catalog.warehouse": wh})
	require.NoError(t, err)
	withTable := func(tbl string, f func(*table.Table)) bool { return distWithTable(scfg, tbl, f) }
	tableOffsets := func(tbl string) (o icetable.Offsets) {
		withTable(tbl, func(tb *table.Table) {
			o, _ = icetable.CommittedOffsets(tb, "", icetable.OffsetsSummaryKey("connect-"+name))
		})
		return o
	}
	caughtUp := func(tbl string) bool {
		o := tableOffsets(tbl)
		for p := int32(0); p < parts; p++ {
			if o[icetable.TP{Topic: topic, Partition: p}] < next[p] {
				return false
			}
		}
		return true
	}

	sinkSnapshots := func(tbl string) (n int) {
		withTable(tbl, func(tb *table.Table) {
			for _, sn := range tb.Metadata().Snapshots() {
				if sn.Summary != nil && sn.Summary.Properties[distSummaryCommitID] != "" {
					n++
				}
			}
		})
		return n
	}
	snapsAtKill := 0

	// bursts, with a SIGKILL of one worker process (round-robin) between consecutive bursts
	const bursts = 6
	rng := rand.New(rand.NewSource(7))
	chunk := len(events) / bursts
	kills, committerKills, insideCommit := 0, 0, 0
	var killLog []string
	for b := 0; b < bursts; b++ {
		end := (b + 1) * chunk
		if b == bursts-1 {
			end = len(events)
		}
		// the last third of a burst is held back and produced just before the kill, so that a round with
		// data is still to come when the committer is to die inside its commit
		burst := events[b*chunk : end]
		held := burst[len(burst)*2/3:]
		if b == bursts-1 {
			produce(burst)
			break
		}
		produce(burst[:len(burst)*2/3])
		// let the burst be picked up and committed by at least one round since the last kill
		// (the sink's consumer group rebalances after every kill and restart; without this wait
		// the kills could outpace the rounds and test no commit at all), then kill at a random
		// point of the next rounds
		distEventually(t, 60*time.Second, 100*time.Millisecond, func() bool { return sinkSnapshots("shop.customers_history") > snapsAtKill },
			func() string { return fmt.Sprintf("no round committed since kill %d", kills) })
		time.Sleep(time.Duration(rng.Intn(2500)) * time.Millisecond)
		for _, p := range procs { // all up again (the previous victim included): >= 2 stay alive
			p.healthy(t)
		}
		// the committer is the process whose task holds the first partition (as in Apache's
		// sink): every other kill targets it, the others rotate over the remaining slots
		committer := distPartitionHolder(procs[:], topic+"-0")
		victim := kills % slots
		if committer >= 0 && (kills%2 == 0) != (victim == committer) {
			if kills%2 == 0 {
				victim = committer
			} else {
				victim = (committer + 1 + kills/2%2) % slots
			}
		}
		snapsAtKill = sinkSnapshots("shop.customers_history")
		produce(held)
		inside := false
		if victim == committer {
			// the committer dies inside a table commit: files and table metadata written, the
			// catalog row not yet updated (a round starts every 2 s)
			for try := 0; try < 3 && !inside; try++ {
				inside = killInsideCommit(t, catDB, wh, 15*time.Second, procs[victim].sigkill)
			}
		}
		procs[victim].sigkill()
		kills++
		what := ""
		if inside {
			what = " (committer, inside a commit)"
			committerKills++
			insideCommit++
		} else if victim == committer {
			what = " (committer)"
			committerKills++
		} else if committer < 0 {
			what = " (committer unknown)"
		}
		killLog = append(killLog, fmt.Sprintf("w%d%s@%v", victim, what, time.Since(started).Round(100*time.Millisecond)))
		// restart the slot (a new process, same worker id) after a short while
		time.Sleep(time.Duration(300+rng.Intn(1200)) * time.Millisecond)
		start(victim)
	}
	produced := time.Now()
	total := int64(0)
	for _, n := range next {
		total += n
	}
	require.Equal(t, int64(len(events)), total)
	t.Logf("produced %d records in %d bursts with %d kills, %d of the committer, %d inside a commit (%v) by %v",
		total, bursts, kills, committerKills, insideCommit, killLog, time.Since(started).Round(time.Millisecond))
	require.Positive(t, insideCommit, "no committer was killed inside a commit")

	var lastOffsets string
	distEventually(t, 90*time.Second, 250*time.Millisecond, func() bool {
		lastOffsets = fmt.Sprintf("history %v, upsert %v, want %v", tableOffsets("shop.customers_history"), tableOffsets("shop.customers"), next)
		return caughtUp("shop.customers_history") && caughtUp("shop.customers")
	}, func() string {
		_, s := taskWorkers()
		return "tables never caught up: " + lastOffsets + "; status: " + s
	})
	t.Logf("caught up %v after the last burst", time.Since(produced).Round(time.Millisecond))
	_, lastStatus = taskWorkers()
	t.Logf("status at the end: %s", lastStatus)
	for _, p := range procs {
		p.sigkill() // nothing new can be committed while the tables are read
	}

	// (a) exactly once, seen by the independent reader
	cat, err := catalogx.Open(context.Background(), scfg.CatalogName, scfg.CatalogProps)
	require.NoError(t, err)
	st, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.customers"))
	require.NoError(t, err)
	ht, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.customers_history"))
	require.NoError(t, err)
	require.Empty(t, duckRows(t, st.MetadataLocation(), "SELECT id FROM t GROUP BY id HAVING count(*) > 1"), "duplicate keys in the upsert table")
	require.Equal(t, wantRows(want), duckRows(t, st.MetadataLocation(), "SELECT id, name, version FROM t"))
	require.Equal(t, []string{fmt.Sprintf("%d|%d|%d", total, total, parts)},
		duckRows(t, ht.MetadataLocation(), "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)), count(DISTINCT kafka_partition) FROM t"))

	// (b) snapshot fan-in: one snapshot per table per round, committed by one committer for all processes
	type tableRounds struct {
		ids             map[string]int // commit-id -> snapshots
		snapshots       int
		maxContributors int
		withProperty    int
		timeline        []string // per sink snapshot: time since the start, contributors, added records
		beforeLastBurst int      // sink snapshots committed while processes were still being killed
	}
	rounds := func(tb *table.Table) tableRounds {
		r := tableRounds{ids: map[string]int{}}
		for _, s := range tb.Metadata().Snapshots() {
			if s.Summary == nil {
				continue
			}
			id, ok := s.Summary.Properties[distSummaryCommitID]
			if !ok {
				continue // not written by the sink (table creation)
			}
			r.snapshots++
			r.ids[id]++
			if s.TimestampMs < produced.UnixMilli() {
				r.beforeLastBurst++
			}
			r.timeline = append(r.timeline, fmt.Sprintf("+%.1fs:c=%s:r=%s", time.UnixMilli(s.TimestampMs).Sub(started).Seconds(),
				s.Summary.Properties[distSummaryContributors], s.Summary.Properties["added-records"]))
			if v, ok := s.Summary.Properties[distSummaryContributors]; ok {
				r.withProperty++
				if n, err := strconv.Atoi(v); err == nil && n > r.maxContributors {
					r.maxContributors = n
				}
			}
		}
		return r
	}
	sr, hr := rounds(st), rounds(ht)
	shared := 0
	for id := range hr.ids {
		if sr.ids[id] > 0 {
			shared++
		}
	}
	t.Logf("upsert table: %d sink snapshots in %d rounds, %d with %s (max %d); history table: %d sink snapshots in %d rounds, %d with %s (max %d); rounds shared: %d",
		sr.snapshots, len(sr.ids), sr.withProperty, distSummaryContributors, sr.maxContributors,
		hr.snapshots, len(hr.ids), hr.withProperty, distSummaryContributors, hr.maxContributors, shared)
	rewinds := 0 // failed or abandoned rounds: the tasks rewind to their committed offsets
	for _, p := range all {
		rewinds += strings.Count(p.Log(), "rewind")
	}
	t.Logf("upsert snapshots (time since start, contributors, added records): %v", sr.timeline)
	t.Logf("history snapshots (time since start, contributors, added records): %v", hr.timeline)
	t.Logf("kills=%d (committer %d) processes=%d records=%d log lines about rewinds=%d elapsed=%v",
		kills, committerKills, len(all), total, rewinds, time.Since(started).Round(time.Millisecond))
	for _, c := range []struct {
		table string
		r     tableRounds
	}{{"shop.customers", sr}, {"shop.customers_history", hr}} {
		assert.NotZero(t, c.r.snapshots, "%s: no snapshot carries %s", c.table, distSummaryCommitID)
		assert.Empty(t, distDupIDs(c.r.ids), "%s: commit rounds with more than one snapshot (one snapshot per table per round)", c.table)
	}
	assert.GreaterOrEqual(t, hr.maxContributors, 2,
		"no history snapshot holds data files of >= 2 worker processes (%d of %d sink snapshots carry %s)",
		hr.withProperty, hr.snapshots, distSummaryContributors)
	assert.NotZero(t, shared, "the two tables were never committed in the same round")
	// commits must go on while processes die (else the kills test no commit and no recovery):
	// the kill phase spans > 10 commit intervals
	assert.GreaterOrEqual(t, hr.beforeLastBurst, 3, "history snapshots committed during the kill phase (%v): %v",
		produced.Sub(started).Round(time.Second), hr.timeline)
}

// distEventually polls cond (in this goroutine) until it holds or timeout passes; then it fails
// the test with msg(), evaluated at that moment.
func distEventually(t *testing.T, timeout, tick time.Duration, cond func() bool, msg func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			require.FailNow(t, "condition not met within "+timeout.String(), msg())
		}
		time.Sleep(tick)
	}
}

// distPartitionHolder returns the slot of the live process whose task was most recently assigned
// partition tp ("<topic>-<n>"), from the workers' "partitions assigned" log lines, or -1.
func distPartitionHolder(procs []*distProc, tp string) int {
	best, bestAt := -1, ""
	for _, p := range procs {
		if !p.alive() {
			continue
		}
		for _, line := range strings.Split(p.Log(), "\n") {
			if !strings.Contains(line, `msg="partitions assigned"`) {
				continue
			}
			i := strings.Index(line, tp)
			if i < 0 || i+len(tp) >= len(line) || !strings.ContainsRune(`]" `, rune(line[i+len(tp)])) {
				continue
			}
			at, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
			if at > bestAt { // RFC 3339 UTC timestamps of one clock compare as strings
				best, bestAt = p.slot, at
			}
		}
	}
	return best
}

// distDupIDs lists the commit ids with more than one snapshot.
func distDupIDs(ids map[string]int) []string {
	var out []string
	for id, n := range ids {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s x%d", id, n))
		}
	}
	sort.Strings(out)
	return out
}

func distFirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// distWorkerProps writes the properties of n worker slots of one group and returns their paths and REST URLs;
// a restarted slot reuses its properties (same port, same worker id).
func distWorkerProps(t *testing.T, dir, addr, group string, n int) ([]string, []string) {
	props, urls := make([]string, n), make([]string, n)
	for i := 0; i < n; i++ {
		urls[i] = fmt.Sprintf("http://127.0.0.1:%d", workerproc.FreePort(t))
		props[i] = filepath.Join(dir, fmt.Sprintf("w%d.properties", i))
		require.NoError(t, os.WriteFile(props[i], []byte(workerproc.DistributedProps(addr, group)+fmt.Sprintf(`session.timeout.ms=6000
heartbeat.interval.ms=1000
listeners=%s
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.flush.interval.ms=200
`, urls[i])), 0o644))
	}
	return props, urls
}

// distWithTable calls f with table tbl as the catalog of scfg holds it now, on a catalog connection of its own
// (the workers write meanwhile); false when the table cannot be read.
func distWithTable(scfg *iceberg.SinkConfig, tbl string, f func(*table.Table)) bool {
	cat, err := catalogx.Open(context.Background(), scfg.CatalogName, scfg.CatalogProps)
	if err != nil {
		return false
	}
	defer func() {
		if c, ok := cat.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}()
	tb, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(tbl))
	if err != nil {
		return false
	}
	f(tb)
	return true
}
