package icetable_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// cdcVersionColumn is the metadata column of envelope versions.
const cdcVersionColumn = "_cdc_version"

// keyEvent is one event of a generated keyed stream; p < 0 means the record has no version.
type keyEvent struct {
	op     string // u (create/update), d (delete), tomb (version-less delete)
	id     int64
	part   int32
	p      int64
	name   string
	schema int // 0: id, name, version; 1: and extra (as a cdc-field stream, deletes share the upserts' schemas)
	v      any // the version as written, instead of the versioning's of p
}

func (e keyEvent) String() string {
	return fmt.Sprintf("{%s id=%d part=%d p=%d %s s%d}", e.op, e.id, e.part, e.p, e.name, e.schema)
}

// keyVersioning is how the generated records carry their version.
type keyVersioning struct {
	name  string
	opts  func(o *icetable.TableOptions)
	col   string // the row column of the version ("": none)
	vtype ice.Type
	val   func(p int64) any
}

var keyVersionings = []keyVersioning{
	{"none", func(o *icetable.TableOptions) {}, "", ice.PrimitiveTypes.Int64, nil},
	{"table-column", func(o *icetable.TableOptions) { o.VersionColumn = "version" }, "version", ice.PrimitiveTypes.Int64,
		func(p int64) any { return p }},
	{"envelope", func(o *icetable.TableOptions) {
		o.VersionColumn, o.CDCVersionColumn = "source.lsn", cdcVersionColumn
	},
		cdcVersionColumn, ice.PrimitiveTypes.Int64, func(p int64) any { return fmt.Sprintf("%020d", p) }},
	// strings of the formats compareVersion compares differently (as numbers, as text), mixed within a key:
	// its order is not transitive across them
	{"table-column-mixed-strings", func(o *icetable.TableOptions) { o.VersionColumn = "version" }, "version", ice.PrimitiveTypes.String,
		func(p int64) any {
			n := (p - 100) * 3 // one and two digits: as numbers 9 < 12, as text "12.0.1" < "9"
			switch p % 3 {
			case 0:
				return strconv.FormatInt(n, 10)
			case 1:
				return fmt.Sprintf("%d.0.1", n)
			}
			return fmt.Sprintf("v%d", n)
		}},
}

// schemas are the two record schemas of a versioning's stream.
func (kv keyVersioning) schemas() [2]*ice.StructType {
	base := []ice.NestedField{
		{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
		{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
		{ID: 3, Name: "version", Type: kv.vtype},
	}
	return [2]*ice.StructType{{FieldList: base},
		{FieldList: append(slices.Clone(base), ice.NestedField{ID: 4, Name: "extra", Type: ice.PrimitiveTypes.String})}}
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
			if rng.Intn(4) == 0 {
				e.schema = 1
			}
			rounds[i] = append(rounds[i], e)
		}
	}
	return rounds
}

func (kv keyVersioning) rec(e keyEvent, off int64, schemas [2]*ice.StructType) icetable.Rec {
	row := icerow.Row{"id": e.id}
	op := icerow.OpDelete
	if e.op == "u" {
		op = icerow.OpUpdate
		row["name"] = e.name
		if e.schema == 1 {
			row["extra"] = "x" + e.name
		}
	}
	switch {
	case kv.col != "" && e.v != nil:
		row[kv.col] = e.v
	case kv.col != "" && e.p >= 0:
		row[kv.col] = kv.val(e.p)
	}
	return icetable.Rec{Op: op, Row: row, Schema: schemas[e.schema], TP: icetable.TP{Topic: "cdc", Partition: e.part}, Offset: off}
}

// checkKeyIndex commits the stream round by round into table a as the records arrived and
// into table b as the task's key index leaves them, and reports the first difference: in what
// planDelta makes of the two on the same state, or in the schema and rows a reader sees.
func checkKeyIndex(t testing.TB, kv keyVersioning, rounds [][]keyEvent, boot bool, cat func() *icetable.Writer) error {
	ctx := context.Background()
	// a gets every event, b the superseded buffer, and c every event too: planDelta is asked on c
	// (it may add a metadata column, which must not change what a's commits do)
	a, b, c := cat(), cat(), cat()
	b.Ident, c.Ident = table.Identifier{"db", "b"}, table.Identifier{"db", "c"}
	schemas := kv.schemas()
	offs := icetable.Offsets{}
	next := int64(1)
	if boot {
		// a first commit of another key creates both tables, so that planDelta can be asked too
		boot := []icetable.Rec{kv.rec(keyEvent{op: "u", id: 99, p: 1, name: "boot"}, 0, schemas)}
		for _, w := range []*icetable.Writer{a, b, c} {
			if _, err := w.Commit(ctx, boot, icetable.Offsets{boot[0].TP: 1}, nil); err != nil {
				return err
			}
		}
	}
	for i, round := range rounds {
		var full []icetable.Rec
		for _, e := range round {
			r := kv.rec(e, next, schemas)
			next++
			full = append(full, r)
			offs[r.TP] = r.Offset + 1
		}
		x := icetable.NewKeyIndex(a.Opts)
		var comp []icetable.Rec
		for _, r := range full {
			comp, _ = add(x, a.Opts, comp, r)
		}
		if err := samePlan(ctx, i, c, full, comp); err != nil {
			return err
		}
		if _, err := c.Commit(ctx, full, offs, nil); err != nil {
			return fmt.Errorf("round %d, all events: %w", i, err)
		}
		if _, err := a.Commit(ctx, full, offs, nil); err != nil {
			return fmt.Errorf("round %d, all events: %w", i, err)
		}
		if _, err := b.Commit(ctx, comp, offs, nil); err != nil {
			return fmt.Errorf("round %d, superseded: %w", i, err)
		}
		if a.Tbl == nil || b.Tbl == nil {
			continue // nothing to create a table from (deletes only)
		}
		if sa, sb := a.Tbl.Schema().String(), b.Tbl.Schema().String(); sa != sb {
			return fmt.Errorf("round %d: table schemas differ:\n all events %s\n superseded %s", i, sa, sb)
		}
		if ra, rb := rowSet(scanRows(t, a.Tbl)), rowSet(scanRows(t, b.Tbl)); !slices.Equal(ra, rb) {
			return fmt.Errorf("round %d: tables differ:\n all events %v\n superseded %v", i, ra, rb)
		}
	}
	return nil
}

