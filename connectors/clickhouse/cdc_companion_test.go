package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// A tombstone whose key's latest versioned event is a delete belongs to that delete, also when the delete
// is stale (older than the live row) and the delete came in an earlier commit, to an earlier task. Each
// phase of a stream is written by a new task that starts from the offsets the previous one committed, as
// after a restart. Key k ends as the model says (cdcstream.State), which the streams spell out too:
//
//	replayed window: create (110), delete (120), tombstone | re-create (130) | a replay of
//	  delete (120), tombstone, re-create (130): k stays re-created (the replayed tombstone is the stale delete's)
//	split: the same up to the re-create | a stale delete (120) | its tombstone: k stays re-created
//	second tombstone: create (130) | a stale delete (120), tombstone | tombstone: k stays at 130
//	bare after update: create (110), update (130) | a stale delete (120), a stale update (115) | tombstone:
//	  the tombstone is bare (an update came after the delete), k is deleted
func TestCDCTombstoneOfStaleDeleteAcrossRestarts(t *testing.T) {
	s, _ := engine(t)
	ctx := context.Background()
	r := func(lsn int64, name string) *cdcstream.Row {
		return &cdcstream.Row{ID: "k", Name: name, Qty: lsn, UpdatedAt: 1_700_000_000_000 + lsn}
	}
	c110, c130, u115 := r(110, "create"), r(130, "re-create"), r(115, "update")
	c128, c129 := r(128, "create"), r(129, "re-create")
	e := func(op cdcstream.Op, lsn int64, row *cdcstream.Row) cdcstream.Event {
		return cdcstream.Event{Key: "k", Op: op, LSN: lsn, Row: row}
	}
	tomb := cdcstream.Event{Key: "k", Op: cdcstream.Tombstone}
	type testCase struct {
		name   string
		events []cdcstream.Event
		phases []int
		want   string // k under FINAL ("" deleted)
	}
	cases := []testCase{
		{"replayed_window", []cdcstream.Event{e(cdcstream.Create, 110, c110), e(cdcstream.Delete, 120, c110), tomb,
			e(cdcstream.Create, 130, c130), e(cdcstream.Delete, 120, c110), tomb, e(cdcstream.Create, 130, c130)},
			[]int{0, 0, 0, 1, 2, 2, 2}, "re-create"},
		{"split", []cdcstream.Event{e(cdcstream.Create, 110, c110), e(cdcstream.Delete, 120, c110), tomb,
			e(cdcstream.Create, 130, c130), e(cdcstream.Delete, 120, c110), tomb},
			[]int{0, 0, 0, 1, 2, 3}, "re-create"},
		{"second_tombstone", []cdcstream.Event{e(cdcstream.Create, 130, c130), e(cdcstream.Delete, 120, c110), tomb, tomb},
			[]int{0, 1, 1, 2}, "re-create"},
		{"bare_after_update", []cdcstream.Event{e(cdcstream.Create, 110, c110), e(cdcstream.Update, 130, c130),
			e(cdcstream.Delete, 120, c110), e(cdcstream.Update, 115, u115), tomb},
			[]int{0, 0, 1, 1, 2}, ""},
	}
	// A bare tombstone deletes at the highest version seen (128); a re-create one position later (129)
	// outranks it. A replay of [tombstone, re-create] then holds a bare tombstone (a create came before it)
	// that deletes at 129, which the replayed re-create only ties: k is deleted.
	bareThenRecreate := []cdcstream.Event{e(cdcstream.Create, 128, c128), tomb, e(cdcstream.Create, 129, c129),
		tomb, e(cdcstream.Create, 129, c129)}
	for i, phases := range [][]int{{0, 0, 0, 0, 0}, {0, 0, 0, 1, 1}, {0, 0, 1, 2, 2}, {0, 1, 2, 3, 4}, {0, 1, 1, 2, 2}} {
		cases = append(cases, testCase{fmt.Sprintf("bare_then_recreate_replayed_%d", i), bareThenRecreate, phases, ""})
	}
	for _, tc := range cases {
		model := ""
		if row, ok := cdcstream.State(tc.events, cdcstream.VersionLSN)["k"]; ok {
			model = row.Name
		}
		require.Equal(t, tc.want, model, "%s: the model", tc.name)
		stream := cdcstream.Stream{Prefix: "s", Events: tc.events}
		var recs []*connect.SinkRecord
		for i, ev := range tc.events {
			k, v := cdcstream.Debezium(stream, ev)
			rec := &connect.SinkRecord{Topic: "cdc", Partition: 0, Offset: int64(i)}
			require.NoError(t, json.Unmarshal(k, &rec.Key))
			if v != nil {
				require.NoError(t, json.Unmarshal(v, &rec.Value))
			}
			recs = append(recs, rec)
		}
		for _, eo := range []string{"false", "true"} {
			for _, rows := range []string{"100000", "1"} {
				t.Run(fmt.Sprintf("%s/exactlyOnce=%s/batch_rows=%s", tc.name, eo, rows), func(t *testing.T) {
					db := chdbtest.Database(t)
					chdbtest.MustExec(t, s, "CREATE TABLE "+db+`.customers (id String, name String, qty Int64, updated_at Int64,
						email Nullable(String), _version UInt64, is_deleted UInt8)
						ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id SETTINGS non_replicated_deduplication_window = 1000`)
					p := props(db, "debeziumCDCEnabled", "true", "exactlyOnce", eo, "topic2TableMap", "cdc=customers", "batch.max.rows", rows)
					tp := connect.TopicPartition{Topic: "cdc", Partition: 0}
					committed := int64(0)
					for start := 0; start < len(recs); {
						end := start + 1
						for end < len(recs) && tc.phases[end] == tc.phases[start] {
							end++
						}
						require.Equal(t, int64(start), committed)
						task := startTask(t, p, nil)
						require.NoError(t, task.Open([]connect.TopicPartition{tp}))
						require.NoError(t, task.Put(ctx, recs[start:end]))
						offs, err := task.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{tp: {Offset: int64(end)}})
						require.NoError(t, err)
						committed = offs[tp].Offset
						require.NoError(t, task.Stop())
						start = end
					}
					require.Equal(t, int64(len(recs)), committed)
					require.Equal(t, tc.want, query(t, s, "SELECT name FROM "+db+".customers FINAL WHERE id = 's-k'"),
						"raw rows:\n%s", query(t, s, "SELECT * FROM "+db+".customers ORDER BY _version"))
				})
			}
		}
	}
}
