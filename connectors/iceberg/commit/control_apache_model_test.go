package commit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	ae "github.com/connectd/connectd/connectors/iceberg/commit/apacheevents"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// The Apache committer's bookkeeping against a plain model: participants append DATA_WRITTEN events (real
// files, through the event codec) and other records to a two-partition control log; committers start from
// the committer group's offsets, read at their own pace, commit, die before or after a table's commit, and
// live on as zombies beside their successors. After every commit each table holds only written ids, none
// twice; at the end a last committer leaves every written id in its table exactly once.

type acOp struct {
	kind  string // write, junk, start, read, commit
	table int    // write: which table; commit/read: which committer (mod live)
	n     int    // write: rows; read: records
	part  int32  // write, junk: control partition
	crash string // commit: "", before, after (the process dies there)
	at    int    // commit: at the at-th table
}

func (o acOp) String() string {
	switch o.kind {
	case "write":
		return fmt.Sprintf("write(t%d,%d rows,p%d)", o.table, o.n, o.part)
	case "junk":
		return fmt.Sprintf("junk(p%d)", o.part)
	case "read":
		return fmt.Sprintf("read(c%d,%d,p%d first)", o.table, o.n, o.part)
	case "commit":
		if o.crash != "" {
			return fmt.Sprintf("commit(c%d,crash %s table %d)", o.table, o.crash, o.at)
		}
		return fmt.Sprintf("commit(c%d)", o.table)
	}
	return o.kind
}

func genACOps(rng *rand.Rand) []acOp {
	ops := []acOp{{kind: "start"}}
	for range 8 + rng.Intn(16) {
		switch r := rng.Intn(10); {
		case r < 4:
			ops = append(ops, acOp{kind: "write", table: rng.Intn(2), n: 1 + rng.Intn(3), part: int32(rng.Intn(2))})
		case r < 5:
			ops = append(ops, acOp{kind: "junk", part: int32(rng.Intn(2))})
		case r < 6:
			ops = append(ops, acOp{kind: "start"})
		case r < 8:
			ops = append(ops, acOp{kind: "read", table: rng.Intn(3), n: 1 + rng.Intn(4), part: int32(rng.Intn(2))})
		default:
			op := acOp{kind: "commit", table: rng.Intn(3)}
			if rng.Intn(3) == 0 {
				op.crash, op.at = []string{"before", "after"}[rng.Intn(2)], rng.Intn(2)
			}
			ops = append(ops, op)
		}
	}
	return ops
}

var acTables = []string{"shop.a", "shop.b"}

