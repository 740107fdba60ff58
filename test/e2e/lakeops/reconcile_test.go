package lakeops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/chdb"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
	"github.com/connectd/connectd/internal/testutil/chdb/chshimtest"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
	"github.com/connectd/connectd/lakeops/reconcile"
)

// pipeline is one topic of Debezium CDC records feeding both sinks (each its own connector) on
// `connectd standalone` workers, an Iceberg table in a SQLite catalog and a ClickHouse table on chDB.
type pipeline struct {
	t           *testing.T
	addr, topic string
	parts       int
	dir         string
	catDB, wh   string
	db          string
	s           *chdb.Session
	srv         *chshim.Server
	next        map[int32]int64
	streams     []cdcstream.Stream
	worker      *workerproc.Proc
}

const (
	iceConnector = "recon-iceberg-"
	chConnector  = "recon-clickhouse-"
)

func newPipeline(t *testing.T) *pipeline {
	s, srv := chshimtest.Engine(t)
	p := &pipeline{t: t, addr: kafkatest.Bootstrap(t), topic: kafkatest.UniqueName(t, "recon"), parts: 3, dir: t.TempDir(),
		s: s, srv: srv, db: chdbtest.Database(t), next: map[int32]int64{}}
	p.catDB, p.wh = filepath.Join(p.dir, "catalog.db"), filepath.Join(p.dir, "warehouse")
	kafkatest.CreateTopic(t, p.addr, p.topic, int32(p.parts), nil)
	chdbtest.MustExec(t, s, "CREATE TABLE "+p.db+`.customers (id String, name String, qty Int64, updated_at Int64,
		email Nullable(String), _version UInt64, is_deleted UInt8)
		ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id SETTINGS non_replicated_deduplication_window = 1000`)
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(p.dir, name), []byte(body), 0o644))
	}
	write("worker.properties", fmt.Sprintf(`bootstrap.servers=%s
listeners=http://127.0.0.1:0
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.flush.interval.ms=200
`, p.addr))
	write("iceberg.properties", fmt.Sprintf(`name=%s
connector.class=org.apache.iceberg.connect.IcebergSinkConnector
tasks.max=1
topics=%s
iceberg.tables=cdc.customers,cdc.history
iceberg.table.cdc.history.raw-cdc=true
iceberg.tables.auto-create-enabled=true
iceberg.tables.evolve-schema-enabled=true
iceberg.tables.upsert-mode-enabled=true
iceberg.tables.default-id-columns=id
iceberg.table.cdc.customers.version-column=source.lsn
iceberg.table.cdc.customers.partition-by=bucket(id,4)
iceberg.catalog.type=sql
iceberg.catalog.uri=jdbc:sqlite:%s
iceberg.catalog.warehouse=%s
iceberg.control.commit.interval-ms=200
`, iceConnector+p.topic, p.topic, p.catDB, p.wh))
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
`, chConnector+p.topic, p.topic, p.topic, srv.Port(), p.db))
	t.Cleanup(p.stop)
	return p
}

// props are the reconcile properties for this pipeline.
func (p *pipeline) props() map[string]string {
	return map[string]string{
		"iceberg.catalog.type":      "sql",
		"iceberg.catalog.uri":       "jdbc:sqlite:" + p.catDB,
		"iceberg.catalog.warehouse": p.wh,
		"iceberg.table":             "cdc.customers",
		"clickhouse.hostname":       "127.0.0.1",
		"clickhouse.port":           fmt.Sprint(p.srv.Port()),
		"clickhouse.database":       p.db,
		"clickhouse.table":          "customers",
		"clickhouse.group.id":       "connect-" + chConnector + p.topic,
		"kafka.bootstrap.servers":   p.addr,
		"buckets":                   "4",
	}
}

func (p *pipeline) reconcile() *reconcile.Report {
	p.t.Helper()
	cfg, err := reconcile.ParseConfig(p.props())
	require.NoError(p.t, err)
	r, err := reconcile.Run(context.Background(), cfg)
	require.NoError(p.t, err)
	var buf bytes.Buffer
	r.WriteText(&buf)
	p.t.Logf("reconcile:\n%s", buf.String())
	return r
}

// start runs a worker with the named connector files.
func (p *pipeline) start(connectors ...string) {
	p.stop()
	args := []string{"standalone", filepath.Join(p.dir, "worker.properties")}
	for _, c := range connectors {
		args = append(args, filepath.Join(p.dir, c+".properties"))
	}
	p.worker = workerproc.Start(p.t, args...)
}

func (p *pipeline) stop() {
	if p.worker != nil {
		p.worker.Kill()
	}
	p.worker = nil
}

// produce generates n random CDC streams (keys disjoint from earlier ones) and produces them interleaved.
func (p *pipeline) produce(rng *rand.Rand, n int) int {
	var streams []cdcstream.Stream
	for i := 0; i < n; i++ {
		streams = append(streams, cdcstream.Generate(rng, fmt.Sprintf("s%d", len(p.streams)+i), cdcstream.DefaultConfig()))
	}
	p.streams = append(p.streams, streams...)
	var msgs []*kgo.Record
	for _, tg := range cdcstream.Interleave(rng, streams) {
		s := streams[tg.Stream]
		e := s.Events[tg.Index]
		k, v := cdcstream.Debezium(s, e)
		m := &kgo.Record{Topic: p.topic, Partition: cdcstream.Partition(s.FullKey(e), p.parts), Key: k}
		if v != nil {
			m.Value = v
		}
		msgs = append(msgs, m)
	}
	kafkatest.ProducePartitioned(p.t, p.addr, p.topic, msgs...)
	for _, m := range msgs {
		p.next[m.Partition] = max(p.next[m.Partition], m.Offset+1)
	}
	return len(msgs)
}

// waitGroup waits until the connector's group committed every produced record.
func (p *pipeline) waitGroup(connector string) {
	deadline := time.Now().Add(4 * time.Minute)
	for {
		got := kafkatest.CommittedOffsets(p.t, p.addr, "connect-"+connector+p.topic, p.topic) // retries while the coordinator loads
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
			p.t.Fatalf("%s did not commit everything: committed %v, produced %v", connector, got, p.next)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quoteString is a ClickHouse string literal.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// model is the current state of every key produced so far (version: source.lsn).
func (p *pipeline) model() map[string]cdcstream.Row {
	out := map[string]cdcstream.Row{}
	for _, s := range p.streams {
		for k, r := range cdcstream.State(s.Events, cdcstream.VersionLSN) {
			out[s.Prefix+"-"+k] = r
		}
	}
	return out
}

// crossCheck reads both tables with independent readers (DuckDB for Iceberg, FINAL on the engine for
// ClickHouse) and checks the report's row counts against them and against the model.
func (p *pipeline) crossCheck(r *reconcile.Report, iceRows, chRows int) {
	p.t.Helper()
	cat, err := catalogx.Open(context.Background(), "", map[string]string{"type": "sql", "uri": "jdbc:sqlite:" + p.catDB, "warehouse": p.wh})
	require.NoError(p.t, err)
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("cdc.customers"))
	require.NoError(p.t, err)
	if r.Cut.SnapshotID == tbl.CurrentSnapshot().SnapshotID {
		res := icebergtest.Read(p.t, tbl.MetadataLocation(), "SELECT count(*) AS n FROM t", nil)
		require.Equal(p.t, fmt.Sprint(iceRows), fmt.Sprint(res.Maps()[0]["n"]), "DuckDB's row count of the Iceberg table")
	}
	require.Equal(p.t, int64(iceRows), r.Iceberg.Rows, "reconcile's Iceberg row count")
	n := chdbtest.MustQuery(p.t, p.s, "SELECT count() FROM "+p.db+".customers FINAL")
	require.Equal(p.t, fmt.Sprint(chRows), n, "ClickHouse FINAL row count")
	require.Equal(p.t, int64(chRows), r.ClickHouse.Rows, "reconcile's ClickHouse row count")
}

// TestReconcileEndToEnd feeds both sinks the same random CDC stream through a real broker and checks what
// reconcile reports: clean when both hold the stream; lag, not drift, while the ClickHouse connector is
// stopped (and while the Iceberg one is); exactly the keys changed, deleted and added behind the sink's
// back in ClickHouse.
func TestReconcileEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	p := newPipeline(t)
	p.start("iceberg", "clickhouse")
	p.produce(rng, 60)
	p.waitGroup(iceConnector)
	p.waitGroup(chConnector)

	live := len(p.model())
	r := p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	require.True(t, r.Cut.Consistent, r.Cut.Reason)
	require.Zero(t, r.Cut.LagRecords)
	require.Zero(t, r.MismatchedRows)
	require.True(t, r.Version.Compared, "source versions compared (_cdc_version vs _version)")
	require.Equal(t, r.Iceberg.RowChecksum, r.ClickHouse.RowChecksum)
	p.crossCheck(r, live, live)

	// ClickHouse connector stopped: ClickHouse lags; compared at the Iceberg snapshot it matches.
	p.start("iceberg")
	behind := p.produce(rng, 30)
	p.waitGroup(iceConnector)
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status, "lag is not drift")
	require.True(t, r.Cut.Consistent, r.Cut.Reason)
	require.Equal(t, "clickhouse", r.Cut.LaggingLayer)
	require.Equal(t, int64(behind), r.Cut.LagRecords)
	require.Zero(t, r.MismatchedRows)
	p.crossCheck(r, live, live)

	// The same with a lag tolerance below the lag: exit status lag.
	props := p.props()
	props[reconcile.KeyLagTolerance] = "0"
	cfg, err := reconcile.ParseConfig(props)
	require.NoError(t, err)
	rl, err := reconcile.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, reconcile.StatusLag, rl.Status)
	require.Equal(t, reconcile.ExitLag, rl.ExitCode())

	// Both again: caught up and clean.
	p.start("iceberg", "clickhouse")
	p.waitGroup(chConnector)
	live = len(p.model())
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	require.True(t, r.Cut.Consistent, r.Cut.Reason)
	require.Zero(t, r.Cut.LagRecords)
	p.crossCheck(r, live, live)

	// Iceberg connector stopped: Iceberg lags; no snapshot holds ClickHouse's offsets, so the keys of the
	// records in between are read from Kafka and left out.
	p.start("clickhouse")
	behind = p.produce(rng, 20)
	p.waitGroup(chConnector)
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status, "lag is not drift")
	require.Equal(t, "iceberg", r.Cut.LaggingLayer)
	require.Equal(t, int64(behind), r.Cut.LagRecords)
	require.Positive(t, r.InFlightKeys)
	require.Zero(t, r.MismatchedRows)
	p.start("iceberg", "clickhouse")
	p.waitGroup(iceConnector)
	p.waitGroup(chConnector)
	p.stop()
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	live = len(p.model())
	p.crossCheck(r, live, live)

	// Behind the sink's back: a row changed, a row deleted, a row added.
	var keys []string
	for k := range p.model() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	changed, deleted := keys[0], keys[1]
	tbl := p.db + ".customers"
	chdbtest.MustExec(t, p.s, "INSERT INTO "+tbl+" SELECT id, 'tampered', qty, updated_at, email, _version + 1, 0 FROM "+tbl+" FINAL WHERE id = "+quoteString(changed))
	chdbtest.MustExec(t, p.s, "INSERT INTO "+tbl+" SELECT id, name, qty, updated_at, email, _version + 1, 1 FROM "+tbl+" FINAL WHERE id = "+quoteString(deleted))
	chdbtest.MustExec(t, p.s, "INSERT INTO "+tbl+" VALUES ('zz-added', 'new', 1, 1, NULL, 1, 0)")
	r = p.reconcile()
	require.Equal(t, reconcile.StatusDrift, r.Status)
	require.Equal(t, reconcile.ExitDrift, r.ExitCode())
	require.True(t, r.Cut.Consistent, r.Cut.Reason)
	require.Equal(t, 3, r.MismatchedRows)
	require.Equal(t, []reconcile.Mismatch{
		{Key: changed, Kind: reconcile.Different, Columns: []string{"name", "version"}},
		{Key: deleted, Kind: reconcile.MissingInClickHouse},
		{Key: "zz-added", Kind: reconcile.ExtraInClickHouse},
	}, r.Mismatches)
	bad := 0
	for _, b := range r.Buckets {
		if !b.Match {
			bad++
		}
	}
	require.Positive(t, bad)
	p.crossCheck(r, live, live)

	// The command: JSON output, exit code 1 on drift.
	var args []string
	for k, v := range p.props() {
		args = append(args, k+"="+v)
	}
	cmd := exec.Command(workerproc.Binary(t), append([]string{"reconcile", "-format", "json"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	require.Error(t, err, stderr.String())
	require.Equal(t, reconcile.ExitDrift, cmd.ProcessState.ExitCode(), stderr.String())
	var out reconcile.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
	require.Equal(t, r.Mismatches, out.Mismatches)
	require.True(t, strings.HasPrefix(out.Status, "drift"))
}

// An Iceberg table that exists without a snapshot yet (created, its first commit still to come) holds
// nothing: what ClickHouse holds is lag, its keys in flight, not drift.
func TestReconcileIcebergWithoutSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	seed := testSeed(t)
	p := newPipeline(t)
	p.start("clickhouse")
	n := p.produce(rand.New(rand.NewSource(seed)), 10)
	p.waitGroup(chConnector)
	p.stop()
	cat, err := catalogx.Open(context.Background(), "", map[string]string{"type": "sql", "uri": "jdbc:sqlite:" + p.catDB, "warehouse": p.wh})
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(context.Background(), catalog.ToIdentifier("cdc"), nil))
	sc := ice.NewSchemaWithIdentifiers(0, []int{1},
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.String, Required: true},
		ice.NestedField{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
		ice.NestedField{ID: 3, Name: "_cdc_version", Type: ice.PrimitiveTypes.String})
	_, err = cat.CreateTable(context.Background(), catalog.ToIdentifier("cdc.customers"), sc)
	require.NoError(t, err)

	r := p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status, "lag is not drift")
	require.False(t, r.Cut.Consistent)
	require.Equal(t, "iceberg", r.Cut.LaggingLayer)
	require.Equal(t, int64(n), r.Cut.LagRecords)
	require.Zero(t, r.Iceberg.Rows)
	require.Zero(t, r.MismatchedRows)
	require.Positive(t, r.InFlightKeys)
}

// testSeed is the seed of a randomized end-to-end test: RECONCILE_SEED replays a printed one.
func testSeed(t *testing.T) int64 {
	seed := time.Now().UnixNano()
	if v := os.Getenv("RECONCILE_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err, "RECONCILE_SEED")
		seed = n
	}
	t.Logf("seed %d (RECONCILE_SEED replays it)", seed)
	return seed
}
