package clickhouse

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// A Debezium envelope that reaches the sink without CDC handling (no debeziumCDCEnabled, and not
// unwrapped: ExtractNewRecordState passes schemaless envelopes through unchanged) must not become a row
// of column defaults (customer_id = 0): it is dead-lettered with context, or fails the task.
func TestEnvelopeWithoutCDCHandlingIsNeverWrittenAsDefaults(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".customers (customer_id UInt64, customer_name String) ENGINE = MergeTree ORDER BY customer_id")
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".audit (op String, ts_ms Int64) ENGINE = MergeTree ORDER BY tuple()")
	ev := cdcEvent{ID: 2, Op: "c", Name: "two", Status: "active", LSN: 110}
	recs := []*connect.SinkRecord{
		{Topic: "customers", Offset: 0, Value: ev.Schemaless()},
		{Topic: "customers", Offset: 1, ValueSchema: envelopeSchema, Value: ev.Envelope()},
		{Topic: "customers", Offset: 2, Value: map[string]any{"customer_id": 3.0, "customer_name": "plain row"}},
	}
	ctx := context.Background()

	dlq := &deadLetters{}
	task := startTask(t, props(db), dlq)
	require.NoError(t, task.Put(ctx, recs))
	require.Len(t, dlq.recs, 2)
	for i, err := range dlq.errs {
		require.True(t, connect.IsDataError(err))
		require.Contains(t, err.Error(), fmt.Sprintf("customers-0@%d", i))
		require.Contains(t, err.Error(), "Debezium change event envelope")
		require.Contains(t, err.Error(), "debeziumCDCEnabled=true")
	}
	require.Equal(t, "3\tplain row", query(t, s, "SELECT * FROM "+db+".customers"))

	// errors.tolerance=none: the task fails, nothing is written.
	task2 := startTask(t, props(db), nil)
	err := task2.Put(ctx, recs[:1])
	require.Error(t, err)
	require.False(t, connect.IsRetriable(err))
	require.Contains(t, err.Error(), "ExtractNewRecordState")
	require.Equal(t, "1", query(t, s, "SELECT count() FROM "+db+".customers"))

	// A table made for envelopes (it has columns named like their fields) takes them.
	task3 := startTask(t, props(db, "topic2TableMap", "customers=audit"), nil)
	require.NoError(t, task3.Put(ctx, recs[:1]))
	require.Equal(t, "c", query(t, s, "SELECT op FROM "+db+".audit"))
}

// Tombstones in CDC mode: a bare tombstone deletes its key just above the key's current version (read from the
// table when the key is not in the same block), never at version 0; a tombstone of a key without a
// current row writes nothing; a tombstone right after a delete writes nothing.
func TestTombstoneResolution(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".c (customer_id UInt64, customer_name String, _version UInt64, is_deleted UInt8) "+
		"ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY customer_id")
	// optimize_on_insert=0 keeps every row of a block, so the rows the sink writes can be counted.
	p := props(db, "debeziumCDCEnabled", "true", "topic2TableMap", "t=c", "clickhouseSettings", "optimize_on_insert=0")
	ctx := context.Background()
	env := func(off int64, key any, op string, lsn int, name string) *connect.SinkRecord {
		v := map[string]any{"op": op, "source": map[string]any{"lsn": float64(lsn)}, "before": nil, "after": nil}
		img := map[string]any{"customer_id": 0.0, "customer_name": name}
		switch k := key.(type) {
		case map[string]any:
			img["customer_id"] = k["customer_id"]
		default:
			img["customer_id"] = float64(k.(int64))
		}
		if op == "d" {
			v["before"] = img
		} else {
			v["after"] = img
		}
		return &connect.SinkRecord{Topic: "t", Offset: off, Key: key, Value: v}
	}
	tomb := func(off int64, key any) *connect.SinkRecord {
		return &connect.SinkRecord{Topic: "t", Offset: off, Key: key}
	}
	k := func(id int) map[string]any { return map[string]any{"customer_id": float64(id)} }

	task := startTask(t, p, nil)
	require.NoError(t, task.Put(ctx, []*connect.SinkRecord{
		env(0, k(1), "c", 100, "one"), env(1, k(3), "c", 300, "three"), env(2, int64(4), "c", 400, "four"),
		env(3, k(2), "c", 110, "two"), env(4, k(2), "u", 115, "two'"), env(5, k(2), "d", 120, ""), tomb(6, k(2)),
	}))
	_, err := task.PreCommit(ctx, nil)
	require.NoError(t, err)
	// The tombstone after the delete added no row.
	require.Equal(t, "110\t0\n115\t0\n120\t1", query(t, s, "SELECT _version, is_deleted FROM "+db+".c WHERE customer_id = 2 ORDER BY _version"))

	task2 := startTask(t, p, nil)
	require.NoError(t, task2.Put(ctx, []*connect.SinkRecord{
		tomb(7, k(3)),                                   // live in the table at 300: deleted at 301
		tomb(8, int64(4)),                               // a primitive key names the table's single ORDER BY column
		tomb(9, k(9)),                                   // never written: nothing to delete
		tomb(10, k(2)),                                  // already deleted: nothing written
		env(11, k(5), "c", 500, "five"), tomb(12, k(5)), // live in the same block: deleted at 501
	}))
	_, err = task2.PreCommit(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, "1\tone", query(t, s, "SELECT customer_id, customer_name FROM "+db+".c FINAL ORDER BY customer_id"))
	require.Equal(t, "2\t120\n3\t301\n4\t401\n5\t501", query(t, s, "SELECT customer_id, _version FROM "+db+".c WHERE is_deleted = 1 ORDER BY customer_id"))
	require.Equal(t, "0", query(t, s, "SELECT count() FROM "+db+".c WHERE customer_id = 9"))

	// A stale create of a tombstoned key stays hidden.
	require.NoError(t, task2.Put(ctx, []*connect.SinkRecord{env(13, k(3), "c", 300, "three")}))
	require.Equal(t, "1", query(t, s, "SELECT count() FROM "+db+".c FINAL"))
}