// samePlan compares what planDelta makes of all events and of the superseded buffer on a's state.
func samePlan(ctx context.Context, round int, a *icetable.Writer, full, comp []icetable.Rec) error {
	if a.Tbl == nil {
		return nil // Prepare would create the table first
	}
	fd, fdel, ft, err := a.PlanDelta(ctx, full, a.Opts.IDColumns, &icetable.CommitStats{})
	if err != nil {
		return err
	}
	cd, cdel, ct, err := a.PlanDelta(ctx, comp, a.Opts.IDColumns, &icetable.CommitStats{})
	if err != nil {
		return err
	}
	for _, p := range []struct {
		what string
		f, c []icerow.Row
	}{{"data", recRowsOf(fd), recRowsOf(cd)}, {"deletes", recRowsOf(fdel), recRowsOf(cdel)}, {"tombstones", ft, ct}} {
		if f, c := rowSet(p.f), rowSet(p.c); !slices.Equal(f, c) {
			return fmt.Errorf("round %d: planned %s differ:\n all events %v\n superseded %v", round, p.what, f, c)
		}
	}
	return nil
}

// recRowsOf is the rows of recs.
func recRowsOf(recs []*icetable.Rec) []icerow.Row {
	rows := make([]icerow.Row, len(recs))
	for i, r := range recs {
		rows[i] = r.Row
	}
	return rows
}

// rowSet renders rows as sorted strings, without the delete time of tombstone rows.
func rowSet(rows []icerow.Row) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		c := icerow.CloneRow(r)
		delete(c, icetable.DeletedAtColumn)
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
			for j := 0; i < len(rounds) && j < len(rounds[i]); j++ { // a round left empty goes: i is the next
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

// TestKeyIndexCases are streams the model test once found, or would find rarely.
func TestKeyIndexCases(t *testing.T) {
	kvs := map[string]keyVersioning{}
	for _, kv := range keyVersionings {
		kvs[kv.name] = kv
	}
	for _, c := range []struct {
		name, versioning string
		boot             bool
		rounds           [][]keyEvent
	}{
		// auto-create takes the first non-delete's schema: an upsert must not move into a delete's place
		{"upsert-after-delete-before-auto-create", "table-column", false, [][]keyEvent{{
			{op: "d", id: 1, p: 105}, {op: "u", id: 2, p: 101, schema: 1, name: "b"}, {op: "u", id: 1, p: 106, name: "c"}}}},
		// nor a delete into an upsert's place
		{"delete-after-upsert-before-auto-create", "table-column", false, [][]keyEvent{{
			{op: "u", id: 1, p: 105, schema: 1, name: "a"}, {op: "u", id: 2, p: 101, name: "b"}, {op: "d", id: 1, p: 106, schema: 1}}}},
		// compareVersion: "9" < "10" as numbers, "10" < "10.0.1" < "9" as text
		{"non-transitive-versions", "table-column-mixed-strings", true, [][]keyEvent{{
			{op: "u", id: 1, part: 1, v: "10", name: "A"}, {op: "u", id: 1, v: "10.0.1", name: "p"}, {op: "u", id: 1, v: "9", name: "r"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			kv := kvs[c.versioning]
			for _, evolve := range []bool{false, true} {
				writer := func() *icetable.Writer {
					o := icetable.TableOptions{IDColumns: []string{"id"}, AutoCreate: true, DeltaMode: true, UpsertMode: true,
						EvolveSchema: evolve, OffsetsKey: icetable.OffsetsSummaryKey("g")}
					kv.opts(&o)
					return &icetable.Writer{Cat: sqliteCatalog(t), Ident: table.Identifier{"db", "a"}, Opts: o}
				}
				if err := checkKeyIndex(t, kv, c.rounds, c.boot, writer); err != nil {
					t.Fatalf("evolve %v: %v", evolve, err)
				}
			}
		})
	}
}

// TestKeyIndexModel: for random keyed streams, the records the task's key index keeps give the
// same plan and the same table (schema and rows) as every event would, with versions from a table
// column, from the envelope, or none; with the table auto-created from the stream or there before;
// with schema evolution on or off.
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
				rng := rand.New(rand.NewSource(seed))
				rounds := genKeyRounds(rng)
				boot, evolve := rng.Intn(2) == 0, rng.Intn(2) == 0
				writer := func() *icetable.Writer {
					o := icetable.TableOptions{IDColumns: []string{"id"}, AutoCreate: true, DeltaMode: true, UpsertMode: true,
						EvolveSchema: evolve, OffsetsKey: icetable.OffsetsSummaryKey("g")}
					kv.opts(&o)
					return &icetable.Writer{Cat: sqliteCatalog(t), Ident: table.Identifier{"db", "a"}, Opts: o}
				}
				check := func(r [][]keyEvent) error { return checkKeyIndex(t, kv, r, boot, writer) }
				err := check(rounds)
				if err == nil {
					continue
				}
				small := shrinkKeyRounds(rounds, func(r [][]keyEvent) bool { return check(r) != nil })
				t.Fatalf("seed %d (table there before: %v, evolve: %v): %v\nshrunk stream (one slice per commit): %v\n%v",
					seed, boot, evolve, err, small, check(small))
			}
		})
	}
}

