package clickhouse

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
)

// An in-doubt block is redone as the whole block, whatever its rows resolve to the second time. Key 2 is
// created (110) and deleted by a bare tombstone; the next block holds a second bare tombstone of key 2 (no
// live row: nothing to delete), its re-create (130) and a create of key 3: two rows, batch.max.rows=2. The
// task dies after ClickHouse stored that block and before the acknowledgement. Its replay resolves the
// tombstone against a table that now holds the re-create, so the tombstone becomes a delete row too: the
// block must still be the records of the first attempt (same token, dropped by the deduplication window),
// not a block cut short at two rows under another token, which would delete the re-created key.
func TestCDCInDoubtBlockRedoneWhole(t *testing.T) {
	s, srv := engine(t)
	ctx := context.Background()
	src := deterministicSources[1]
	require.Equal(t, "postgres_lsn", src.name)
	shape := deterministicShapes[0] // Debezium envelope
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+`.customers (customer_id UInt64, customer_name String, _version UInt64, is_deleted UInt8)
		ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY customer_id SETTINGS non_replicated_deduplication_window = 1000`)
	p := props(db, "debeziumCDCEnabled", "true", "topic2TableMap", "shop.customers=customers", "batch.max.rows", "2", "exactlyOnce", "true")
	type keyed struct {
		id int
		e  detEvent
	}
	stream := []keyed{{2, detEvent{"c", 110, "created"}}, {2, detEvent{"tomb", 0, ""}},
		{2, detEvent{"tomb", 0, ""}}, {2, detEvent{"c", 130, "again"}}, {3, detEvent{"c", 131, "three"}}}
	var recs []*connect.SinkRecord
	for i, k := range stream {
		v, _ := shape.record(src, k.id, k.e, detEvent{})
		recs = append(recs, &connect.SinkRecord{Topic: "shop.customers", Partition: 0, Offset: int64(i),
			Key: map[string]any{"customer_id": float64(k.id)}, Value: v})
	}
	tp := []connect.TopicPartition{{Topic: "shop.customers", Partition: 0}}

	var mu sync.Mutex
	inserts, dead := 0, false
	drop := func(chshim.QueryInfo) error {
		mu.Lock()
		defer mu.Unlock()
		if dead {
			return chshim.ErrDropConnection
		}
		return nil
	}
	srv.SetBeforeInsert(drop)
	srv.SetBeforeQuery(drop)
	srv.SetAfterInsert(func(q chshim.QueryInfo) error {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(q.Body, "`customers`") {
			if inserts++; inserts == 2 {
				dead = true // stored, acknowledgement lost, the task dies
				return chshim.ErrDropConnection
			}
		}
		return nil
	})
	defer func() { srv.SetBeforeInsert(nil); srv.SetAfterInsert(nil); srv.SetBeforeQuery(nil) }()

	first := startTask(t, p, nil)
	require.NoError(t, first.Open(tp))
	require.NoError(t, first.Put(ctx, recs[:2]))
	offs, err := first.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{tp[0]: {Offset: 2}})
	require.NoError(t, err)
	require.Equal(t, int64(2), offs[tp[0]].Offset)
	require.Error(t, first.Put(ctx, recs[2:]))
	srv.SetBeforeInsert(nil)
	srv.SetAfterInsert(nil)
	srv.SetBeforeQuery(nil)
	require.Equal(t, "2\tagain\n3\tthree", query(t, s, "SELECT customer_id, customer_name FROM "+db+".customers FINAL ORDER BY customer_id"),
		"the in-doubt block was stored")

	replay := startTask(t, p, nil) // the partition's next owner, from the committed offset 2
	require.NoError(t, replay.Open(tp))
	require.NoError(t, replay.Put(ctx, recs[2:]))
	_, err = replay.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{tp[0]: {Offset: 5}})
	require.NoError(t, err)
	require.Equal(t, "2\tagain\n3\tthree", query(t, s, "SELECT customer_id, customer_name FROM "+db+".customers FINAL ORDER BY customer_id"),
		"raw rows:\n%s", query(t, s, "SELECT * FROM "+db+".customers ORDER BY customer_id, _version"))
}

// An in-doubt block whose replay writes no row (its only record is a tombstone that deleted a live row the
// first time; now the key has no live row) still completes the range: the records after it are written.
func TestCDCInDoubtBlockWithoutRowsOnReplay(t *testing.T) {
	s, srv := engine(t)
	ctx := context.Background()
	src := deterministicSources[1]
	shape := deterministicShapes[0]
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+`.customers (customer_id UInt64, customer_name String, _version UInt64, is_deleted UInt8)
		ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY customer_id SETTINGS non_replicated_deduplication_window = 1000`)
	p := props(db, "debeziumCDCEnabled", "true", "topic2TableMap", "shop.customers=customers", "exactlyOnce", "true")
	type keyed struct {
		id int
		e  detEvent
	}
	stream := []keyed{{2, detEvent{"c", 110, "created"}}, {2, detEvent{"tomb", 0, ""}}, {3, detEvent{"c", 120, "three"}}}
	var recs []*connect.SinkRecord
	for i, k := range stream {
		v, _ := shape.record(src, k.id, k.e, detEvent{})
		recs = append(recs, &connect.SinkRecord{Topic: "shop.customers", Partition: 0, Offset: int64(i),
			Key: map[string]any{"customer_id": float64(k.id)}, Value: v})
	}
	tp := []connect.TopicPartition{{Topic: "shop.customers", Partition: 0}}
	var mu sync.Mutex
	inserts, dead := 0, false
	drop := func(chshim.QueryInfo) error {
		mu.Lock()
		defer mu.Unlock()
		if dead {
			return chshim.ErrDropConnection
		}
		return nil
	}
	srv.SetBeforeInsert(drop)
	srv.SetBeforeQuery(drop)
	srv.SetAfterInsert(func(q chshim.QueryInfo) error {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(q.Body, "`customers`") {
			if inserts++; inserts == 2 {
				dead = true
				return chshim.ErrDropConnection
			}
		}
		return nil
	})
	defer func() { srv.SetBeforeInsert(nil); srv.SetAfterInsert(nil); srv.SetBeforeQuery(nil) }()
	first := startTask(t, p, nil)
	require.NoError(t, first.Open(tp))
	require.NoError(t, first.Put(ctx, recs[:1]))
	_, err := first.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{tp[0]: {Offset: 1}})
	require.NoError(t, err)
	require.Error(t, first.Put(ctx, recs[1:2]))
	srv.SetBeforeInsert(nil)
	srv.SetAfterInsert(nil)
	srv.SetBeforeQuery(nil)

	replay := startTask(t, p, nil)
	require.NoError(t, replay.Open(tp))
	require.NoError(t, replay.Put(ctx, recs[1:]))
	offs, err := replay.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{tp[0]: {Offset: 3}})
	require.NoError(t, err)
	require.Equal(t, int64(3), offs[tp[0]].Offset)
	require.Equal(t, "3\tthree", query(t, s, "SELECT customer_id, customer_name FROM "+db+".customers FINAL ORDER BY customer_id"))
}
