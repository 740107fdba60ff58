package iceberg

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/commit"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// procCtx is the task context of a task in one of several simulated worker processes.
type procCtx struct {
	fakeCtx
	id    string
	kafka map[string]string
}

func (p *procCtx) WorkerKafkaProps() map[string]string { return maps.Clone(p.kafka) }
func (p *procCtx) WorkerID() string                    { return p.id }
func (p *procCtx) Distributed() bool                   { return true }

// startProcTask starts a task in its own simulated process (its own coordinator).
func startProcTask(t testing.TB, props map[string]string, id, addr string) *Task {
	t.Helper()
	cfg, err := ParseConfig(props)
	require.NoError(t, err)
	ctx := &procCtx{fakeCtx: fakeCtx{props: props}, id: id, kafka: map[string]string{"bootstrap.servers": addr}}
	coord, err := newCoordinator(cfg, ctx)
	require.NoError(t, err)
	task := &Task{coord: coord}
	task.Initialize(ctx)
	require.NoError(t, task.Start(props))
	t.Cleanup(func() { _ = task.Stop() })
	return task
}

// TestControlTopicOneSnapshotPerRound: two worker processes (each its own coordinator and
// task, one of them the committer) on the real broker; each round commits ONE snapshot per
// table holding the files of both, and the result is exact (DuckDB).
func TestControlTopicOneSnapshotPerRound(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl-cdc")
	const parts = 4
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
	props, _ := sinkProps(t, map[string]string{
		"topics":                            topic,
		"iceberg.tables":                    "shop.customers,shop.customers_history",
		"iceberg.tables.default-id-columns": "id",
		"iceberg.table.shop.customers.partition-by":         "day(ts)",
		"iceberg.table.shop.customers.version-column":       "version",
		"iceberg.table.shop.customers_history.raw-cdc":      "true",
		"iceberg.control.coordination":                      "topic",
		"iceberg.control.topic":                             kafkatest.UniqueName(t, "ctl"),
		"iceberg.control.commit.interval-ms":                "300",
		"iceberg.control.commit.timeout-ms":                 "10000",
		"iceberg.control.commit.max-buffered-records":       "1000000",
		"iceberg.table.shop.customers_history.partition-by": "kafka_partition",
	})
	a := startProcTask(t, props, "a:8083", addr)
	b := startProcTask(t, props, "b:8083", addr)
	tp := func(p int32) connect.TopicPartition { return connect.TopicPartition{Topic: topic, Partition: p} }
	require.NoError(t, a.Open([]connect.TopicPartition{tp(0), tp(1)})) // a holds the first partition: committer
	require.NoError(t, b.Open([]connect.TopicPartition{tp(2), tp(3)}))

	events, want := cdcStream(11, 2400, 150, parts)
	var offs [parts]int64
	owner := func(p int32) *Task {
		if p < 2 {
			return a
		}
		return b
	}
	durable := func(task *Task, ps ...int32) bool {
		pc, err := task.PreCommit(context.Background(), nil)
		require.NoError(t, err)
		for _, p := range ps {
			if pc[tp(p)].Offset != offs[p] {
				return false
			}
		}
		return true
	}
	const rounds = 4
	per := len(events) / rounds
	for r := 0; r < rounds; r++ {
		batches := map[int32][]*connect.SinkRecord{}
		for _, e := range events[r*per : (r+1)*per] {
			p := int32(e.ID % parts)
			batches[p] = append(batches[p], cdcRecord(e, topic, p, offs[p]))
			offs[p]++
		}
		for p, recs := range batches {
			require.NoError(t, owner(p).Put(context.Background(), recs))
		}
		require.Eventually(t, func() bool { return durable(a, 0, 1) && durable(b, 2, 3) }, 60*time.Second, 50*time.Millisecond,
			"round %d: stats a=%+v b=%+v", r, a.coord.stats(), b.coord.stats())
	}

	_, meta := loadTable(t, props, "shop.customers")
	require.Equal(t, wantRows(want), duckRows(t, meta, "SELECT id, name, version FROM t"), "current state through DuckDB")
	require.Empty(t, duckRows(t, meta, "SELECT id, count(*) FROM t GROUP BY id HAVING count(*) > 1"))
	cat, hmeta := loadTable(t, props, "shop.customers_history")
	require.Equal(t, []string{fmt.Sprintf("%d|%d", len(events), len(events))},
		duckRows(t, hmeta, "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)) FROM t"))

	// one snapshot per table per round, holding the files of both processes
	for _, name := range []string{"shop.customers", "shop.customers_history"} {
		tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(name))
		require.NoError(t, err)
		seen := map[string]bool{}
		both := 0
		for _, s := range tbl.Metadata().Snapshots() {
			if s.Summary == nil || s.Summary.Properties[icetable.SummaryCommitID] == "" {
				continue
			}
			id := s.Summary.Properties[icetable.SummaryCommitID]
			require.False(t, seen[id], "%s: two snapshots in round %s", name, id)
			seen[id] = true
			if n, _ := strconv.Atoi(s.Summary.Properties[commit.SummaryContributors]); n == 2 {
				both++
			}
		}
		require.Len(t, seen, rounds, "%s: one snapshot per round", name)
		require.Equal(t, rounds, both, "%s: every round holds files of both processes", name)
	}
	require.Zero(t, a.coord.stats().FailedRounds+b.coord.stats().FailedRounds)
}