var acSchema = &ice.StructType{FieldList: []ice.NestedField{
	{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
	{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
}}

// runACModel plays ops and reports the first broken invariant.
func runACModel(t testing.TB, ops []acOp) error {
	const groupID = "connect-model"
	options := func(name string) icetable.TableOptions { // what the sink makes of its test config
		o := icetable.TableOptions{AutoCreate: true, OffsetsKey: icetable.OffsetsSummaryKey(groupID)}
		if name == "shop.b" {
			o.PartitionBy = []string{"name"}
		}
		return o
	}
	cat := icebergtest.SQLiteCatalog(t)
	ts := NewTables(func(context.Context) (catalog.Catalog, error) { return cat, nil }, options)
	c := newRounds(Options{Connector: "model", GroupID: groupID, Tables: ts, CatalogName: "iceberg", Log: slog.New(slog.DiscardHandler)}, nil)
	ctx := context.Background()

	type rec struct {
		env envelope
		raw []byte // the event as the control topic holds it
	}
	logs := [2][]rec{}
	group := apacheOffsets{0: 0, 1: 0} // the committer group's committed offsets
	written := map[string][]int64{}    // table → ids in DATA_WRITTEN events
	var nextID int64
	writers := map[string]*icetable.Writer{}

	type live struct {
		ac  *apacheCommitter
		pos apacheOffsets
	}
	var committers []*live
	var hookErr = errors.New("process died")

	check := func(final bool) error {
		for _, name := range acTables {
			tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier(name))
			if errors.Is(err, catalog.ErrNoSuchTable) {
				if final && len(written[name]) > 0 {
					return fmt.Errorf("table %s: missing, %d ids written", name, len(written[name]))
				}
				continue
			}
			require.NoError(t, err)
			seen := map[int64]int{}
			for _, r := range icebergtest.ScanRows(t, tbl) {
				seen[r["id"].(int64)]++
			}
			ok := map[int64]bool{}
			for _, id := range written[name] {
				ok[id] = true
			}
			for id, n := range seen {
				if !ok[id] {
					return fmt.Errorf("table %s: id %d was never written", name, id)
				}
				if n > 1 {
					return fmt.Errorf("table %s: id %d committed %d times", name, id, n)
				}
			}
			if final {
				for _, id := range written[name] {
					if seen[id] == 0 {
						return fmt.Errorf("table %s: id %d lost", name, id)
					}
				}
			}
		}
		return nil
	}
	start := func() {
		l := &live{pos: apacheOffsets{}}
		for p, o := range group {
			l.pos[p] = o
		}
		emit := func(*ae.Event) error { return nil }
		commitRead := func(read apacheOffsets) {
			for p, o := range read {
				group[p] = o
			}
		}
		l.ac = newApacheCommitter(c, "ctl", emit, commitRead)
		committers = append(committers, l)
	}
	read := func(l *live, n int, first int32) {
		for range n {
			p := first // a committer reads the partitions at different paces
			if int(l.pos[p]) >= len(logs[p]) {
				p = 1 - p
			}
			if int(l.pos[p]) >= len(logs[p]) {
				return
			}
			r := logs[p][l.pos[p]]
			env := r.env
			if r.raw != nil { // what the consumer decodes
				ev, err := ae.Decode(r.raw)
				require.NoError(t, err)
				env.ev = ev
			}
			l.ac.take(env)
			l.pos[p]++
		}
	}

	for _, op := range ops {
		switch op.kind {
		case "write":
			name := acTables[op.table]
			w := writers[name]
			if w == nil {
				w = &icetable.Writer{Cat: cat, Ident: catalog.ToIdentifier(name), Opts: options(name)}
				writers[name] = w
			}
			w.Tbl = nil
			var recs []icetable.Rec
			for i := range op.n {
				nextID++
				recs = append(recs, icetable.Rec{Op: icerow.OpInsert, Row: icerow.Row{"id": nextID, "name": "n" + strconv.Itoa(i%2)}, Schema: acSchema,
					TP: icetable.TP{Topic: "events", Partition: 0}, Offset: nextID})
				written[name] = append(written[name], nextID)
			}
			part, err := w.Prepare(ctx, recs)
			require.NoError(t, err)
			md := w.Tbl.Metadata()
			spec := md.PartitionSpecByID(int(part.Data[0].SpecID()))
			e := &ae.Event{ID: uuid.New(), Type: ae.DataWritten, Timestamp: nowMicros(), GroupID: groupID, CommitID: uuid.New(),
				Table: tableRef("iceberg", name), PartitionType: *spec.PartitionType(md.CurrentSchema()), DataFiles: part.Data}
			raw, err := ae.Encode(e)
			require.NoError(t, err)
			logs[op.part] = append(logs[op.part], rec{env: envelope{partition: op.part, offset: int64(len(logs[op.part]))}, raw: raw})
		case "junk":
			logs[op.part] = append(logs[op.part], rec{env: envelope{partition: op.part, offset: int64(len(logs[op.part]))}})
		case "start":
			start()
		case "read":
			if len(committers) > 0 {
				read(committers[op.table%len(committers)], op.n, op.part)
			}
		case "commit":
			if len(committers) == 0 {
				continue
			}
			i := op.table % len(committers)
			l := committers[i]
			tables := 0
			var hooks *Hooks
			if op.crash != "" {
				hook := func(string) error {
					tables++
					if tables > op.at {
						return hookErr
					}
					return nil
				}
				hooks = &Hooks{}
				if op.crash == "before" {
					hooks.BeforeTableCommit = hook
				} else {
					hooks.AfterTableCommit = hook
				}
			}
			ts.SetHooks(hooks)
			_, err := l.ac.commit(uuid.New(), time.Now())
			ts.SetHooks(nil)
			if err != nil && !errors.Is(err, hookErr) {
				return fmt.Errorf("commit: %w", err)
			}
			if err != nil { // the process died: its committer is gone
				committers = slices.Delete(committers, i, i+1)
			}
			if err := check(false); err != nil {
				return err
			}
		}
	}
	start()
	last := committers[len(committers)-1]
	read(last, len(logs[0])+len(logs[1]), 0)
	if _, err := last.ac.commit(uuid.New(), time.Now()); err != nil {
		return fmt.Errorf("last commit: %w", err)
	}
	return check(true)
}

func shrinkACOps(ops []acOp, fails func([]acOp) bool) []acOp {
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(ops); i++ {
			c := slices.Delete(slices.Clone(ops), i, i+1)
			if fails(c) {
				ops, changed = c, true
				i--
			}
		}
	}
	return ops
}

func TestApacheCommitterModel(t *testing.T) {
	seeds := 25
	if testing.Short() {
		seeds = 5
	}
	if s := os.Getenv("APACHE_COMMIT_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	base := int64(1)
	if s := os.Getenv("APACHE_COMMIT_SEED"); s != "" {
		base, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seeds %d.. (APACHE_COMMIT_SEED), %d of them (APACHE_COMMIT_SEEDS)", base, seeds)
	for n := range seeds {
		seed := base + int64(n)
		ops := genACOps(rand.New(rand.NewSource(seed)))
		err := runACModel(t, ops)
		if err == nil {
			continue
		}
		small := shrinkACOps(ops, func(o []acOp) bool { return runACModel(t, o) != nil })
		t.Fatalf("seed %d: %v\nops: %v\nshrunk: %v\n%v", seed, err, ops, small, runACModel(t, small))
	}
}
