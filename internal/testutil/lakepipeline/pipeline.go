// Package lakepipeline runs, for end-to-end tests of the lake commands (reconcile, rebuild, erase, restore
// drills), one topic of Debezium CDC records feeding the Iceberg sink (a current-state table and its raw
// history) and the ClickHouse sink (a ReplacingMergeTree on chDB), each its own connector on a `connectd
// standalone` worker that runs both or either.
package lakepipeline

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/chdb"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
	"github.com/connectd/connectd/internal/testutil/chdb/chshimtest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// Names of the pipeline's tables.
const (
	Current = "cdc.customers"
	History = "cdc.history"
	CHTable = "customers"
)

// Close stops what the package started (call from TestMain).
func Close() {
	kafkatest.Stop()
	chshimtest.Close()
}

// Pipeline is one running pipeline.
type Pipeline struct {
	T         testing.TB
	Addr      string
	Topic     string
	Parts     int
	Dir       string
	CatDB, WH string
	DB        string
	S         *chdb.Session
	Srv       *chshim.Server
	next      map[int32]int64
	Streams   []cdcstream.Stream
	worker    *workerproc.Proc
}

// The pipeline's connectors, for Start and Wait.
const (
	Iceberg    = "iceberg"
	ClickHouse = "clickhouse"
)

// connectorPrefix starts each connector's name (the rest is the topic).
var connectorPrefix = map[string]string{Iceberg: "lake-iceberg-", ClickHouse: "lake-clickhouse-"}

// named is the connectors named, or both when none is.
func (p *Pipeline) named(connectors []string) []string {
	if len(connectors) == 0 {
		return []string{Iceberg, ClickHouse}
	}
	for _, c := range connectors {
		if _, ok := connectorPrefix[c]; !ok {
			p.T.Fatalf("lakepipeline: no connector %q", c)
		}
	}
	return connectors
}

// New prepares the topic, the ClickHouse table and the connector files.
func New(t testing.TB) *Pipeline {
	s, shim := chshimtest.Engine(t)
	p := &Pipeline{T: t, Addr: kafkatest.Bootstrap(t), Topic: kafkatest.UniqueName(t, "lake"), Parts: 3, Dir: t.TempDir(),
		S: s, Srv: shim, DB: chdbtest.Database(t), next: map[int32]int64{}}
	p.CatDB, p.WH = filepath.Join(p.Dir, "catalog.db"), filepath.Join(p.Dir, "warehouse")
	kafkatest.CreateTopic(t, p.Addr, p.Topic, int32(p.Parts), nil)
	chdbtest.MustExec(t, s, "CREATE TABLE "+p.DB+`.customers (id String, name String, qty Int64, updated_at Int64,
		email Nullable(String), _version UInt64, is_deleted UInt8)
		ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id SETTINGS non_replicated_deduplication_window = 1000`)
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(p.Dir, name), []byte(body), 0o644))
	}
	write("worker.properties", fmt.Sprintf(`bootstrap.servers=%s
listeners=http://127.0.0.1:0
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.flush.interval.ms=200
`, p.Addr))
	write("iceberg.properties", fmt.Sprintf(`name=%s
connector.class=org.apache.iceberg.connect.IcebergSinkConnector
tasks.max=1
topics=%s
iceberg.tables=%s,%s
iceberg.table.%s.raw-cdc=true
iceberg.tables.auto-create-enabled=true
iceberg.tables.evolve-schema-enabled=true
iceberg.tables.upsert-mode-enabled=true
iceberg.tables.default-id-columns=id
iceberg.table.%s.version-column=source.lsn
iceberg.table.%s.partition-by=bucket(id,4)
iceberg.catalog.type=sql
iceberg.catalog.uri=jdbc:sqlite:%s
iceberg.catalog.warehouse=%s
iceberg.control.commit.interval-ms=200
`, connectorPrefix[Iceberg]+p.Topic, p.Topic, Current, History, History, Current, Current, p.CatDB, p.WH))
	write("clickhouse.properties", fmt.Sprintf(`name=%s
connector.class=com.clickhouse.kafka.connect.ClickHouseSinkConnector
tasks.max=1
topics=%s
topic2TableMap=%s=customers
hostname=127.0.0.1
port=%d
database=%s
debeziumCDCEnabled=true
exactlyOnce=true
`, connectorPrefix[ClickHouse]+p.Topic, p.Topic, p.Topic, shim.Port(), p.DB))
	t.Cleanup(p.Stop)
	return p
}

// Props are the reconcile properties of the pipeline (the base of rebuild, erase and restore-drill properties).
func (p *Pipeline) Props() map[string]string {
	return map[string]string{
		"iceberg.catalog.type":      "sql",
		"iceberg.catalog.uri":       "jdbc:sqlite:" + p.CatDB,
		"iceberg.catalog.warehouse": p.WH,
		"iceberg.table":             Current,
		"clickhouse.hostname":       "127.0.0.1",
		"clickhouse.port":           fmt.Sprint(p.Srv.Port()),
		"clickhouse.database":       p.DB,
		"clickhouse.table":          CHTable,
		"kafka.bootstrap.servers":   p.Addr,
	}
}

// Catalog opens the pipeline's Iceberg catalog.
func (p *Pipeline) Catalog() catalog.Catalog {
	cat, err := catalogx.Open(context.Background(), "", map[string]string{"type": "sql", "uri": "jdbc:sqlite:" + p.CatDB, "warehouse": p.WH})
	require.NoError(p.T, err)
	return cat
}