// TestApplyFencesStaleParts: a part planned on an older head is never committed (a zombie
// committer, or a process that planned before someone else's commit).
func TestApplyFencesStaleParts(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t)
	tp := icetable.TP{Topic: "t", Partition: 0}
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "events"}, Opts: icetable.TableOptions{AutoCreate: true, OffsetsKey: icetable.OffsetsSummaryKey("g")}}
	rec := func(off int64) icetable.Rec {
		return icetable.Rec{TP: tp, Offset: off, Op: icerow.OpInsert, Schema: customerSchema, Row: icerow.Row{"id": off, "name": "x"}}
	}
	_, err := w.Commit(ctx, []icetable.Rec{rec(0)}, icetable.Offsets{tp: 1}, nil)
	require.NoError(t, err)
	p1, err := w.Prepare(ctx, []icetable.Rec{rec(1)})
	require.NoError(t, err)
	p2, err := w.Prepare(ctx, []icetable.Rec{rec(1), rec(2)}) // the same record, planned by a second committer
	require.NoError(t, err)
	_, err = w.Apply(ctx, []*icetable.Part{p1}, icetable.Offsets{tp: 2}, nil)
	require.NoError(t, err)
	_, err = w.Apply(ctx, []*icetable.Part{p2}, icetable.Offsets{tp: 3}, nil)
	require.ErrorIs(t, err, icetable.ErrFenced)
	// planned again on the new head, the replayed record is skipped
	p3, err := w.Prepare(ctx, []icetable.Rec{rec(1), rec(2)})
	require.NoError(t, err)
	require.Equal(t, 1, p3.Stats.Skipped)
	_, err = w.Apply(ctx, []*icetable.Part{p3}, icetable.Offsets{tp: 3}, nil)
	require.NoError(t, err)
	require.Len(t, scanRows(t, w.Tbl), 3)
}

