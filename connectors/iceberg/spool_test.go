package iceberg

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// dlqCtx is a task context whose errant record reporter keeps what it is given.
type dlqCtx struct {
	fakeCtx
	mu       sync.Mutex
	reported []*connect.SinkRecord
}

func (d *dlqCtx) ErrantRecordReporter() connect.ErrantRecordReporter { return d }

// startDLQTask starts a task whose errant records are reported to the returned context.
func startDLQTask(t testing.TB, props map[string]string) (*Task, *dlqCtx) {
	t.Helper()
	dctx := &dlqCtx{fakeCtx: fakeCtx{props: props}}
	task := &Task{}
	task.Initialize(dctx)
	require.NoError(t, task.Start(props))
	return task, dctx
}
func (d *dlqCtx) Report(_ context.Context, r *connect.SinkRecord, _ error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reported = append(d.reported, r)
	return nil
}

// TestSpooledAppendModel runs an append table whose rows are spooled at Put against a plain
// model: random batches from random partitions, commit rounds, the group offset taken only
// sometimes, rebalances that re-deliver from the group offset (so segments start below the
// table's offsets and are cut row by row), rows whose values do not fit (to the DLQ), and a new
// column half way (schema evolution at Put). The table must hold every good record exactly once.
func TestSpooledAppendModel(t *testing.T) {
	seed := modelSeed(t, "SPOOL_SEED", 7)
	rng := rand.New(rand.NewSource(seed))
	props, _ := sinkProps(t, map[string]string{
		KeyTables:                              "shop.events",
		"iceberg.tables.evolve-schema-enabled": "true",
	})
	spoolDir := t.TempDir()
	t.Setenv("TMPDIR", spoolDir)
	ctx := context.Background()
	task, dctx := startDLQTask(t, props)

	const parts, perPart = 3, 700
	logs := make([][]*connect.SinkRecord, parts)
	bad := map[string]bool{}
	for p := 0; p < parts; p++ {
		for off := 0; off < perPart; off++ {
			id := fmt.Sprintf("%d-%d", p, off)
			v := map[string]any{"id": id, "n": int64(off), "note": "x"}
			if off > perPart/2 {
				v["extra"] = float64(off) / 2 // a new column half way: evolved at Put
			}
			if off > 0 && rng.Intn(50) == 0 {
				v["n"] = "not a number" // does not fit the long column: DLQ
				bad[id] = true
			}
			logs[p] = append(logs[p], &connect.SinkRecord{Topic: "ev", Partition: int32(p), Offset: int64(off), Value: v})
		}
	}
	group := make([]int64, parts)
	pos := make([]int64, parts)
	spooled := false
	for step := 0; ; step++ {
		if done(pos, logs) {
			require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
			break
		}
		p := rng.Intn(parts)
		end := min(int64(perPart), pos[p]+int64(rng.Intn(60)+1))
		require.NoError(t, task.Put(ctx, logs[p][pos[p]:end]))
		pos[p] = end
		if a := task.appends.Table("shop.events"); a != nil && a.Usable() {
			spooled = true
		}
		switch rng.Intn(10) {
		case 0, 1:
			require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
			if rng.Intn(2) == 0 {
				pc, err := task.PreCommit(ctx, nil)
				require.NoError(t, err)
				for tp, o := range pc {
					group[tp.Partition] = o.Offset
				}
			}
		case 2:
			// rebalance: the partitions are revoked and assigned again, and the task re-reads
			// from the group offset (at or below what the table holds)
			var tps []connect.TopicPartition
			for q := 0; q < parts; q++ {
				tps = append(tps, connect.TopicPartition{Topic: "ev", Partition: int32(q)})
			}
			require.NoError(t, task.Close(tps))
			require.NoError(t, task.Open(tps))
			copy(pos, group)
		}
	}
	require.True(t, spooled, "the table's rows never went through the spool")
	require.NoError(t, task.Stop())

	var want []string
	for p := 0; p < parts; p++ {
		for off := 0; off < perPart; off++ {
			id := fmt.Sprintf("%d-%d", p, off)
			if bad[id] {
				continue
			}
			extra := "NULL"
			if off > perPart/2 {
				extra = strconv.Itoa(off)
			}
			want = append(want, fmt.Sprintf("%s|%d|%s", id, off, extra))
		}
	}
	sort.Strings(want)
	_, meta := loadTable(t, props, "shop.events")
	got := duckRows(t, meta, "SELECT id, n, coalesce(CAST(CAST(extra * 2 AS BIGINT) AS VARCHAR), 'NULL') FROM t")
	sort.Strings(got)
	require.Equal(t, want, got)
	reported := map[string]bool{}
	for _, r := range dctx.reported {
		reported[r.Value.(map[string]any)["id"].(string)] = true
	}
	for id := range bad {
		require.True(t, reported[id], "bad record %s not reported", id)
	}
	// every spool file is gone once its rows are committed
	left, err := filepath.Glob(filepath.Join(spoolDir, "connectd-iceberg-*.arrows"))
	require.NoError(t, err)
	require.Empty(t, left, "spool files left behind")
}