// Table loads an Iceberg table.
func (p *Pipeline) Table(name string) *table.Table {
	tbl, err := p.Catalog().LoadTable(context.Background(), catalog.ToIdentifier(name))
	require.NoError(p.T, err)
	return tbl
}

// Start runs a worker with the named connectors (Iceberg, ClickHouse), both when none is named: a layer
// whose connector is left out falls behind the other.
func (p *Pipeline) Start(connectors ...string) {
	p.Stop()
	args := []string{"standalone", filepath.Join(p.Dir, "worker.properties")}
	for _, c := range p.named(connectors) {
		args = append(args, filepath.Join(p.Dir, c+".properties"))
	}
	p.worker = workerproc.Start(p.T, args...)
}

// Stop kills the worker.
func (p *Pipeline) Stop() {
	if p.worker != nil {
		p.worker.Kill()
	}
	p.worker = nil
}

// Produce generates n random CDC streams (keys disjoint from earlier ones), produces them interleaved and
// returns how many records it produced.
func (p *Pipeline) Produce(rng *rand.Rand, n int) int {
	var streams []cdcstream.Stream
	for i := 0; i < n; i++ {
		streams = append(streams, cdcstream.Generate(rng, fmt.Sprintf("s%d", len(p.Streams)+i), cdcstream.DefaultConfig()))
	}
	p.Streams = append(p.Streams, streams...)
	var evs []struct {
		s cdcstream.Stream
		e cdcstream.Event
	}
	for _, tg := range cdcstream.Interleave(rng, streams) {
		evs = append(evs, struct {
			s cdcstream.Stream
			e cdcstream.Event
		}{streams[tg.Stream], streams[tg.Stream].Events[tg.Index]})
	}
	var msgs []*kgo.Record
	for _, x := range evs {
		msgs = append(msgs, p.message(x.s, x.e))
	}
	p.send(msgs)
	return len(msgs)
}

func (p *Pipeline) message(s cdcstream.Stream, e cdcstream.Event) *kgo.Record {
	k, v := cdcstream.Debezium(s, e)
	return &kgo.Record{Topic: p.Topic, Partition: cdcstream.Partition(s.FullKey(e), p.Parts), Key: k, Value: v}
}

func (p *Pipeline) send(msgs []*kgo.Record) {
	kafkatest.ProducePartitioned(p.T, p.Addr, p.Topic, msgs...) // acks=all, each record to its own partition
	for _, m := range msgs {
		p.next[m.Partition] = max(p.next[m.Partition], m.Offset+1)
	}
}

// Delete produces a source delete of the key (its last row, at a higher version) and its tombstone.
func (p *Pipeline) Delete(key string) {
	for i := range p.Streams {
		s := &p.Streams[i]
		local, ok := cutPrefix(key, s.Prefix+"-")
		if !ok {
			continue
		}
		row := p.Model()[key]
		var lsn int64
		for _, e := range s.Events {
			lsn = max(lsn, e.LSN)
		}
		del := []cdcstream.Event{{Key: local, Op: cdcstream.Delete, LSN: lsn + 1, Row: &row, How: "erasure"}, {Key: local, Op: cdcstream.Tombstone}}
		s.Events = append(s.Events, del...)
		var msgs []*kgo.Record
		for _, e := range del {
			msgs = append(msgs, p.message(*s, e))
		}
		p.send(msgs)
		return
	}
	p.T.Fatalf("no stream holds %s", key)
}

func cutPrefix(s, pfx string) (string, bool) {
	if len(s) >= len(pfx) && s[:len(pfx)] == pfx {
		return s[len(pfx):], true
	}
	return s, false
}

// Wait waits until the named connectors' groups (both when none is named) committed every produced record.
func (p *Pipeline) Wait(connectors ...string) {
	for _, c := range p.named(connectors) {
		p.waitGroup(p.group(c))
	}
}

// CHGroup is the ClickHouse connector's consumer group.
func (p *Pipeline) CHGroup() string { return p.group(ClickHouse) }

func (p *Pipeline) group(connector string) string {
	return "connect-" + connectorPrefix[connector] + p.Topic
}

func (p *Pipeline) waitGroup(group string) {
	deadline := time.Now().Add(4 * time.Minute)
	for {
		got := kafkatest.CommittedOffsets(p.T, p.Addr, group, p.Topic) // retries while the coordinator loads
		done := true
		for part, n := range p.next {
			if got[part] < n {
				done = false
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			p.T.Fatalf("%s did not commit everything: committed %v, produced %v", group, got, p.next)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Model is the current state of every key produced so far.
func (p *Pipeline) Model() map[string]cdcstream.Row {
	out := map[string]cdcstream.Row{}
	for _, s := range p.Streams {
		for k, r := range cdcstream.State(s.Events, cdcstream.VersionLSN) {
			out[s.Prefix+"-"+k] = r
		}
	}
	return out
}

// Seed is the seed of a randomized test: RECONCILE_SEED replays a printed one.
func Seed(t testing.TB) int64 {
	seed := time.Now().UnixNano()
	if v := os.Getenv("RECONCILE_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err, "RECONCILE_SEED")
		seed = n
	}
	t.Logf("seed %d (RECONCILE_SEED replays it)", seed)
	return seed
}
