package iceberg

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/commit"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/metrics"
)

// fakeCtx is a SinkTaskContext that records rewinds and commit requests.
type fakeCtx struct {
	mu      sync.Mutex
	props   map[string]string
	rewinds []map[connect.TopicPartition]int64
	commits int
}

func (f *fakeCtx) Configs() map[string]string { return f.props }
func (f *fakeCtx) Offset(o map[connect.TopicPartition]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rewinds = append(f.rewinds, o)
}
func (f *fakeCtx) Timeout(time.Duration)                              { _ = 0 }
func (f *fakeCtx) Assignment() []connect.TopicPartition               { return nil }
func (f *fakeCtx) Pause(...connect.TopicPartition)                    {}
func (f *fakeCtx) Resume(...connect.TopicPartition)                   {}
func (f *fakeCtx) RequestCommit()                                     { f.mu.Lock(); f.commits++; f.mu.Unlock() }
func (f *fakeCtx) ErrantRecordReporter() connect.ErrantRecordReporter { return nil }
func (f *fakeCtx) PluginMetrics() connect.PluginMetrics               { return metrics.Plugins }
func (f *fakeCtx) KafkaClients() connect.KafkaClients                 { return kafka.PluginClients{} }
func (f *fakeCtx) SharedValues() *connect.SharedValues                { return &testWorker }

// testWorker is the worker the package's tests run their tasks on: the tasks of a connector share a coordinator.
var testWorker connect.SharedValues

var testSeq int

// sinkProps returns base properties with a SQLite catalog in a temp dir.
func sinkProps(t testing.TB, extra map[string]string) (map[string]string, string) {
	dir := t.TempDir()
	testSeq++
	p := map[string]string{
		"name":                               fmt.Sprintf("ice-%s-%d", filepath.Base(dir), testSeq),
		"connector.class":                    ApacheClass,
		"iceberg.catalog.catalog-impl":       "org.apache.iceberg.jdbc.JdbcCatalog",
		"iceberg.catalog.uri":                "jdbc:sqlite:" + filepath.Join(dir, "catalog.db"),
		"iceberg.catalog.warehouse":          filepath.Join(dir, "warehouse"),
		"iceberg.control.commit.interval-ms": "3600000", // tests commit explicitly
		"iceberg.tables.auto-create-enabled": "true",
	}
	for k, v := range extra {
		p[k] = v
	}
	return p, dir
}

func startTask(t testing.TB, props map[string]string) (*Task, *fakeCtx) {
	t.Helper()
	ctx := &fakeCtx{props: props}
	task := &Task{}
	task.Initialize(ctx)
	require.NoError(t, task.Start(props))
	return task, ctx
}

// --- Debezium record builders ---

var (
	custSchema = connect.StructBuilder().Name("db.public.customers.Value").
			Field("id", connect.Int64Builder().MustBuild()).
			Field("name", connect.StringBuilder().Optional().MustBuild()).
			Field("ts", connect.TimestampBuilder().Optional().MustBuild()).
			Field("version", connect.Int64Builder().Optional().MustBuild()).
			MustBuild()
	custKeySchema = connect.StructBuilder().Name("db.public.customers.Key").
			Field("id", connect.Int64Builder().MustBuild()).MustBuild()
	sourceSchema = connect.StructBuilder().Name("io.debezium.connector.postgresql.Source").
			Field("connector", connect.StringBuilder().MustBuild()).
			Field("name", connect.StringBuilder().MustBuild()).
			Field("db", connect.StringBuilder().MustBuild()).
			Field("schema", connect.StringBuilder().MustBuild()).
			Field("table", connect.StringBuilder().MustBuild()).
			Field("ts_ms", connect.Int64Builder().MustBuild()).
			Field("lsn", connect.Int64Builder().Optional().MustBuild()).
			Field("txId", connect.Int64Builder().Optional().MustBuild()).
			MustBuild()
	envSchema = connect.StructBuilder().Name("db.public.customers.Envelope").
			Field("before", connect.BuilderFrom(custSchema).Optional().MustBuild()).
			Field("after", connect.BuilderFrom(custSchema).Optional().MustBuild()).
			Field("source", sourceSchema).
			Field("op", connect.StringBuilder().MustBuild()).
			Field("ts_ms", connect.Int64Builder().Optional().MustBuild()).
			MustBuild()
)

