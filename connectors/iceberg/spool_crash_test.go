package iceberg

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// TestSpooledAppendCrashModel drives two spooled append tables (every record goes to both) with
// random crash, failure and rebalance points, checked against a plain model: each good record is in
// each table exactly once, and each bad one is reported. A life of the task ends when the process
// "dies": before a table's commit (the next tables never commit), after the round committed but
// before the group offset was taken, or mid-stream with rows in the spool. Within a life, a round
// can fail because a table did not commit (the records go back to the task and are committed by
// a later round) or after a table committed (the answer is lost: the next round must skip what
// that table holds), and single partitions are revoked and assigned
// again, re-read from the group offset while the others keep their spooled rows.
func TestSpooledAppendCrashModel(t *testing.T) {
	seed := int64(11)
	if s := os.Getenv("SPOOL_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (SPOOL_SEED)", seed)
	rng := rand.New(rand.NewSource(seed))
	tables := []string{"shop.events", "shop.audit"}
	props, _ := sinkProps(t, map[string]string{KeyTables: tables[0] + "," + tables[1]})
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()

	const parts, perPart = 3, 500
	logs := make([][]*connect.SinkRecord, parts)
	bad := map[string]bool{}
	for p := 0; p < parts; p++ {
		for off := 0; off < perPart; off++ {
			id := fmt.Sprintf("%d-%d", p, off)
			v := map[string]any{"id": id, "n": int64(off), "note": "x"}
			if off > 0 && rng.Intn(60) == 0 {
				v["n"] = "not a number" // does not fit the long column: reported, never written
				bad[id] = true
			}
			logs[p] = append(logs[p], &connect.SinkRecord{Topic: "ev", Partition: int32(p), Offset: int64(off), Value: v})
		}
	}
	allTPs := func() []connect.TopicPartition {
		var tps []connect.TopicPartition
		for q := 0; q < parts; q++ {
			tps = append(tps, connect.TopicPartition{Topic: "ev", Partition: int32(q)})
		}
		return tps
	}
	group := make([]int64, parts) // the Connect group's committed offsets
	reported := map[string]bool{}
	var crashes, lost, failed, revokes, spooledLives int
	var hookMu sync.Mutex
	// the commits of a round's tables run in parallel: each table draws from its own source, so
	// that a seed replays the same run
	tableRngs := map[string]*rand.Rand{}
	tableRng := func(table string) *rand.Rand {
		if tableRngs[table] == nil {
			h := fnv.New64a()
			h.Write([]byte(table))
			tableRngs[table] = rand.New(rand.NewSource(seed ^ int64(h.Sum64())))
		}
		return tableRngs[table]
	}
	for life := 0; ; life++ {
		final := crashes >= 6
		task, dctx := startDLQTask(t, props)
		require.NoError(t, task.Open(allTPs()))
		pos := append([]int64(nil), group...)
		dead := false
		if !final {
			// the hooks run on the round's goroutines (tables commit in parallel)
			task.coord.hooks.Store(&roundHooks{
				beforeTableCommit: func(string) error {
					hookMu.Lock()
					defer hookMu.Unlock()
					if rng.Intn(8) == 0 {
						dead = true
						return fmt.Errorf("killed before the table's commit")
					}
					return nil
				},
				failTableCommit: func(table string) error {
					hookMu.Lock()
					defer hookMu.Unlock()
					if tableRng(table).Intn(6) == 0 {
						failed++
						return fmt.Errorf("injected: catalog unavailable")
					}
					return nil
				},
				afterTableCommit: func(table string) error {
					hookMu.Lock()
					defer hookMu.Unlock()
					if tableRng(table).Intn(6) == 0 {
						lost++
						return fmt.Errorf("injected: the commit's answer was lost")
					}
					return nil
				},
			})
		}
		spooled := false
		for !dead {
			if final && done(pos, logs) {
				require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
				break
			}
			p := rng.Intn(parts)
			end := min(int64(perPart), pos[p]+int64(rng.Intn(50)+1))
			if pos[p] < end {
				require.NoError(t, task.Put(ctx, logs[p][pos[p]:end]))
				pos[p] = end
			}
			if a := task.appendTables[tables[0]]; a != nil && a.usable {
				spooled = true
			}
			switch r := rng.Intn(20); {
			case r < 3:
				ok := task.coord.CommitNow(ctx)
				if dead {
					break
				}
				if !ok {
					continue // a failed round: the records are back in the task
				}
				if !final && rng.Intn(5) == 0 {
					dead = true // killed after the tables committed, before the group commit
					break
				}
				pc, err := task.PreCommit(ctx, nil)
				require.NoError(t, err)
				for tp, o := range pc {
					require.GreaterOrEqual(t, o.Offset, group[tp.Partition], "the group offset went back")
					group[tp.Partition] = o.Offset
				}
			case r == 3:
				// one partition moves away and back: it is re-read from the group offset
				tp := []connect.TopicPartition{{Topic: "ev", Partition: int32(p)}}
				require.NoError(t, task.Close(tp))
				require.NoError(t, task.Open(tp))
				pos[p] = group[p]
				revokes++
			case r == 4 && !final:
				dead = true // killed mid-stream with rows in the spool
			}
		}
		if spooled {
			spooledLives++
		}
		dctx.mu.Lock()
		for _, r := range dctx.reported {
			reported[r.Value.(map[string]any)["id"].(string)] = true
		}
		dctx.mu.Unlock()
		if !final {
			crashes++
			task.coord.crash()
			continue
		}
		require.NoError(t, task.Stop())
		break
	}
	t.Logf("crashes=%d lost answers=%d failed commits=%d revokes=%d lives that spooled=%d", crashes, lost, failed, revokes, spooledLives)
	require.Greater(t, spooledLives, 0, "the tables' rows never went through the spool")

	var want []string
	for p := 0; p < parts; p++ {
		for off := 0; off < perPart; off++ {
			if id := fmt.Sprintf("%d-%d", p, off); !bad[id] {
				want = append(want, fmt.Sprintf("%s|%d", id, off))
			}
		}
	}
	sort.Strings(want)
	for _, name := range tables {
		_, meta := loadTable(t, props, name)
		got := duckRows(t, meta, "SELECT id, n FROM t")
		sort.Strings(got)
		require.Equal(t, want, got, "table %s", name)
	}
	for id := range bad {
		require.True(t, reported[id], "bad record %s not reported", id)
	}
}
