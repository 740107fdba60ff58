package clickhouse

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
)

// Crash simulation without the worker: a task "dies" at a chosen point. From then on the shim drops
// every insert it sends (the process is gone; nothing it does reaches the server), Put fails, and the
// test abandons the task without PreCommit. A new task then resumes from the last committed offsets,
// as after a SIGKILL and a rebalance.
type killKind string

const (
	killBeforeInsert killKind = "before-insert"      // connection lost while the block is sent
	killAfterInsert  killKind = "after-insert"       // block persisted, acknowledgement lost (in doubt)
	killBeforeAfter  killKind = "before-after-state" // block persisted, AFTER state never written
	killNoCommit     killKind = "no-commit"          // everything written, offsets never committed
	// staging flow only: the block is in the staging table (STAGED) and moved, AFTER never written
	killStagedNotAfter killKind = "staged-not-after"
	// staging flow only: STAGED written, killed before MOVE PARTITION (the block is only in staging)
	killStagedBeforeMove killKind = "staged-before-move"
)

type crasher struct {
	mu      sync.Mutex
	kind    killKind
	at      int // kill at the at-th data insert of the round (1-based)
	inserts int
	states  int // state writes since the at-th data insert
	dead    bool
	table   string
}

// isData: an insert of table rows, into the table or its staging table.
func (c *crasher) isData(q chshim.QueryInfo) bool {
	return strings.Contains(q.Body, "`"+c.table+"`") || strings.Contains(q.Body, "_connectd_stage_"+c.table+"_")
}
func (c *crasher) isAfterState(q chshim.QueryInfo) bool {
	return strings.Contains(q.Body, "connect_state") && c.inserts >= c.at
}

func (c *crasher) before(q chshim.QueryInfo) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return chshim.ErrDropConnection
	}
	if c.isData(q) {
		c.inserts++
		if c.kind == killBeforeInsert && c.inserts == c.at {
			c.dead = true
			return chshim.ErrDropConnection
		}
	} else if c.inserts == c.at && c.isAfterState(q) {
		c.states++
		if c.kind == killBeforeAfter || (c.kind == killStagedNotAfter && c.states == 2) {
			c.dead = true
			return chshim.ErrDropConnection
		}
	}
	return nil
}

func (c *crasher) query(q chshim.QueryInfo) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return chshim.ErrDropConnection
	}
	if c.kind == killStagedBeforeMove && c.inserts >= c.at && strings.Contains(q.Body, "MOVE PARTITION") {
		c.dead = true
		return chshim.ErrDropConnection
	}
	return nil
}

func (c *crasher) after(q chshim.QueryInfo) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kind == killAfterInsert && c.isData(q) && c.inserts == c.at {
		c.dead = true
		return chshim.ErrDropConnection
	}
	return nil
}

var eventSchema = connect.StructBuilder().Name("events.Value").
	Field("id", connect.Int64Schema).Field("ts", connect.TimestampSchema).Field("payload", connect.StringSchema).MustBuild()

func eventRecords(parts, perPart int) [][]*connect.SinkRecord {
	out := make([][]*connect.SinkRecord, parts)
	base := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	id := int64(0)
	for p := 0; p < parts; p++ {
		for o := 0; o < perPart; o++ {
			id++
			ts := base.Add(time.Duration(id-1) * 3 * 24 * time.Hour / time.Duration(parts*perPart)) // spans 3 days
			v := connect.NewStruct(eventSchema).MustPut("id", id).MustPut("ts", ts).MustPut("payload", fmt.Sprintf("event-%d", id))
			out[p] = append(out[p], &connect.SinkRecord{Topic: "events", Partition: int32(p), ValueSchema: eventSchema, Value: v,
				Offset: int64(o), OriginalTopic: "events", OriginalPartition: int32(p), OriginalOffset: int64(o)})
		}
	}
	return out
}

