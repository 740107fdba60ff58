package iceberg

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// keyEvent is one event of a generated keyed stream; p < 0 means the record has no version.
type keyEvent struct {
	op   string // u (create/update), d (delete), tomb (version-less delete)
	id   int64
	part int32
	p    int64
	name string
}

func (e keyEvent) String() string {
	return fmt.Sprintf("{%s id=%d part=%d p=%d %s}", e.op, e.id, e.part, e.p, e.name)
}

// keyVersioning is how the generated records carry their version.
type keyVersioning struct {
	name string
	opts func(o *TableOptions)
	col  string // the row column of the version ("": none)
	val  func(p int64) any
}

var keyVersionings = []keyVersioning{
	{"none", func(o *TableOptions) {}, "", nil},
	{"table-column", func(o *TableOptions) { o.VersionColumn = "version" }, "version", func(p int64) any { return p }},
	{"envelope", func(o *TableOptions) { o.VersionColumn, o.CDCVersionColumn = "source.lsn", DefaultCDCVersionColumn },
		DefaultCDCVersionColumn, func(p int64) any { return fmt.Sprintf("%020d", p) }},
}

// genKeyRounds draws a stream over a few keys and positions close together, so duplicates,
// stale redeliveries, re-creates and tombstones meet within and across commits.
func genKeyRounds(rng *rand.Rand) [][]keyEvent {
	nkeys := 1 + rng.Intn(3)
	rounds := make([][]keyEvent, 1+rng.Intn(5))
	for i := range rounds {
		for range rng.Intn(10) + 1 {
			e := keyEvent{id: int64(1 + rng.Intn(nkeys)), p: int64(100 + rng.Intn(8)), name: "n" + strconv.Itoa(rng.Intn(1000))}
			switch x := rng.Intn(10); {
			case x < 6:
				e.op = "u"
			case x < 8:
				e.op = "d"
			default:
				e.op, e.p = "tomb", -1
			}
			if rng.Intn(8) == 0 {
				e.part = 1
			}
			if e.op == "u" && rng.Intn(12) == 0 {
				e.p = -1 // a record lacking its version
			}
			rounds[i] = append(rounds[i], e)
		}
	}
	return rounds
}

func (kv keyVersioning) rec(e keyEvent, off int64) Rec {
	row := Row{"id": e.id}
	op := OpDelete
	if e.op == "u" {
		op = OpUpdate
		row["name"] = e.name
	}
	if kv.col != "" && e.p >= 0 {
		row[kv.col] = kv.val(e.p)
	}
	return Rec{Op: op, Row: row, Schema: customerSchema, TP: TP{"cdc", e.part}, Offset: off}
}

// checkKeyIndex commits the stream round by round into table a as the records arrived and
// into table b as the task's key index leaves them, and reports the first difference: in what
// planDelta makes of the two on a's state, or in the rows a reader sees.
func checkKeyIndex(t testing.TB, kv keyVersioning, rounds [][]keyEvent, cat func() *Writer) error {
	ctx := context.Background()
	a, b := cat(), cat()
	b.Ident = table.Identifier{"db", "b"}
	// a first commit of another key creates both tables (planDelta needs one)
	boot := []Rec{kv.rec(keyEvent{op: "u", id: 99, p: 1, name: "boot"}, 0)}
	offs := Offsets{}
	next := int64(1)
	for _, w := range []*Writer{a, b} {
		if _, err := w.Commit(ctx, boot, Offsets{boot[0].TP: 1}, nil); err != nil {
			return err
		}
	}
	for i, round := range rounds {
		var full []Rec
		for _, e := range round {
			r := kv.rec(e, next)
			next++
			full = append(full, r)
			offs[r.TP] = r.Offset + 1
		}
		x := newKeyIndex(a.Opts)
		var comp []Rec
		for _, r := range full {
			comp, _ = x.add(comp, r)
		}
		fd, fdel, ft, err := a.planDelta(ctx, full, a.Opts.IDColumns, &CommitStats{})
		if err != nil {
			return err
		}
		cd, cdel, ct, err := a.planDelta(ctx, comp, a.Opts.IDColumns, &CommitStats{})
		if err != nil {
			return err
		}
		for _, p := range []struct {
			what string
			f, c []Row
		}{{"data", fd, cd}, {"deletes", fdel, cdel}, {"tombstones", ft, ct}} {
			if f, c := rowSet(p.f), rowSet(p.c); !slices.Equal(f, c) {
				return fmt.Errorf("round %d: planned %s differ:\n all events %v\n superseded %v", i, p.what, f, c)
			}
		}
		if _, err := a.Commit(ctx, full, offs, nil); err != nil {
			return err
		}
		if _, err := b.Commit(ctx, comp, offs, nil); err != nil {
			return err
		}
	}
	if ra, rb := rowSet(scanRows(t, a.Tbl)), rowSet(scanRows(t, b.Tbl)); !slices.Equal(ra, rb) {
		return fmt.Errorf("tables differ:\n all events %v\n superseded %v", ra, rb)
	}
	return nil
}

// rowSet renders rows as sorted strings, without the delete time of tombstone rows.
func rowSet(rows []Row) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		c := cloneRow(r)
		delete(c, DeletedAtColumn)
		out = append(out, fmt.Sprint(map[string]any(c)))
	}
	slices.Sort(out)
	return out
}

// shrinkKeyRounds drops events, then empty rounds, while the check still fails.
func shrinkKeyRounds(rounds [][]keyEvent, fails func([][]keyEvent) bool) [][]keyEvent {
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(rounds); i++ {
			for j := 0; j < len(rounds[i]); j++ {
				c := slices.Clone(rounds)
				c[i] = slices.Delete(slices.Clone(c[i]), j, j+1)
				if len(c[i]) == 0 {
					c = slices.Delete(c, i, i+1)
				}
				if fails(c) {
					rounds, changed = c, true
					j--
				}
			}
		}
	}
	return rounds
}

// TestKeyIndexModel: for random keyed streams, the records the task's key index keeps give the
// same plan and the same table as every event would, with versions from a table column, from
// the envelope, or none.
func TestKeyIndexModel(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	if s := os.Getenv("KEYINDEX_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	base := int64(11)
	if s := os.Getenv("KEYINDEX_SEED"); s != "" {
		base, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seeds %d.. (KEYINDEX_SEED), %d of them (KEYINDEX_SEEDS)", base, seeds)
	for _, kv := range keyVersionings {
		t.Run(kv.name, func(t *testing.T) {
			for n := range seeds {
				seed := base + int64(n)
				rounds := genKeyRounds(rand.New(rand.NewSource(seed)))
				writer := func() *Writer {
					o := TableOptions{IDColumns: []string{"id"}, AutoCreate: true, DeltaMode: true, UpsertMode: true,
						OffsetsKey: OffsetsSummaryKey("g")}
					kv.opts(&o)
					return &Writer{Cat: sqliteCatalog(t), Ident: table.Identifier{"db", "a"}, Opts: o}
				}
				err := checkKeyIndex(t, kv, rounds, writer)
				if err == nil {
					continue
				}
				small := shrinkKeyRounds(rounds, func(r [][]keyEvent) bool { return checkKeyIndex(t, kv, r, writer) != nil })
				t.Fatalf("seed %d: %v\nshrunk stream (one slice per commit): %v\n%v", seed, err, small, checkKeyIndex(t, kv, small, writer))
			}
		})
	}
}
