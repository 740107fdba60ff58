package iceberg_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/connectors/iceberg/commit"
	ae "github.com/connectd/connectd/connectors/iceberg/commit/apacheevents"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// TestE2EDistributedApacheProtocol: three `connectd distributed` processes run one append connector under the
// Apache sink's control protocol (the default for a connector the Apache sink can host) while they are
// SIGKILLed round-robin, the committer among them, once inside a table commit. Every record is in the table
// exactly once (DuckDB), the snapshots carry the Apache committer's summary keys, and the control topic holds
// the Apache sink's events.
func TestE2EDistributedApacheProtocol(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e")
	}
	workerproc.Binary(t)
	addr := kafkatest.Bootstrap(t)
	started := time.Now()
	topic := kafkatest.UniqueName(t, "ice-apache")
	const parts = 6
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
	control := kafkatest.UniqueName(t, "ice-apache-control")
	group := kafkatest.UniqueName(t, "ice-apache-workers")
	name := kafkatest.UniqueName(t, "ice-apache")
	dir := t.TempDir()
	catDB := filepath.Join(dir, "catalog.db")
	wh := filepath.Join(dir, "warehouse")

	const slots = 3
	props, urls := distWorkerProps(t, dir, addr, group, slots)
	procs := make([]*distProc, slots)
	gens := 0
	start := func(slot int) {
		procs[slot] = distStartWorker(t, slot, gens, props[slot], urls[slot])
		gens++
	}
	for i := range slots {
		start(i)
	}
	for _, p := range procs {
		p.healthy(t)
	}
	anyURL := func() string {
		for _, p := range procs {
			if p.alive() {
				return p.url
			}
		}
		return urls[0]
	}
	cfg := map[string]string{
		"connector.class":                         iceberg.ApacheClass,
		"tasks.max":                               "6",
		"topics":                                  topic,
		"consumer.override.max.poll.records":      "150",
		"consumer.override.session.timeout.ms":    "6000",
		"consumer.override.heartbeat.interval.ms": "1000",
		"iceberg.tables":                          "shop.events",
		"iceberg.tables.auto-create-enabled":      "true",
		"iceberg.catalog.type":                    "sql",
		"iceberg.catalog.uri":                     "jdbc:sqlite:" + catDB,
		"iceberg.catalog.warehouse":               wh,
		"iceberg.control.topic":                   control,
		"iceberg.control.commit.interval-ms":      "2000",
		"iceberg.control.commit.timeout-ms":       "5000",
	}
	body, err := json.Marshal(map[string]any{"name": name, "config": cfg})
	require.NoError(t, err)
	var last string
	distEventually(t, 60*time.Second, 250*time.Millisecond, func() bool {
		code, resp := distHTTP("POST", urls[1]+"/connectors", string(body))
		last = fmt.Sprintf("%d %s", code, resp)
		return code == 201 || code == 200 || (code == 409 && strings.Contains(resp, "already exists"))
	}, func() string { return "creating the connector: " + last })
	failed := func() string {
		code, resp := distHTTP("GET", anyURL()+"/connectors/"+name+"/status", "")
		var cs distConnStatus
		if code != 200 || json.Unmarshal([]byte(resp), &cs) != nil {
			return ""
		}
		for _, tk := range cs.Tasks {
			if tk.State == "FAILED" {
				return fmt.Sprintf("task %d FAILED on %s: %s", tk.ID, tk.WorkerID, distFirstLine(tk.Trace))
			}
		}
		return ""
	}

	total := 0
	produce := func(n int) {
		var msgs []*kgo.Record
		for range n {
			v := fmt.Sprintf(`{"id":%d,"name":"n%d"}`, total, total%7)
			msgs = append(msgs, &kgo.Record{Topic: topic, Partition: int32(total % parts), Value: []byte(v)})
			total++
		}
		kafkatest.ProducePartitioned(t, addr, topic, msgs...)
	}

	scfg, err := iceberg.ParseConfig(map[string]string{"name": name, iceberg.KeyTables: "x.y", "iceberg.catalog.type": "sql",
		"iceberg.catalog.uri": "jdbc:sqlite:" + catDB, "iceberg.catalog.warehouse": wh})
	require.NoError(t, err)
	withTable := func(f func(*table.Table)) bool { return distWithTable(scfg, "shop.events", f) }
	records := func() (n int64) {
		withTable(func(tb *table.Table) {
			if s := tb.CurrentSnapshot(); s != nil && s.Summary != nil {
				n, _ = strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
			}
		})
		return n
	}
	snapshots := func() (n int) {
		withTable(func(tb *table.Table) { n = len(tb.Metadata().Snapshots()) })
		return n
	}

	rng := rand.New(rand.NewSource(11))
	const bursts = 5
	kills, inside := 0, 0
	var killLog []string
	for b := range bursts {
		produce(800)
		if b == bursts-1 {
			break
		}
		before := snapshots()
		distEventually(t, 60*time.Second, 100*time.Millisecond, func() bool { return snapshots() > before },
			func() string { return fmt.Sprintf("no commit since kill %d; %s", kills, failed()) })
		time.Sleep(time.Duration(rng.Intn(2000)) * time.Millisecond)
		for _, p := range procs {
			p.healthy(t)
		}
		committer := distPartitionHolder(procs, topic+"-0")
		victim := kills % slots
		if kills%2 == 0 && committer >= 0 {
			victim = committer
		}
		produce(400)
		in := false
		if victim == committer {
			in = killInsideCommit(t, catDB, wh, 15*time.Second, procs[victim].sigkill)
		}
		procs[victim].sigkill()
		kills++
		if in {
			inside++
		}
		killLog = append(killLog, fmt.Sprintf("w%d(committer %v, inside %v)@%v", victim, victim == committer, in,
			time.Since(started).Round(100*time.Millisecond)))
		time.Sleep(time.Duration(300+rng.Intn(1200)) * time.Millisecond)
		start(victim)
	}
	t.Logf("produced %d records with %d kills (%v)", total, kills, killLog)
	require.Positive(t, inside, "no committer was killed inside a commit")
	produced := time.Now()
	distEventually(t, 120*time.Second, 250*time.Millisecond, func() bool { return records() >= int64(total) },
		func() string { return fmt.Sprintf("table holds %d of %d records; %s", records(), total, failed()) })
	t.Logf("caught up %v after the last burst", time.Since(produced).Round(time.Millisecond))
	require.Empty(t, failed())
	for _, p := range procs {
		p.sigkill()
	}

	var meta string
	var commits, withOffsets int
	withTable(func(tb *table.Table) {
		meta = tb.MetadataLocation()
		for _, s := range tb.Metadata().Snapshots() {
			if s.Summary == nil || s.Summary.Properties[commit.ApacheSummaryCommitID] == "" {
				continue
			}
			commits++
			if s.Summary.Properties[commit.ApacheOffsetsSummaryKey(control, "connect-"+name)] != "" {
				withOffsets++
			}
		}
	})
	require.Equal(t, []string{fmt.Sprintf("%d|%d", total, total)}, duckRows(t, meta, "SELECT count(*), count(DISTINCT id) FROM t"))
	require.Positive(t, commits)
	require.Equal(t, commits, withOffsets, "every commit records the control topic offsets")
	t.Logf("%d commits, elapsed %v", commits, time.Since(started).Round(time.Millisecond))

	// the control topic carries the Apache sink's events, all of them decodable
	types := map[ae.PayloadType]int{}
	for _, km := range kafkatest.ReadToEnd(t, addr, control, time.Minute) {
		ev, err := ae.Decode(km.Value)
		require.NoError(t, err, "control record at %d", km.Offset)
		types[ev.Type]++
	}
	t.Logf("control topic events by type: %v", types)
	for _, pt := range []ae.PayloadType{ae.StartCommit, ae.DataWritten, ae.DataComplete, ae.CommitToTable, ae.CommitComplete} {
		require.Positive(t, types[pt], "no event of type %v", pt)
	}
}