// runWithKills delivers all records through a sequence of tasks, each killed as planned, then a final
// clean task; it returns how many tasks died.
func runWithKills(t *testing.T, srv *chshim.Server, p map[string]string, table string, parts [][]*connect.SinkRecord, plan []killKind, seed int64) int {
	ctx := context.Background()
	rnd := rand.New(rand.NewSource(seed))
	committed := make([]int64, len(parts))
	deaths := 0
	defer func() { srv.SetBeforeInsert(nil); srv.SetAfterInsert(nil); srv.SetBeforeQuery(nil) }()
	for round := 0; round <= len(plan); round++ {
		cr := &crasher{table: table, at: 1 + rnd.Intn(4)}
		if round < len(plan) {
			cr.kind = plan[round]
		}
		srv.SetBeforeInsert(cr.before)
		srv.SetAfterInsert(cr.after)
		srv.SetBeforeQuery(cr.query)
		task := startTask(t, p, nil)
		var tps []connect.TopicPartition
		for i := range parts {
			tps = append(tps, connect.TopicPartition{Topic: "events", Partition: int32(i)})
		}
		require.NoError(t, task.Open(tps))
		pos := append([]int64(nil), committed...)
		died := false
		puts := 0
		for !died {
			progressed := false
			for i, recs := range parts {
				if pos[i] >= int64(len(recs)) {
					continue
				}
				n := int64(1 + rnd.Intn(60))
				end := min(pos[i]+n, int64(len(recs)))
				err := task.Put(ctx, recs[pos[i]:end])
				puts++
				if err != nil {
					require.True(t, connect.IsRetriable(err), "%v", err)
					cr.mu.Lock()
					dead := cr.dead
					cr.mu.Unlock()
					require.True(t, dead, "unexpected failure: %v", err)
					died = true
					break
				}
				pos[i] = end
				progressed = true
				if cr.kind == killNoCommit && puts >= cr.at*2 {
					died = true // SIGKILL between a successful put and the next commit
					break
				}
				if rnd.Intn(3) == 0 { // the worker's periodic commit
					cur := map[connect.TopicPartition]connect.OffsetAndMetadata{}
					for j := range parts {
						cur[connect.TopicPartition{Topic: "events", Partition: int32(j)}] = connect.OffsetAndMetadata{Offset: pos[j]}
					}
					offs, err := task.PreCommit(ctx, cur)
					if err != nil {
						died = true
						break
					}
					for tp, om := range offs {
						committed[tp.Partition] = om.Offset
					}
				}
			}
			if !progressed && !died {
				break
			}
		}
		if died {
			deaths++
			_ = task.Stop()
			continue
		}
		require.Equal(t, killKind(""), cr.kind, "planned kill %s did not happen", cr.kind)
		cur := map[connect.TopicPartition]connect.OffsetAndMetadata{}
		for j := range parts {
			cur[connect.TopicPartition{Topic: "events", Partition: int32(j)}] = connect.OffsetAndMetadata{Offset: int64(len(parts[j]))}
		}
		offs, err := task.PreCommit(ctx, cur)
		require.NoError(t, err)
		for tp, om := range offs {
			require.Equal(t, int64(len(parts[tp.Partition])), om.Offset)
		}
	}
	return deaths
}

func TestExactlyOnceAcrossCrashes(t *testing.T) {
	s, srv := engine(t)
	parts := eventRecords(3, 400)
	total := 3 * 400
	all := []killKind{killBeforeInsert, killAfterInsert, killNoCommit, killBeforeAfter, killAfterInsert, killBeforeInsert, killNoCommit}
	for _, tc := range []struct {
		name, engine string
		exactly      bool
		plan         []killKind
	}{
		// Every kill point; the in-doubt block after a lost acknowledgement is absorbed by the table's
		// deduplication window (insert_deduplication_token).
		{"exactlyOnce", "MergeTree PARTITION BY toDate(ts) ORDER BY id SETTINGS non_replicated_deduplication_window = 1000", true, all},
		// No deduplication window: blocks go through a staging table and MOVE PARTITION; every kill point.
		{"exactlyOnce-nowindow", "MergeTree PARTITION BY toDate(ts) ORDER BY id", true,
			append([]killKind{killStagedBeforeMove, killStagedNotAfter, killStagedBeforeMove}, all...)},
		// At-least-once: duplicates may land, the ReplacingMergeTree FINAL state converges.
		{"atLeastOnce", "ReplacingMergeTree PARTITION BY toDate(ts) ORDER BY id", false,
			[]killKind{killBeforeInsert, killAfterInsert, killNoCommit, killAfterInsert, killBeforeInsert, killNoCommit}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := chdbtest.Database(t)
			chdbtest.MustExec(t, s, "CREATE TABLE "+db+".events (id UInt64, ts DateTime64(3, 'UTC'), payload String) ENGINE = "+tc.engine)
			p := props(db, "exactlyOnce", fmt.Sprint(tc.exactly), "batch.max.rows", "37", "retryCount", "2")
			deaths := runWithKills(t, srv, p, "events", parts, tc.plan, 11)
			require.Equal(t, len(tc.plan), deaths)
			got := query(t, s, "SELECT count(), uniqExact(id), min(id), max(id), uniqExact(toDate(ts)) FROM "+db+".events")
			want := fmt.Sprintf("%d\t%d\t1\t%d\t3", total, total, total)
			if tc.exactly {
				require.Equal(t, want, got, "every record exactly once")
			} else {
				final := query(t, s, "SELECT count(), uniqExact(id), min(id), max(id), uniqExact(toDate(ts)) FROM "+db+".events FINAL")
				require.Equal(t, want, final)
				t.Logf("at-least-once raw: %s", got)
			}
		})
	}
}