var baseDay = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// cdcRecord is the event as the Debezium record at offset.
func cdcRecord(e cdcEvent, topic string, partition int32, offset int64) *connect.SinkRecord {
	row := func() *connect.Struct {
		s := connect.NewStruct(envSchema.Fields()[0].Schema)
		s.PutIndex(0, e.ID)
		if !e.KeyOnly {
			s.PutIndex(1, e.Name)
			s.PutIndex(2, baseDay.Add(time.Duration(e.Day)*24*time.Hour))
			s.PutIndex(3, e.Version)
		}
		return s
	}
	env := connect.NewStruct(envSchema)
	if e.Op == "d" {
		env.PutIndex(0, row())
	} else {
		r := row()
		env.PutIndex(1, r)
	}
	src := connect.NewStruct(sourceSchema)
	src.PutIndex(0, "postgresql")
	src.PutIndex(1, "db")
	src.PutIndex(2, "shop")
	src.PutIndex(3, "public")
	src.PutIndex(4, "customers")
	src.PutIndex(5, int64(1700000000000)+offset)
	src.PutIndex(6, int64(1000+offset))
	src.PutIndex(7, int64(500+offset/10))
	env.PutIndex(2, src)
	env.PutIndex(3, e.Op)
	env.PutIndex(4, int64(1700000000000)+offset)
	key := connect.NewStruct(custKeySchema)
	key.PutIndex(0, e.ID)
	return &connect.SinkRecord{Topic: topic, Partition: partition, KeySchema: custKeySchema, Key: key,
		ValueSchema: envSchema, Value: env, Timestamp: 1700000000000 + offset, TimestampType: connect.CreateTime,
		Offset: offset, OriginalTopic: topic, OriginalPartition: partition, OriginalOffset: offset}
}

func loadTable(t testing.TB, props map[string]string, name string) (catalog.Catalog, string) {
	t.Helper()
	cfg, err := ParseConfig(props)
	require.NoError(t, err)
	cat, err := catalogx.Open(context.Background(), cfg.CatalogName, cfg.CatalogProps)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(name))
	require.NoError(t, err)
	return cat, tbl.MetadataLocation()
}

// TestDebeziumUpsertAndRawHistory: a Debezium CDC stream over many keys into an upsert table
// (partitioned by day(ts), so keys move partitions) and a raw history table; the independent
// reader (DuckDB) sees exactly the expected current state and every event once.
func TestDebeziumUpsertAndRawHistory(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{
		"iceberg.tables":                                    "shop.customers,shop.customers_history",
		"iceberg.tables.default-id-columns":                 "id",
		"iceberg.table.shop.customers.partition-by":         "day(ts)",
		"iceberg.table.shop.customers.version-column":       "version",
		"iceberg.table.shop.customers_history.raw-cdc":      "true",
		"iceberg.table.shop.customers_history.partition-by": "kafka_partition",
	})
	task, fctx := startTask(t, props)
	const parts = 3
	events, want := cdcStream(7, 3000, 200, parts)
	var offs [parts]int64
	var batch []*connect.SinkRecord
	produced := 0
	for i, e := range events {
		p := int32(e.ID % parts) // keyed partitioning
		r := cdcRecord(e, "cdc.shop.customers", p, offs[p])
		offs[p]++
		batch = append(batch, r)
		produced++
		if len(batch) == 97 || i == len(events)-1 {
			require.NoError(t, task.Put(context.Background(), batch))
			// redelivery of the same batch (e.g. after a RetriableError) is ignored
			if i%5 == 0 {
				require.NoError(t, task.Put(context.Background(), batch))
			}
			batch = nil
		}
		if i%700 == 699 {
			require.True(t, task.coord.CommitNow(context.Background()))
		}
	}
	require.True(t, task.coord.CommitNow(context.Background()))
	pc, err := task.PreCommit(context.Background(), nil)
	require.NoError(t, err)
	for p := 0; p < parts; p++ {
		require.Equal(t, offs[p], pc[connect.TopicPartition{Topic: "cdc.shop.customers", Partition: int32(p)}].Offset)
	}
	require.Positive(t, fctx.commits)
	require.NoError(t, task.Stop())

	_, meta := loadTable(t, props, "shop.customers")
	got := duckRows(t, meta, "SELECT id, name, version FROM t")
	require.Equal(t, wantRows(want), got, "current state through DuckDB")
	dup := duckRows(t, meta, "SELECT id, count(*) FROM t GROUP BY id HAVING count(*) > 1")
	require.Empty(t, dup)

	cat, hmeta := loadTable(t, props, "shop.customers_history")
	cnt := duckRows(t, hmeta, "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)) FROM t")
	require.Equal(t, []string{fmt.Sprintf("%d|%d", produced, produced)}, cnt)
	ops := duckRows(t, hmeta, "SELECT DISTINCT source_system, source_schema, source_table FROM t")
	require.Equal(t, []string{"postgresql:db|public|customers"}, ops)

	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.customers"))
	require.NoError(t, err)
	require.Len(t, tbl.Schema().IdentifierFieldIDs, 1)
	spec := tbl.Spec()
	require.Equal(t, 1, spec.NumFields())
	require.Equal(t, "day", spec.Field(0).Transform.String())
}

