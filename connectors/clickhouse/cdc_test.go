package clickhouse

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// The seed's current-state table (000_2d79d43bbe7bd3db.txt).
const customerCurrentDDL = `CREATE TABLE %s.customer_current
(
    customer_id UInt64,
    customer_name String,
    customer_status LowCardinality(String),
    source_version UInt64,
    is_deleted UInt8,
    event_time DateTime64(3)
)
ENGINE = ReplacingMergeTree(source_version, is_deleted)
ORDER BY customer_id`

var (
	customerRow = connect.StructBuilder().Name("dbserver1.public.customers.Value").
			Field("customer_id", connect.Int64Schema).
			Field("customer_name", connect.StringSchema).
			Field("customer_status", connect.StringSchema).
			Field("event_time", connect.TimestampSchema).
			Optional().MustBuild()
	sourceSchema = connect.StructBuilder().Name("io.debezium.connector.postgresql.Source").
			Field("connector", connect.StringSchema).
			Field("db", connect.StringSchema).
			Field("table", connect.StringSchema).
			Field("lsn", connect.OptionalInt64Schema).
			Field("ts_ms", connect.Int64Schema).MustBuild()
	envelopeSchema = connect.StructBuilder().Name("dbserver1.public.customers.Envelope").
			Field("before", customerRow).
			Field("after", customerRow).
			Field("source", sourceSchema).
			Field("op", connect.StringSchema).
			Field("ts_ms", connect.OptionalInt64Schema).MustBuild()
	customerKey = connect.StructBuilder().Name("dbserver1.public.customers.Key").Field("customer_id", connect.Int64Schema).MustBuild()
)

type cdcEvent struct {
	id     int64
	op     string // c, u, d
	name   string
	status string
	lsn    int64
	ts     time.Time
	before *cdcEvent // previous image for u/d
}

// cdcStream generates a Debezium-like change stream: creates, updates, deletes and re-creates of n
// customers, with strictly increasing LSNs.
func cdcStream(n, events int, seed int64) []cdcEvent {
	rnd := rand.New(rand.NewSource(seed))
	live := map[int64]*cdcEvent{}
	var out []cdcEvent
	lsn := int64(1_000_000)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	statuses := []string{"active", "vip", "dormant", "blocked"}
	for i := 0; i < events; i++ {
		id := int64(rnd.Intn(n) + 1)
		lsn += int64(rnd.Intn(50) + 1)
		ts := base.Add(time.Duration(i) * 1537 * time.Millisecond)
		prev := live[id]
		var e cdcEvent
		switch {
		case prev == nil:
			e = cdcEvent{id: id, op: "c", name: fmt.Sprintf("cust-%d", id), status: statuses[rnd.Intn(4)], lsn: lsn, ts: ts}
		case rnd.Intn(5) == 0:
			e = cdcEvent{id: id, op: "d", lsn: lsn, ts: ts, before: prev}
		default:
			e = cdcEvent{id: id, op: "u", name: fmt.Sprintf("cust-%d-v%d", id, i), status: statuses[rnd.Intn(4)], lsn: lsn, ts: ts, before: prev}
		}
		if e.op == "d" {
			delete(live, id)
		} else {
			cp := e
			live[id] = &cp
		}
		out = append(out, e)
	}
	return out
}

func (e cdcEvent) rowStruct() *connect.Struct {
	return connect.NewStruct(customerRow).MustPut("customer_id", e.id).MustPut("customer_name", e.name).
		MustPut("customer_status", e.status).MustPut("event_time", e.ts)
}

// envelope builds the Debezium value (schema'd, as from the Avro/JSON-with-schema converters).
func (e cdcEvent) envelope() *connect.Struct {
	src := connect.NewStruct(sourceSchema).MustPut("connector", "postgresql").MustPut("db", "shop").
		MustPut("table", "customers").MustPut("lsn", e.lsn).MustPut("ts_ms", e.ts.UnixMilli())
	env := connect.NewStruct(envelopeSchema).MustPut("source", src).MustPut("op", e.op).MustPut("ts_ms", e.ts.UnixMilli())
	if e.before != nil {
		env.MustPut("before", e.before.rowStruct())
	}
	if e.op != "d" {
		env.MustPut("after", e.rowStruct())
	}
	return env
}