// Two tasks owning different partitions write the same table concurrently (sharing the state table);
// then the partitions move to one task, which replays from offset 0: nothing is written twice.
func TestExactlyOnceTwoTasksAndReassignment(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".events (id UInt64, ts DateTime64(3, 'UTC'), payload String) ENGINE = MergeTree PARTITION BY toDate(ts) ORDER BY id")
	parts := eventRecords(4, 300)
	p := props(db, "exactlyOnce", "true", "batch.max.rows", "64")
	ctx := context.Background()
	a, b := startTask(t, p, nil), startTask(t, p, nil)
	var wg sync.WaitGroup
	for i, task := range []*Task{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, pi := range []int{i, i + 2} {
				for off := 0; off < 300; off += 50 {
					if err := task.Put(ctx, parts[pi][off:off+50]); err != nil {
						t.Errorf("task %d: %v", i, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, "1200\t1200", query(t, s, "SELECT count(), uniqExact(id) FROM "+db+".events"))
	// Rebalance: task c gets every partition with no committed offsets and replays everything.
	c := startTask(t, p, nil)
	var all []*connect.SinkRecord
	for _, recs := range parts {
		all = append(all, recs...)
	}
	require.NoError(t, c.Put(ctx, all))
	require.Equal(t, "1200\t1200", query(t, s, "SELECT count(), uniqExact(id) FROM "+db+".events"))
	require.Equal(t, "4", query(t, s, "SELECT count() FROM "+db+".connect_state FINAL WHERE state = 'AFTER'"))
}

// A partition that moves to a task started earlier (in the same process) keeps its exactly-once state: the
// new owner's state rows win over the old owner's although its clock-seeded sequence started lower. Then a
// task of a restarted process replays from the last committed offset with other block boundaries: the
// state must say that every record is written, or the replay inserts the blocks again.
func TestExactlyOnceStateAfterMoveToEarlierTask(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".events (id UInt64, ts DateTime64(3, 'UTC'), payload String) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 1000")
	recs := eventRecords(1, 300)[0]
	p := props(db, "exactlyOnce", "true", "batch.max.rows", "64")
	ctx := context.Background()
	tp := []connect.TopicPartition{{Topic: "events", Partition: 0}}
	early := startTask(t, p, nil)
	time.Sleep(5 * time.Millisecond)
	late := startTask(t, p, nil)

	require.NoError(t, late.Open(tp))
	require.NoError(t, late.Put(ctx, recs[:100]))
	offs, err := late.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{tp[0]: {Offset: 100}})
	require.NoError(t, err)
	require.Equal(t, int64(100), offs[tp[0]].Offset)
	require.NoError(t, late.Close(tp))

	require.NoError(t, early.Open(tp)) // the partition moves to the task started first; it writes, never commits
	require.NoError(t, early.Put(ctx, recs[100:130]))
	require.NoError(t, early.Put(ctx, recs[130:]))
	require.Equal(t, "300\t300", query(t, s, "SELECT count(), uniqExact(id) FROM "+db+".events"))
	require.Equal(t, "AFTER\t299", query(t, s, "SELECT state, maxOffset FROM "+db+".connect_state FINAL"),
		"the state of the partition is its current owner's")

	restarted := startTask(t, p, nil) // SIGKILL, restart: replay from the committed offset 100
	require.NoError(t, restarted.Open(tp))
	require.NoError(t, restarted.Put(ctx, recs[100:]))
	require.Equal(t, "300\t300", query(t, s, "SELECT count(), uniqExact(id) FROM "+db+".events"), "every record exactly once")
}

// TestExactlyOnceRefusesTheOfficialSinksState: exactly-once state of the official ClickHouse sink (JVM workers
// ran the connector with exactlyOnce: its own engine for the state table, KeeperMap, or its rows in this
// sink's table, with its state names and no version) fails the task with the reason, inserting nothing,
// instead of two halves each trusting its own view of a partition.
func TestExactlyOnceRefusesTheOfficialSinksState(t *testing.T) {
	s, _ := engine(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(db string)
		want  string
	}{
		{"another engine", func(db string) {
			// the official sink's table: KeeperMap('/kafka-connect') PRIMARY KEY key (the engine needs a Keeper)
			chdbtest.MustExec(t, s, "CREATE TABLE "+db+".connect_state (key String, minOffset Int64, maxOffset Int64, state String) ENGINE = MergeTree ORDER BY key")
		}, "is a MergeTree table, not this sink's ReplacingMergeTree"},
		{"its rows in this sink's table", func(db string) {
			startTask(t, props(db, "exactlyOnce", "true"), nil) // creates the state table
			require.NoError(t, startTask(t, props(db, "exactlyOnce", "true"), nil).state.init(ctx))
			chdbtest.MustExec(t, s, "INSERT INTO "+db+".connect_state (key, minOffset, maxOffset, state) VALUES ('/kafka-connect/"+db+".events/events-0', 0, 9, 'AFTER_PROCESSING')")
		}, `in state "AFTER_PROCESSING"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := chdbtest.Database(t)
			chdbtest.MustExec(t, s, "CREATE TABLE "+db+".events (id UInt64, ts DateTime64(3, 'UTC'), payload String) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 1000")
			tc.setup(db)
			task := startTask(t, props(db, "exactlyOnce", "true"), nil)
			err := task.Put(ctx, eventRecords(1, 20)[0])
			if err == nil {
				_, err = task.PreCommit(ctx, nil)
			}
			var shared *SharedStateError
			require.ErrorAs(t, err, &shared)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), "the official ClickHouse sink")
			require.False(t, isRetriable(err))
			require.Equal(t, "0", query(t, s, "SELECT count() FROM "+db+".events"))
		})
	}
}