// TestControlTopicTwoCommitters: both processes believe they lead (each holds "the first
// partition", as briefly during a rebalance) and run rounds concurrently, then one gives it
// up. Rounds interleave and fail, processes rewind and replay, and the tables still end up
// exact: nothing is committed twice, nothing lost.
func TestControlTopicTwoCommitters(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl2-cdc")
	const parts = 4
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
	props, _ := sinkProps(t, map[string]string{
		"topics":                            topic,
		"iceberg.tables":                    "shop.customers,shop.customers_history",
		"iceberg.tables.default-id-columns": "id",
		"iceberg.table.shop.customers.version-column":  "version",
		"iceberg.table.shop.customers_history.raw-cdc": "true",
		"iceberg.control.coordination":                 "topic",
		"iceberg.control.topic":                        kafkatest.UniqueName(t, "ctl2"),
		"iceberg.control.commit.interval-ms":           "200",
		"iceberg.control.commit.timeout-ms":            "2000",
		"iceberg.control.commit.retry-backoff-ms":      "100",
	})
	a := startProcTask(t, props, "a:8083", addr)
	b := startProcTask(t, props, "b:8083", addr)
	tp := func(p int32) connect.TopicPartition { return connect.TopicPartition{Topic: topic, Partition: p} }
	require.NoError(t, a.Open([]connect.TopicPartition{tp(0), tp(1)}))
	require.NoError(t, b.Open([]connect.TopicPartition{tp(0), tp(2), tp(3)})) // b wrongly claims 0 too

	events, want := cdcStream(5, 3000, 120, parts)
	// the log per partition, and what each task has been handed so far
	logs := make([][]*connect.SinkRecord, parts)
	for _, e := range events {
		p := int32(e.ID % parts)
		logs[p] = append(logs[p], cdcRecord(e, topic, p, int64(len(logs[p]))))
	}
	owner := func(p int32) *Task {
		if p < 2 {
			return a
		}
		return b
	}
	next := make([]int64, parts) // next offset to deliver per partition (a consumer's position)
	// seek applies the rewinds a task asked for (SinkTaskContext.Offset), as the worker does
	seek := func(task *Task) {
		ctx := task.Ctx.(*procCtx)
		ctx.mu.Lock()
		defer ctx.mu.Unlock()
		for _, rw := range ctx.rewinds {
			for p := int32(0); p < parts; p++ {
				if o, ok := rw[tp(p)]; ok && owner(p) == task {
					next[p] = o
				}
			}
		}
		ctx.rewinds = nil
	}
	// deliver simulates the consumers: each partition's next chunk, honouring rewinds (a Put
	// that drops its batch to rewind asks for the seek during the call)
	deliver := func(chunk int) {
		for p := int32(0); p < parts; p++ {
			task := owner(p)
			seek(task)
			end := min(int(next[p])+chunk, len(logs[p]))
			if int(next[p]) < end {
				require.NoError(t, task.Put(context.Background(), logs[p][next[p]:end]))
				next[p] = int64(end)
				seek(task)
			}
		}
	}
	durable := func() bool {
		for p := int32(0); p < parts; p++ {
			pc, err := owner(p).PreCommit(context.Background(), nil)
			require.NoError(t, err)
			if pc[tp(p)].Offset != int64(len(logs[p])) {
				return false
			}
		}
		return true
	}
	for i := 0; i < 60; i++ {
		deliver(25)
		time.Sleep(50 * time.Millisecond)
	}
	aLed, bLed := a.coord.stats().LedRounds, b.coord.stats().LedRounds
	require.Positive(t, aLed, "a committed rounds")
	require.Positive(t, bLed, "b committed rounds too (two committers at once)")
	require.NoError(t, b.Close([]connect.TopicPartition{tp(0)})) // the rebalance settles
	require.Eventually(t, func() bool { deliver(200); return durable() }, 90*time.Second, 100*time.Millisecond,
		"stats a=%+v b=%+v", a.coord.stats(), b.coord.stats())
	t.Logf("rounds a=%+v b=%+v", a.coord.stats(), b.coord.stats())

	_, meta := loadTable(t, props, "shop.customers")
	require.Equal(t, wantRows(want), duckRows(t, meta, "SELECT id, name, version FROM t"), "current state through DuckDB")
	_, hmeta := loadTable(t, props, "shop.customers_history")
	require.Equal(t, []string{fmt.Sprintf("%d|%d", len(events), len(events))},
		duckRows(t, hmeta, "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)) FROM t"))
}

