package iceberg

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// TestSkippedTailModel drives the task the way the runtime does when some consumed records never reach
// Put (filtered, tolerated, dead-lettered): random batches with gaps, commit rounds and worker commits
// (PreCommit with the consumed offsets). At every worker commit the offset returned for a partition is at
// most the consumed one and never beyond a record put but not yet in a committed snapshot; once a round
// made everything durable, the group reaches the consumed offset (a skipped tail included: lag 0). A
// restarted task given the records again from the start writes none of them twice.
func TestSkippedTailModel(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	for round := int64(0); round < 3; round++ {
		skippedTailRun(t, seed+round)
	}
}

func skippedTailRun(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	const topic, parts = "cdc.shop.customers", 3
	props, _ := sinkProps(t, map[string]string{
		"iceberg.tables":                          "shop.history",
		"iceberg.table.shop.history.raw-cdc":      "true",
		"iceberg.table.shop.history.partition-by": "kafka_partition",
	})
	ctx := context.Background()
	task, _ := startTask(t, props)
	tps := make([]connect.TopicPartition, parts)
	for p := range tps {
		tps[p] = connect.TopicPartition{Topic: topic, Partition: int32(p)}
	}
	require.NoError(t, task.Open(tps))

	var next [parts]int64
	var put [parts][]int64 // offsets put, in order
	var durable [parts]int // how many of put are in a committed snapshot
	var group [parts]int64 // what the worker committed
	var records [parts][]*connect.SinkRecord
	consumed := connect.ConsumedOffsets{}
	batch := func(p int, n int, skipRate int) {
		var recs []*connect.SinkRecord
		for i := 0; i < n; i++ {
			off := next[p]
			next[p]++
			if rng.Intn(skipRate) == 0 {
				continue // never reaches Put
			}
			r := cdcRecord(cdcEvent{Op: "c", ID: int64(p)*1_000_000 + off, Name: fmt.Sprint("n", off)}, topic, int32(p), off)
			recs = append(recs, r)
			records[p] = append(records[p], r)
			put[p] = append(put[p], off)
		}
		require.NoError(t, task.Put(ctx, recs))
		consumed[tps[p]] = connect.OffsetAndMetadata{Offset: next[p]}
	}
	workerCommit := func(step int) map[connect.TopicPartition]connect.OffsetAndMetadata {
		pc, err := task.PreCommit(ctx, consumed)
		require.NoError(t, err)
		for p := range tps {
			om, ok := pc[tps[p]]
			if !ok {
				continue
			}
			limit := int64(math.MaxInt64)
			if durable[p] < len(put[p]) {
				limit = put[p][durable[p]]
			}
			require.LessOrEqual(t, om.Offset, consumed[tps[p]].Offset, "seed %d step %d partition %d: beyond the consumed offset", seed, step, p)
			require.LessOrEqual(t, om.Offset, limit, "seed %d step %d partition %d: past a record not yet in a snapshot", seed, step, p)
			require.GreaterOrEqual(t, om.Offset, group[p], "seed %d step %d partition %d: backwards", seed, step, p)
			group[p] = om.Offset
		}
		return pc
	}
	steps := 50 + rng.Intn(150)
	for step := 0; step < steps; step++ {
		switch rng.Intn(5) {
		case 0, 1:
			batch(rng.Intn(parts), 1+rng.Intn(8), 2+rng.Intn(3))
		case 2:
			batch(rng.Intn(parts), 1+rng.Intn(4), 1) // every record skipped: Put gets none of them
		case 3:
			require.True(t, task.coord.CommitNow(ctx))
			for p := range durable {
				durable[p] = len(put[p])
			}
		case 4:
			workerCommit(step)
		}
	}
	// every partition ends with records that never reach Put
	for p := range tps {
		batch(p, 1+rng.Intn(4), 1)
	}
	workerCommit(steps)
	require.True(t, task.coord.CommitNow(ctx))
	for p := range durable {
		durable[p] = len(put[p])
	}
	pc := workerCommit(steps + 1)
	for p := range tps {
		require.Equal(t, next[p], pc[tps[p]].Offset, "seed %d partition %d: the group reaches the end offset once everything put is in a snapshot", seed, p)
	}
	require.NoError(t, task.Stop())

	// a restart given every record again (a group offset lost, or the table's offsets as the start) writes none twice
	again, _ := startTask(t, props)
	require.NoError(t, again.Open(tps))
	for p := range tps {
		require.NoError(t, again.Put(ctx, records[p]))
	}
	require.True(t, again.coord.CommitNow(ctx))
	require.NoError(t, again.Stop())

	var want []string
	for p := range tps {
		for _, off := range put[p] {
			want = append(want, fmt.Sprintf("%d|%d", p, off))
		}
	}
	_, meta := loadTable(t, props, "shop.history")
	got := duckRows(t, meta, "SELECT kafka_partition, kafka_offset FROM t")
	sort.Strings(want)
	sort.Strings(got)
	require.Equal(t, want, got, "seed %d: every record put is in the table once", seed)
}