// TestCrashRecoveryExactlyOnce simulates process deaths at random points (between table
// commits of a round, after a round before the group offset is committed, mid-batch) and
// restarts from the group offsets, as the worker does after SIGKILL. The upsert table must
// equal the expected state and the raw history table must hold every record exactly once.
func TestCrashRecoveryExactlyOnce(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{
		"iceberg.tables":                               "shop.customers,shop.customers_history",
		"iceberg.tables.default-id-columns":            "id",
		"iceberg.table.shop.customers.partition-by":    "bucket(id,4)",
		"iceberg.table.shop.customers_history.raw-cdc": "true",
		"iceberg.tables.upsert-mode-enabled":           "true",
	})
	const parts = 4
	events, want := cdcStream(11, 2500, 150, parts)
	logs := make([][]*connect.SinkRecord, parts)
	for _, e := range events {
		p := int32(e.ID % parts)
		logs[p] = append(logs[p], cdcRecord(e, "cdc.shop.customers", p, int64(len(logs[p]))))
	}
	group := make([]int64, parts) // the Connect group's committed offsets
	rng := rand.New(rand.NewSource(3))
	crashes := 0
	for life := 0; ; life++ {
		final := crashes >= 8
		task, _ := startTask(t, props)
		pos := append([]int64(nil), group...)
		dead := false
		if !final {
			task.coord.tables.SetHooks(&commit.Hooks{BeforeTableCommit: func(string) error {
				if rng.Intn(3) == 0 {
					dead = true
					return fmt.Errorf("killed")
				}
				return nil
			}})
		}
		for steps := 0; !dead; steps++ {
			// poll a random batch from a random partition
			p := rng.Intn(parts)
			n := rng.Intn(40) + 1
			end := min(int64(len(logs[p])), pos[p]+int64(n))
			batch := logs[p][pos[p]:end]
			pos[p] = end
			require.NoError(t, task.Put(context.Background(), batch))
			if rng.Intn(8) == 0 || (final && done(pos, logs)) {
				ok := task.coord.CommitNow(context.Background())
				if dead {
					break
				}
				require.True(t, ok)
				if rng.Intn(4) == 0 && !final {
					dead = true // killed after the table commits, before the group commit
					break
				}
				pc, err := task.PreCommit(context.Background(), nil)
				require.NoError(t, err)
				for tp, o := range pc {
					group[tp.Partition] = o.Offset
				}
				if final && done(pos, logs) {
					break
				}
			}
			if !final && rng.Intn(60) == 0 {
				dead = true // killed mid-stream with buffered records
			}
		}
		if !final {
			crashes++
			task.coord.crash()
			continue
		}
		require.NoError(t, task.Stop())
		break
	}
	require.GreaterOrEqual(t, crashes, 8)
	_, meta := loadTable(t, props, "shop.customers")
	require.Equal(t, wantRows(want), duckRows(t, meta, "SELECT id, name, version FROM t"))
	_, hmeta := loadTable(t, props, "shop.customers_history")
	require.Equal(t, []string{fmt.Sprintf("%d|%d", len(events), len(events))},
		duckRows(t, hmeta, "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)) FROM t"))
}

