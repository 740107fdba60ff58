package iceberg

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/commit"
)

// TestSpooledAppendCrashModel drives two spooled append tables (every record goes to both) through
// random operations with crash, failure and rebalance points, checked against a plain model: each
// good record is in each table exactly once, and each bad one is reported. A life of the task ends
// when the process "dies": before a table's commit (the next tables never commit), after a round but
// before the group offset was taken, or mid-stream with rows in the spool. Within a life, a round
// can fail because a table did not commit (the records go back to the task and a later round commits
// them) or after a table committed (the answer is lost: the next round must skip what that table
// holds), and single partitions are revoked and assigned again, re-read from the group offset while
// the others keep their spooled rows. A failing seed is shrunk to a shortest list of operations.
func TestSpooledAppendCrashModel(t *testing.T) {
	seeds := 4
	if testing.Short() {
		seeds = 1
	}
	if s := os.Getenv("SPOOL_CRASH_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	base := int64(1)
	if s := os.Getenv("SPOOL_CRASH_SEED"); s != "" {
		base, _ = strconv.ParseInt(s, 10, 64)
	}
	for i, ops := range spoolModelCases() {
		if _, err := runSpoolModel(t, ops); err != nil {
			t.Fatalf("case %d: %v\nops: %v", i, err, ops)
		}
	}
	t.Logf("seeds %d.. (SPOOL_CRASH_SEED), %d of them (SPOOL_CRASH_SEEDS)", base, seeds)
	for n := range seeds {
		seed := base + int64(n)
		ops := genSpoolOps(rand.New(rand.NewSource(seed)))
		st, err := runSpoolModel(t, ops)
		if err == nil {
			t.Logf("seed %d: %s", seed, st)
			continue
		}
		small := shrinkSpoolOps(ops, func(o []spoolOp) bool { _, err := runSpoolModel(t, o); return err != nil })
		_, serr := runSpoolModel(t, small)
		t.Fatalf("seed %d: %v\nops: %v\nshrunk to %d ops: %v\n%v", seed, err, ops, len(small), small, serr)
	}
}

// spoolModelTables: shop.events is unpartitioned (its rows go to data files as they are put:
// early.go), shop.audit partitioned (its rows wait in spool files for the round).
var spoolModelTables = []string{"shop.events", "shop.audit"}

// spoolModelCases are operation lists that the generated ones reach only in some seeds, each the
// shortest found for a fault it catches: rows a failed round must give back, rows of a revoked
// partition that must go (before and after a failed round, when they are in a data file already
// beside another partition's).
func spoolModelCases() [][]spoolOp {
	both := map[string]bool{spoolModelTables[0]: true, spoolModelTables[1]: true}
	round := func(fail, lose map[string]bool) spoolOp {
		return spoolOp{kind: spoolRound, kill: map[string]bool{}, fail: fail, lose: lose}
	}
	put := func(p, n int) spoolOp { return spoolOp{kind: spoolPut, p: p, n: n} }
	revoke := func(p int) spoolOp { return spoolOp{kind: spoolRevoke, p: p} }
	return [][]spoolOp{
		{put(1, 30), round(both, nil)},
		{put(0, 5), revoke(0)},
		{put(0, 45), put(1, 44), round(both, nil), revoke(1)},
		{put(0, 45), put(1, 44), round(nil, both), revoke(1), put(1, 20), round(nil, nil)},
	}
}

const spoolModelParts, spoolModelPerPart = 3, 400

type spoolOpKind int

const (
	spoolPut       spoolOpKind = iota // the next n records of partition p
	spoolRound                        // a commit round with the injected outcomes below
	spoolPreCommit                    // the worker takes the task's offsets into the group
	spoolRevoke                       // partition p leaves the task and comes back
	spoolDie                          // the process dies here
)

type spoolOp struct {
	kind spoolOpKind
	p, n int
	// mixed: a put of the next n records of every partition, interleaved in runs of n%4+1, after up
	// to three records of partition p the task got already (a redelivery it must ignore)
	mixed bool
	// a round's outcome per table: killed before its commit (and the later ones), its commit
	// failing, or its commit made but the answer lost
	kill, fail, lose map[string]bool
}

func (o spoolOp) String() string {
	switch o.kind {
	case spoolPut:
		if o.mixed {
			return fmt.Sprintf("putmixed(p%d,%d)", o.p, o.n)
		}
		return fmt.Sprintf("put(p%d,%d)", o.p, o.n)
	case spoolRound:
		var b strings.Builder
		b.WriteString("round(")
		for _, name := range spoolModelTables {
			switch {
			case o.kill[name]:
				b.WriteString(" kill:" + name)
			case o.fail[name]:
				b.WriteString(" fail:" + name)
			case o.lose[name]:
				b.WriteString(" lose:" + name)
			}
		}
		b.WriteString(" )")
		return b.String()
	case spoolPreCommit:
		return "precommit"
	case spoolRevoke:
		return fmt.Sprintf("revoke(p%d)", o.p)
	default:
		return "die"
	}
}

func genSpoolOps(rng *rand.Rand) []spoolOp {
	var ops []spoolOp
	for range 220 {
		switch r := rng.Intn(48); {
		case r < 32 || r > 44:
			ops = append(ops, spoolOp{kind: spoolPut, p: rng.Intn(spoolModelParts), n: rng.Intn(50) + 1, mixed: r > 44})
		case r < 38:
			o := spoolOp{kind: spoolRound, kill: map[string]bool{}, fail: map[string]bool{}, lose: map[string]bool{}}
			for _, name := range spoolModelTables {
				switch rng.Intn(16) {
				case 0:
					o.kill[name] = true
				case 1, 2:
					o.fail[name] = true
				case 3, 4:
					o.lose[name] = true
				}
			}
			ops = append(ops, o)
			if rng.Intn(3) > 0 {
				ops = append(ops, spoolOp{kind: spoolPreCommit})
			}
		case r < 42:
			ops = append(ops, spoolOp{kind: spoolRevoke, p: rng.Intn(spoolModelParts)})
		default:
			ops = append(ops, spoolOp{kind: spoolDie})
		}
	}
	return ops
}

// shrinkSpoolOps removes runs of operations, long ones first, for as long as the rest still fails.
func shrinkSpoolOps(ops []spoolOp, fails func([]spoolOp) bool) []spoolOp {
	for size := max(len(ops)/2, 1); ; size /= 2 {
		for changed := true; changed; {
			changed = false
			for i := 0; i+size <= len(ops); {
				c := slices.Delete(slices.Clone(ops), i, i+size)
				if fails(c) {
					ops, changed = c, true
				} else {
					i += size
				}
			}
		}
		if size == 1 {
			return ops
		}
	}
}

// spoolModelBad: the records whose value does not fit the table's long column.
func spoolModelBad(off int) bool { return off%37 == 5 }

// runSpoolModel runs ops, then a last life that reads every partition to its end from the group
// offset and commits, and compares the tables with the model.
func runSpoolModel(t *testing.T, ops []spoolOp) (string, error) {
	props, _ := sinkProps(t, map[string]string{
		KeyTables: strings.Join(spoolModelTables, ","),
		"iceberg.table." + spoolModelTables[1] + ".partition-by": "note",
	})
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()

	logs := make([][]*connect.SinkRecord, spoolModelParts)
	for p := range spoolModelParts {
		for off := range spoolModelPerPart {
			v := map[string]any{"id": fmt.Sprintf("%d-%d", p, off), "n": int64(off), "note": "x"}
			if spoolModelBad(off) {
				v["n"] = "not a number"
			}
			logs[p] = append(logs[p], &connect.SinkRecord{Topic: "ev", Partition: int32(p), Offset: int64(off), Value: v})
		}
	}
	tp := func(p int) connect.TopicPartition { return connect.TopicPartition{Topic: "ev", Partition: int32(p)} }
	var all []connect.TopicPartition
	for p := range spoolModelParts {
		all = append(all, tp(p))
	}
	group := make([]int64, spoolModelParts) // the Connect group's committed offsets
	reported := map[string]bool{}
	var task *Task
	var dctx *dlqCtx
	var pos, seen []int64 // the next record to put, and the first this task got since it took the partition
	spooled, lives := false, 0
	start := func() error {
		task, dctx = startDLQTask(t, props)
		lives++
		pos = append([]int64(nil), group...)
		seen = append([]int64(nil), group...)
		return task.Open(all)
	}
	put := func(p, n int) error {
		end := min(int64(spoolModelPerPart), pos[p]+int64(n))
		if pos[p] >= end {
			return nil
		}
		if err := task.Put(ctx, logs[p][pos[p]:end]); err != nil {
			return fmt.Errorf("put: %w", err)
		}
		pos[p] = end
		a, b := task.appends.Table(spoolModelTables[0]), task.appends.Table(spoolModelTables[1])
		if a != nil && a.Usable() && a.WritesEarly() && b != nil && b.Usable() && !b.WritesEarly() {
			spooled = true
		}
		return nil
	}
	putMixed := func(p, n int) error {
		batch := slices.Clone(logs[p][max(seen[p], pos[p]-3):pos[p]])
		next := slices.Clone(pos)
		for run, more := int64(n%4+1), true; more; {
			more = false
			for q := range spoolModelParts {
				if end := min(int64(spoolModelPerPart), next[q]+run, pos[q]+int64(n)); next[q] < end {
					batch = append(batch, logs[q][next[q]:end]...)
					next[q], more = end, true
				}
			}
		}
		if err := task.Put(ctx, batch); err != nil {
			return fmt.Errorf("put: %w", err)
		}
		copy(pos, next)
		return nil
	}
	precommit := func() error {
		pc, err := task.PreCommit(ctx, nil)
		if err != nil {
			return err
		}
		for tp, o := range pc {
			if o.Offset < group[tp.Partition] {
				return fmt.Errorf("the group offset of %v went back: %d < %d", tp, o.Offset, group[tp.Partition])
			}
			group[tp.Partition] = o.Offset
		}
		return nil
	}
	die := func() {
		dctx.mu.Lock()
		for _, r := range dctx.reported {
			reported[r.Value.(map[string]any)["id"].(string)] = true
		}
		dctx.mu.Unlock()
		task.coord.crash()
	}
	if err := start(); err != nil {
		return "", err
	}
	for _, o := range ops {
		switch o.kind {
		case spoolPut:
			put := put
			if o.mixed {
				put = putMixed
			}
			if err := put(o.p, o.n); err != nil {
				return "", err
			}
		case spoolRound:
			killed := false
			// the hooks read only o (fixed before the run), so tables committing in parallel replay
			task.coord.tables.SetHooks(&commit.Hooks{
				BeforeTableCommit: func(name string) error {
					if o.kill[name] {
						killed = true
						return errors.New("killed before the table's commit")
					}
					return nil
				},
				FailTableCommit: func(name string) error {
					if o.fail[name] {
						return errors.New("injected: catalog unavailable")
					}
					return nil
				},
				AfterTableCommit: func(name string) error {
					if o.lose[name] {
						return errors.New("injected: the commit's answer was lost")
					}
					return nil
				},
			})
			task.coord.CommitNow(ctx)
			task.coord.tables.SetHooks(nil)
			if killed {
				die()
				if err := start(); err != nil {
					return "", err
				}
			}
		case spoolPreCommit:
			if err := precommit(); err != nil {
				return "", err
			}
		case spoolRevoke:
			if err := task.Close([]connect.TopicPartition{tp(o.p)}); err != nil {
				return "", err
			}
			if err := task.Open([]connect.TopicPartition{tp(o.p)}); err != nil {
				return "", err
			}
			pos[o.p], seen[o.p] = group[o.p], group[o.p]
		case spoolDie:
			die()
			if err := start(); err != nil {
				return "", err
			}
		}
	}
	// the last life: everything to the end, committed
	for p := range spoolModelParts {
		if err := put(p, spoolModelPerPart); err != nil {
			return "", err
		}
	}
	if !task.coord.CommitNow(ctx) {
		return "", fmt.Errorf("last round: %s", task.coord.stats().LastError)
	}
	if err := precommit(); err != nil {
		return "", err
	}
	die() // collects the reports; the tables are complete
	if !spooled {
		return "", errors.New("the tables' rows never went through the spool and the early data files")
	}

	var want []string
	for p := range spoolModelParts {
		for off := range spoolModelPerPart {
			if !spoolModelBad(off) {
				want = append(want, fmt.Sprintf("%d-%d|%d", p, off, off))
			}
		}
	}
	sort.Strings(want)
	for _, name := range spoolModelTables {
		_, meta := loadTable(t, props, name)
		got := duckRows(t, meta, "SELECT id, n FROM t")
		sort.Strings(got)
		if !slices.Equal(want, got) {
			return "", fmt.Errorf("table %s: %s", name, rowsDiff(want, got))
		}
	}
	for p := range spoolModelParts {
		if group[p] != spoolModelPerPart {
			return "", fmt.Errorf("group offset of partition %d: %d, want %d", p, group[p], spoolModelPerPart)
		}
		for off := range spoolModelPerPart {
			if id := fmt.Sprintf("%d-%d", p, off); spoolModelBad(off) && !reported[id] {
				return "", fmt.Errorf("bad record %s not reported", id)
			}
		}
	}
	return fmt.Sprintf("%d ops, %d lives", len(ops), lives), nil
}

// rowsDiff names the rows missing from got and the rows in it more often than in want.
func rowsDiff(want, got []string) string {
	count := map[string]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	var missing, extra []string
	for r, c := range count {
		switch {
		case c > 0:
			missing = append(missing, r)
		case c < 0:
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	short := func(s []string) string {
		if len(s) > 8 {
			return strings.Join(s[:8], " ") + fmt.Sprintf(" … (%d)", len(s))
		}
		return strings.Join(s, " ")
	}
	return fmt.Sprintf("%d rows, want %d; missing: %s; duplicated or unexpected: %s", len(got), len(want), short(missing), short(extra))
}