// add is KeyIndex.Add (of a table of options o) of a record whose key and version its row holds (a record without a row is
// appended).
func add(x *icetable.KeyIndex, o icetable.TableOptions, buf []icetable.Rec, rec icetable.Rec) (out []icetable.Rec, grew bool) {
	if rec.Seg != nil || rec.Row == nil {
		return append(buf, rec), true
	}
	var ver any
	if vc := o.KeyVersionColumn(); vc != "" {
		ver = rec.Row[vc]
	}
	return x.Add(buf, rec, []byte(icerow.KeyOf(rec.Row, o.IDColumns)), ver)
}

// TestKeyIndexSlotModel: random keys of every length around the tiny-key bound, with zero bytes,
// keys that are prefixes of each other and keys that differ in their last byte, each keep one place in the buffer (a version-less
// record takes the place of its key's last one) until a Reset, against a plain map (seed printed).
func TestKeyIndexSlotModel(t *testing.T) {
	seed := int64(5)
	if s := os.Getenv("KEYINDEX_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (KEYINDEX_SEED)", seed)
	rng := rand.New(rand.NewSource(seed))
	x := icetable.NewKeyIndex(icetable.TableOptions{IDColumns: []string{"id"}})
	var keys [][]byte
	for range 300 {
		k := make([]byte, rng.Intn(34))
		for i := range k {
			k[i] = "a\x00"[rng.Intn(2)]
		}
		keys = append(keys, k)
	}
	off := int64(0)
	for round := range 4 {
		at := map[string]int{} // key → its place in buf
		var buf []icetable.Rec
		for range 3000 {
			k := keys[rng.Intn(len(keys))]
			switch rng.Intn(8) {
			case 0: // a key's prefix: only its length tells it from shorter keys
				k = k[:rng.Intn(len(k)+1)]
			case 1: // a key that differs in its last byte only
				if n := len(k); n > 0 {
					k = append(slices.Clone(k[:n-1]), k[n-1]^'a')
				}
			}
			off++
			var grew bool
			buf, grew = x.Add(buf, icetable.Rec{Op: icerow.OpUpdate, Offset: off}, k, nil)
			i, known := at[string(k)]
			if !known {
				i = len(buf) - 1
				at[string(k)] = i
			}
			if grew == known || buf[i].Offset != off || len(buf) != len(at) {
				t.Fatalf("round %d: key %q (known: %v) grew %v, its place holds offset %d, not %d; %d records for %d keys",
					round, k, known, grew, buf[i].Offset, off, len(buf), len(at))
			}
			if s := x.Slot(k); s.Key() != string(k) {
				t.Fatalf("round %d: slot of key %q holds key %q", round, k, s.Key())
			}
			if len(keys) < 3000 && rng.Intn(4) == 0 {
				keys = append(keys, k)
			}
		}
		x.Reset()
	}
}

// BenchmarkKeyIndexSlot: the slot of each of 33,000 decimal ids in turn, as a task's index of a
// 100,000-key upsert stream over three tasks sees them.
func BenchmarkKeyIndexSlot(b *testing.B) {
	x := icetable.NewKeyIndex(icetable.TableOptions{IDColumns: []string{"id"}})
	keys := make([][]byte, 33_000)
	for i := range keys {
		keys[i] = strconv.AppendInt(nil, int64(i*3), 10)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		x.Slot(keys[i])
		if i++; i == len(keys) {
			i = 0
		}
	}
}