// optimize_on_insert (ClickHouse's default) collapses the rows of one key within one INSERT block of a
// ReplacingMergeTree: a raw-row count after a block of create, update and delete of one key sees one row.
func TestOptimizeOnInsertCollapsesRowsOfOneBlock(t *testing.T) {
	s, _ := engine(t)
	ctx := context.Background()
	for _, tc := range []struct {
		settings string
		raw      string
	}{{"", "1"}, {"optimize_on_insert=0", "3"}} {
		db := chdbtest.Database(t)
		chdbtest.MustExec(t, s, "CREATE TABLE "+db+".c (customer_id UInt64, customer_name String, _version UInt64, is_deleted UInt8) "+
			"ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY customer_id")
		kv := []string{"debeziumCDCEnabled", "true", "topic2TableMap", "t=c"}
		if tc.settings != "" {
			kv = append(kv, "clickhouseSettings", tc.settings)
		}
		task := startTask(t, props(db, kv...), nil)
		var recs []*connect.SinkRecord
		for i, e := range []cdcEvent{{ID: 2, Op: "c", Name: "a", LSN: 110}, {ID: 2, Op: "u", Name: "b", LSN: 115}} {
			recs = append(recs, &connect.SinkRecord{Topic: "t", Offset: int64(i), Value: e.Schemaless()})
		}
		del := cdcEvent{ID: 2, Op: "d", LSN: 120, Before: &cdcEvent{ID: 2, Name: "b"}}
		recs = append(recs, &connect.SinkRecord{Topic: "t", Offset: 2, Value: del.Schemaless()})
		require.NoError(t, task.Put(ctx, recs))
		require.Equal(t, int64(3), task.written.rows)
		require.Equal(t, tc.raw, query(t, s, "SELECT count() FROM "+db+".c"), "settings %q", tc.settings)
		require.Equal(t, "0", query(t, s, "SELECT count() FROM "+db+".c FINAL"))
	}
}

// logCapture collects the task's log lines.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func captureLogs(t *testing.T) *logCapture {
	c := &logCapture{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(c, &slog.HandlerOptions{Level: slog.LevelWarn})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return c
}

// Unwrapped change events without a source position: a warning when the task starts (from the
// transform configuration) and once per table when records fall back to the Kafka offset.
func TestVersionFallbackWarnings(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	for _, tb := range []string{"a", "b"} {
		chdbtest.MustExec(t, s, "CREATE TABLE "+db+"."+tb+" (id UInt64, _version UInt64, is_deleted UInt8) "+
			"ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id")
	}
	logs := captureLogs(t)
	task := startTask(t, props(db, "debeziumCDCEnabled", "true", "transforms", "unwrap",
		"transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState", "transforms.unwrap.add.fields", "op"), nil)
	require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), logs.String())
	require.Contains(t, logs.String(), "transforms.unwrap.add.fields")

	ctx := context.Background()
	rows := func(topic string, from int) []*connect.SinkRecord {
		var out []*connect.SinkRecord
		for i := from; i < from+3; i++ {
			out = append(out, &connect.SinkRecord{Topic: topic, Offset: int64(i), Value: map[string]any{"id": float64(i), "__op": "c"}})
		}
		return out
	}
	require.NoError(t, task.Put(ctx, rows("a", 0)))
	require.NoError(t, task.Put(ctx, rows("a", 3)))
	require.NoError(t, task.Put(ctx, rows("b", 0)))
	out := logs.String()
	require.Equal(t, 3, strings.Count(out, "level=WARN"), out)
	require.Equal(t, 1, strings.Count(out, "table="+db+".a"), out)
	require.Equal(t, 1, strings.Count(out, "table="+db+".b"), out)
	require.Contains(t, out, "fall back to the Kafka offset")
	require.Equal(t, "0\t0\n5\t5", query(t, s, "SELECT id, _version FROM "+db+".a WHERE id IN (0, 5) ORDER BY id"))
}