// TestControlTopicPartitionAnsweredTwice: a partition moves between processes while a round
// waits (the old owner answered with its drained records, the new owner re-reads them from the
// group offset and answers the repeated START): its records must be committed once. (Found by
// review: both answers were planned on the same head, so the head check let both in.)
func TestControlTopicPartitionAnsweredTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ovl")
	kafkatest.CreateTopic(t, addr, topic, 2, nil)
	props, _ := sinkProps(t, map[string]string{
		"topics":                             topic,
		"iceberg.tables":                     "shop.history",
		"iceberg.table.shop.history.raw-cdc": "true",
		"iceberg.control.coordination":       "topic",
		"iceberg.control.topic":              kafkatest.UniqueName(t, "ctlovl"),
		"iceberg.control.commit.interval-ms": "300",
		"iceberg.control.commit.timeout-ms":  "4000", // partition 1 is never held: every round waits
	})
	propsB := maps.Clone(props)
	propsB["iceberg.control.commit.interval-ms"] = "600000" // b never leads
	a := startProcTask(t, props, "a:8083", addr)
	tp0 := connect.TopicPartition{Topic: topic, Partition: 0}
	require.NoError(t, a.Open([]connect.TopicPartition{tp0}))
	events, _ := cdcStream(3, 10, 1000, 1)
	var recs []*connect.SinkRecord
	for i, e := range events {
		e.Op = "c"
		recs = append(recs, cdcRecord(e, topic, 0, int64(i)))
	}
	require.NoError(t, a.Put(context.Background(), recs))
	// a's round has drained (and answered); then the rebalance moves partition 0 to b
	require.Eventually(t, func() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.nbuf == 0 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, a.Close([]connect.TopicPartition{tp0}))
	b := startProcTask(t, propsB, "b:8083", addr)
	require.NoError(t, b.Open([]connect.TopicPartition{tp0}))
	require.NoError(t, b.Put(context.Background(), recs))
	require.Eventually(t, func() bool { return a.coord.stats().LedRounds > 0 }, 20*time.Second, 50*time.Millisecond)
	time.Sleep(5 * time.Second) // more rounds: b's records are replays by now
	_, meta := loadTable(t, props, "shop.history")
	require.Equal(t, []string{"10|10"}, duckRows(t, meta, "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)) FROM t"))
}

// TestApplySamePartTwice: a DATA message delivered twice (a producer retry) puts the same part
// twice into one round; its files are committed once.
func TestApplySamePartTwice(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t)
	tp := icetable.TP{Topic: "t", Partition: 0}
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "events"}, Opts: icetable.TableOptions{AutoCreate: true, OffsetsKey: icetable.OffsetsSummaryKey("g")}}
	rec := func(off int64) icetable.Rec {
		return icetable.Rec{TP: tp, Offset: off, Op: icerow.OpInsert, Schema: customerSchema, Row: icerow.Row{"id": off, "name": "x"}}
	}
	p, err := w.Prepare(ctx, []icetable.Rec{rec(0), rec(1)})
	require.NoError(t, err)
	_, err = w.Apply(ctx, []*icetable.Part{p, p}, icetable.Offsets{tp: 2}, nil)
	require.NoError(t, err)
	require.Len(t, scanRows(t, w.Tbl), 2)
}

// TestControlTriggerAfterStop: Put asking for an early round just before the task stops must
// not crash the worker (it used to send on the closed producer from a stray goroutine).
func TestControlTriggerAfterStop(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "tr")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	props, _ := sinkProps(t, map[string]string{
		"topics": topic, "iceberg.tables": "shop.history", "iceberg.table.shop.history.raw-cdc": "true",
		"iceberg.control.coordination": "topic", "iceberg.control.topic": kafkatest.UniqueName(t, "ctltr"),
	})
	a := startProcTask(t, props, "a:8083", addr)
	ctl := a.coord.orch
	require.NoError(t, a.Stop()) // last task out: control closed
	ctl.Trigger()
	require.NoError(t, a.Stop()) // a second stop is harmless too
	a.coord.shutdown()
}