func done(pos []int64, logs [][]*connect.SinkRecord) bool {
	for p := range logs {
		if pos[p] < int64(len(logs[p])) {
			return false
		}
	}
	return true
}

// TestOneSnapshotPerTablePerRound: several tasks of one connector share the coordinator; a
// commit round produces one snapshot per table, not one per task.
func TestOneSnapshotPerTablePerRound(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{KeyTables: "db.a,db.b"})
	t1, _ := startTask(t, props)
	t2, _ := startTask(t, props)
	t3, _ := startTask(t, props)
	require.Same(t, t1.coord, t2.coord)
	require.Same(t, t1.coord, t3.coord)
	for round := 0; round < 3; round++ {
		for i, task := range []*Task{t1, t2, t3} {
			var recs []*connect.SinkRecord
			for j := 0; j < 10; j++ {
				off := int64(round*10 + j)
				recs = append(recs, &connect.SinkRecord{Topic: "t", Partition: int32(i), Value: map[string]any{"n": off},
					Offset: off, OriginalTopic: "t", OriginalPartition: int32(i), OriginalOffset: off})
			}
			require.NoError(t, task.Put(context.Background(), recs))
		}
		require.True(t, t1.coord.CommitNow(context.Background()))
	}
	for _, tk := range []*Task{t1, t2, t3} {
		require.NoError(t, tk.Stop())
	}
	for _, name := range []string{"db.a", "db.b"} {
		cat, meta := loadTable(t, props, name)
		tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(name))
		require.NoError(t, err)
		require.Len(t, tbl.Metadata().Snapshots(), 3, name)
		require.Equal(t, []string{"90"}, duckRows(t, meta, "SELECT count(*) FROM t"))
		offs, err := icetable.CommittedOffsets(tbl, "", icetable.OffsetsSummaryKey("connect-"+props["name"]))
		require.NoError(t, err)
		require.Equal(t, icetable.Offsets{{Topic: "t", Partition: 0}: 30, {Topic: "t", Partition: 1}: 30, {Topic: "t", Partition: 2}: 30}, offs)
	}
}

// TestEnvelopeVersionColumn: a version column that is a path into the Debezium envelope
// (source.lsn) orders versions within a commit, here with the table partitioned by a non-key
// column (so the lookup runs too).
func TestEnvelopeVersionColumn(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{
		KeyTables:                             "shop.c",
		KeyDefaultIDColumns:                   "id",
		"iceberg.table.shop.c.partition-by":   "day(ts)",
		"iceberg.table.shop.c.version-column": "source.lsn",
	})
	task, _ := startTask(t, props)
	// two versions of key 1 in one commit, the older one (lower lsn) arriving later
	newer := cdcRecord(cdcEvent{Op: "u", ID: 1, Name: "new", Version: 2, Day: 1}, "cdc", 0, 10) // lsn 1010
	older := cdcRecord(cdcEvent{Op: "u", ID: 1, Name: "old", Version: 1, Day: 2}, "cdc", 0, 11)
	older.Value.(*connect.Struct).Get("source").(*connect.Struct).PutIndex(6, int64(900))
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{newer, older}))
	require.True(t, task.coord.CommitNow(context.Background()), task.coord.stats().LastError)
	_, meta := loadTable(t, props, "shop.c")
	require.Equal(t, []string{"1|new|2"}, duckRows(t, meta, "SELECT id, name, version FROM t"))
	// a second commit runs the partition lookup (the key moves from day 1 to day 3)
	third := cdcRecord(cdcEvent{Op: "u", ID: 1, Name: "third", Version: 3, Day: 3}, "cdc", 0, 12)
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{third}))
	require.True(t, task.coord.CommitNow(context.Background()), task.coord.stats().LastError)
	require.NoError(t, task.Stop())
	_, meta = loadTable(t, props, "shop.c")
	require.Equal(t, []string{"1|third|3"}, duckRows(t, meta, "SELECT id, name, version FROM t"))
}