// schemaless builds the same value as JsonConverter with schemas.enable=false delivers it.
func (e cdcEvent) schemaless() map[string]any {
	row := func(x *cdcEvent) any {
		if x == nil {
			return nil
		}
		return map[string]any{"customer_id": float64(x.id), "customer_name": x.name, "customer_status": x.status,
			"event_time": float64(x.ts.UnixMilli())} // io.debezium.time.Timestamp: epoch millis
	}
	m := map[string]any{"op": e.op, "ts_ms": float64(e.ts.UnixMilli()),
		"source": map[string]any{"connector": "postgresql", "lsn": float64(e.lsn), "ts_ms": float64(e.ts.UnixMilli())},
		"before": row(e.before), "after": nil}
	if e.op != "d" {
		m["after"] = row(&e)
	}
	return m
}

func expectedCurrent(events []cdcEvent) string {
	latest := map[int64]cdcEvent{}
	for _, e := range events {
		if cur, ok := latest[e.id]; !ok || e.lsn > cur.lsn {
			latest[e.id] = e
		}
	}
	var ids []int64
	for id, e := range latest {
		if e.op != "d" {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var lines []string
	for _, id := range ids {
		e := latest[id]
		lines = append(lines, fmt.Sprintf("%d\t%s\t%s\t%d\t%d", id, e.name, e.status, e.lsn, e.ts.UnixMilli()))
	}
	return strings.Join(lines, "\n")
}

// partitioned spreads events over partitions by key, as Debezium's producer does, and gives offsets.
func partitioned(events []cdcEvent, topic string, parts int, value func(cdcEvent) any) [][]*connect.SinkRecord {
	out := make([][]*connect.SinkRecord, parts)
	for _, e := range events {
		p := int(e.id) % parts
		key := connect.NewStruct(customerKey).MustPut("customer_id", e.id)
		out[p] = append(out[p], &connect.SinkRecord{Topic: topic, Partition: int32(p), KeySchema: customerKey, Key: key,
			ValueSchema: envelopeSchema, Value: value(e), Offset: int64(len(out[p])), Timestamp: e.ts.UnixMilli()})
	}
	return out
}

func TestCDCToCustomerCurrentFinal(t *testing.T) {
	s, _ := engine(t)
	for _, tc := range []struct {
		name  string
		value func(cdcEvent) any
	}{
		{"schema", func(e cdcEvent) any { return e.envelope() }},
		{"schemaless", func(e cdcEvent) any { return e.schemaless() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := chdbtest.Database(t)
			chdbtest.MustExec(t, s, fmt.Sprintf(customerCurrentDDL, db))
			events := cdcStream(60, 900, 7)
			// A producer retry re-publishes 40 old events at later offsets: out-of-order versions.
			rnd := rand.New(rand.NewSource(3))
			stream := append([]cdcEvent(nil), events...)
			for i := 0; i < 40; i++ {
				stream = append(stream, events[rnd.Intn(len(events)/2)])
			}
			parts := partitioned(stream, "shop.public.customers", 3, tc.value)
			p := props(db, "debeziumCDCEnabled", "true", "topic2TableMap", "shop.public.customers=customer_current",
				"batch.max.rows", "97")
			ctx := context.Background()

			// First task: delivers everything in uneven batches and commits part way.
			task := startTask(t, p, nil)
			committed := map[int]int{}
			for p, recs := range parts {
				for i := 0; i < len(recs); {
					n := min(1+rnd.Intn(120), len(recs)-i)
					require.NoError(t, task.Put(ctx, recs[i:i+n]))
					require.NoError(t, task.Put(ctx, recs[i:i+n])) // redelivery of the same batch
					i += n
					if i < len(recs)/2 {
						committed[p] = i
					}
				}
			}
			_, err := task.PreCommit(ctx, nil)
			require.NoError(t, err)
			// Second task (a restart that lost its commits): replays every partition from the middle,
			// re-inserting old versions after newer ones.
			task2 := startTask(t, p, nil)
			for p, recs := range parts {
				require.NoError(t, task2.Put(ctx, recs[committed[p]:]))
			}
			raw := query(t, s, "SELECT count(), countIf(is_deleted = 1), uniqExact(customer_id) FROM "+db+".customer_current")
			t.Logf("rows written: %s (rows, deletes, keys); task1 %d rows in %d blocks", raw, task.written.rows, task.written.blocks)
			require.Greater(t, task.written.blocks, int64(9))
			require.NotContains(t, raw, "\t0\t")
			got := query(t, s, "SELECT customer_id, customer_name, customer_status, source_version, toUnixTimestamp64Milli(event_time) FROM "+
				db+".customer_current FINAL ORDER BY customer_id")
			require.Equal(t, expectedCurrent(events), got)
			require.Equal(t, "0", query(t, s, "SELECT count() FROM "+db+".customer_current FINAL WHERE is_deleted = 1"))
		})
	}
}
