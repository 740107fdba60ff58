// Package customercdc is the Debezium change stream of a customers table the ClickHouse sink's tests feed
// (schema'd and schemaless values, keys, strictly increasing LSNs) and the current-state table it lands in.
package customercdc

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// CurrentDDL creates the current-state table (a ReplacingMergeTree on the source version) in a database.
const CurrentDDL = `CREATE TABLE %s.customer_current
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
	// Row, Source, Envelope and Key are the Debezium schemas of the stream.
	Row = connect.StructBuilder().Name("dbserver1.public.customers.Value").
		Field("customer_id", connect.Int64Schema).
		Field("customer_name", connect.StringSchema).
		Field("customer_status", connect.StringSchema).
		Field("event_time", connect.TimestampSchema).
		Optional().MustBuild()
	Source = connect.StructBuilder().Name("io.debezium.connector.postgresql.Source").
		Field("connector", connect.StringSchema).
		Field("db", connect.StringSchema).
		Field("table", connect.StringSchema).
		Field("lsn", connect.OptionalInt64Schema).
		Field("ts_ms", connect.Int64Schema).MustBuild()
	Envelope = connect.StructBuilder().Name("dbserver1.public.customers.Envelope").
			Field("before", Row).
			Field("after", Row).
			Field("source", Source).
			Field("op", connect.StringSchema).
			Field("ts_ms", connect.OptionalInt64Schema).MustBuild()
	Key = connect.StructBuilder().Name("dbserver1.public.customers.Key").Field("customer_id", connect.Int64Schema).MustBuild()
)

// Event is one change of a customer row.
type Event struct {
	ID     int64
	Op     string // c, u, d
	Name   string
	Status string
	LSN    int64
	TS     time.Time
	Before *Event // previous image for u/d
}

// Stream generates a Debezium-like change stream: creates, updates, deletes and re-creates of n
// customers, with strictly increasing LSNs.
func Stream(n, events int, seed int64) []Event {
	rnd := rand.New(rand.NewSource(seed))
	live := map[int64]*Event{}
	var out []Event
	lsn := int64(1_000_000)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	statuses := []string{"active", "vip", "dormant", "blocked"}
	for i := 0; i < events; i++ {
		id := int64(rnd.Intn(n) + 1)
		lsn += int64(rnd.Intn(50) + 1)
		ts := base.Add(time.Duration(i) * 1537 * time.Millisecond)
		prev := live[id]
		var e Event
		switch {
		case prev == nil:
			e = Event{ID: id, Op: "c", Name: fmt.Sprintf("cust-%d", id), Status: statuses[rnd.Intn(4)], LSN: lsn, TS: ts}
		case rnd.Intn(5) == 0:
			e = Event{ID: id, Op: "d", LSN: lsn, TS: ts, Before: prev}
		default:
			e = Event{ID: id, Op: "u", Name: fmt.Sprintf("cust-%d-v%d", id, i), Status: statuses[rnd.Intn(4)], LSN: lsn, TS: ts, Before: prev}
		}
		if e.Op == "d" {
			delete(live, id)
		} else {
			cp := e
			live[id] = &cp
		}
		out = append(out, e)
	}
	return out
}

// RowStruct is the row image.
func (e Event) RowStruct() *connect.Struct {
	return connect.NewStruct(Row).MustPut("customer_id", e.ID).MustPut("customer_name", e.Name).
		MustPut("customer_status", e.Status).MustPut("event_time", e.TS)
}

// Envelope builds the Debezium value (schema'd, as from the Avro/JSON-with-schema converters).
func (e Event) Envelope() *connect.Struct {
	src := connect.NewStruct(Source).MustPut("connector", "postgresql").MustPut("db", "shop").
		MustPut("table", "customers").MustPut("lsn", e.LSN).MustPut("ts_ms", e.TS.UnixMilli())
	env := connect.NewStruct(Envelope).MustPut("source", src).MustPut("op", e.Op).MustPut("ts_ms", e.TS.UnixMilli())
	if e.Before != nil {
		env.MustPut("before", e.Before.RowStruct())
	}
	if e.Op != "d" {
		env.MustPut("after", e.RowStruct())
	}
	return env
}

// Schemaless builds the same value as JsonConverter with schemas.enable=false delivers it.
func (e Event) Schemaless() map[string]any {
	row := func(x *Event) any {
		if x == nil {
			return nil
		}
		return map[string]any{"customer_id": float64(x.ID), "customer_name": x.Name, "customer_status": x.Status,
			"event_time": float64(x.TS.UnixMilli())} // io.debezium.time.Timestamp: epoch millis
	}
	m := map[string]any{"op": e.Op, "ts_ms": float64(e.TS.UnixMilli()),
		"source": map[string]any{"connector": "postgresql", "lsn": float64(e.LSN), "ts_ms": float64(e.TS.UnixMilli())},
		"before": row(e.Before), "after": nil}
	if e.Op != "d" {
		m["after"] = row(&e)
	}
	return m
}

// ExpectedCurrent is the current-state table FINAL as tab-separated rows ordered by key: the latest event of
// each key that is not a delete.
func ExpectedCurrent(events []Event) string {
	latest := map[int64]Event{}
	for _, e := range events {
		if cur, ok := latest[e.ID]; !ok || e.LSN > cur.LSN {
			latest[e.ID] = e
		}
	}
	var ids []int64
	for id, e := range latest {
		if e.Op != "d" {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var lines []string
	for _, id := range ids {
		e := latest[id]
		lines = append(lines, fmt.Sprintf("%d\t%s\t%s\t%d\t%d", id, e.Name, e.Status, e.LSN, e.TS.UnixMilli()))
	}
	return strings.Join(lines, "\n")
}