// TestFailedRoundRetriesWithoutRewind: a round in which one table's commit fails gives its
// records back to the task; the next round commits them, the table that did commit skips them,
// and the consumer is never rewound (no group rebalance). With the buffers full while rounds
// fail, Put pushes back with a RetriableError.
func TestFailedRoundRetriesWithoutRewind(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{
		"iceberg.tables":                               "shop.customers,shop.customers_history",
		"iceberg.tables.default-id-columns":            "id",
		"iceberg.table.shop.customers_history.raw-cdc": "true",
		"iceberg.tables.upsert-mode-enabled":           "true",
		KeyMaxBufferedRecords:                          "100",
		KeyCommitRetryMs:                               "3600000",
	})
	task, fctx := startTask(t, props)
	defer task.Stop()
	const parts = 2
	events, want := cdcStream(5, 900, 60, parts)
	var offs [parts]int64
	var batches [][]*connect.SinkRecord
	for i := 0; i < len(events); i += 20 {
		var b []*connect.SinkRecord
		for _, e := range events[i:min(i+20, len(events))] {
			p := int32(e.ID % parts)
			b = append(b, cdcRecord(e, "cdc.shop.customers", p, offs[p]))
			offs[p]++
		}
		batches = append(batches, b)
	}
	ctx := context.Background()
	buffered := func() int { task.mu.Lock(); defer task.mu.Unlock(); return task.nbuf }
	// every round: the history table commits, then the upsert table's commit "fails"
	task.coord.tables.SetHooks(&commit.Hooks{AfterTableCommit: func(table string) error {
		if table == "shop.customers" {
			return fmt.Errorf("injected: catalog unavailable")
		}
		return nil
	}})
	require.NoError(t, task.Put(ctx, batches[0]))
	require.NoError(t, task.Put(ctx, batches[1])) // 40 records: at most 80 buffered rows < max-buffered, no early round
	before := buffered()
	require.Greater(t, before, 40, "the history rows and the upsert table's records")
	require.False(t, task.coord.CommitNow(ctx))
	require.Equal(t, before, buffered(), "the records are back in the buffers")
	// rounds keep failing: once 2 x max-buffered rows are buffered, Put pushes back
	next := 2
	var re *connect.RetriableError
	for ; next < len(batches); next++ {
		if err := task.Put(ctx, batches[next]); err != nil {
			require.ErrorAs(t, err, &re)
			break
		}
	}
	require.Less(t, next, len(batches), "Put never pushed back")
	require.GreaterOrEqual(t, buffered()+40, 200)
	// the catalog is back: everything commits, each record once
	task.coord.tables.SetHooks(nil)
	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
	for _, b := range batches[next:] {
		require.NoError(t, task.Put(ctx, b))
	}
	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
	require.Empty(t, fctx.rewinds, "no rewind")
	pc, err := task.PreCommit(ctx, nil)
	require.NoError(t, err)
	for p := 0; p < parts; p++ {
		require.Equal(t, offs[p], pc[connect.TopicPartition{Topic: "cdc.shop.customers", Partition: int32(p)}].Offset)
	}
	_, meta := loadTable(t, props, "shop.customers")
	require.Equal(t, wantRows(want), duckRows(t, meta, "SELECT id, name, version FROM t"))
	_, hmeta := loadTable(t, props, "shop.customers_history")
	require.Equal(t, []string{fmt.Sprintf("%d|%d", len(events), len(events))},
		duckRows(t, hmeta, "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)) FROM t"))
}

// crash stops the coordinator the way the process dying would: without a final round.
func (c *coordinator) crash() {
	c.mu.Lock()
	c.closed = true
	c.tasks = map[*Task]struct{}{}
	c.cond.Broadcast()
	c.mu.Unlock()
	c.shutdown()
}
