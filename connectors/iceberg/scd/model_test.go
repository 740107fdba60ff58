package scd

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// histEvent is one change event appended to the raw history.
type histEvent struct {
	Key     int
	Version int
	Delete  bool
	Name    string
	Tier    *string // nil: JSON null
	Reorder bool    // the payload's members in another order (same value)
	NoTS    bool    // no source_timestamp: valid_from falls back to kafka_timestamp
}

func (e histEvent) sourceTime() time.Time {
	return time.Unix(1_700_000_000+int64(e.Version)*60, 0).UTC()
}
func (e histEvent) kafkaTime() time.Time { return e.sourceTime().Add(1500 * time.Millisecond) }
func (e histEvent) validFrom() time.Time {
	if e.NoTS {
		return e.kafkaTime()
	}
	return e.sourceTime()
}

// canonical is the payload as the SCD table's attributes column holds it (sorted members).
func (e histEvent) canonical() string {
	b, _ := json.Marshal(map[string]any{"id": e.Key, "name": e.Name, "tier": e.Tier})
	return string(b)
}

func (e histEvent) payload() string {
	tier := "null"
	if e.Tier != nil {
		tier = strconv.Quote(*e.Tier)
	}
	if e.Reorder {
		return fmt.Sprintf(`{"tier": %s, "name": %q, "id": %d}`, tier, e.Name, e.Key)
	}
	return fmt.Sprintf(`{"id":%d,"name":%q,"tier":%s}`, e.Key, e.Name, tier)
}

// scdOp is one step of a model run.
type scdOp struct {
	Kind   string // "append": one history commit; "run"; "crash": plan, then die; "race": plan, append, commit
	Events []histEvent
}

func (o scdOp) String() string {
	if len(o.Events) == 0 {
		return o.Kind
	}
	var b strings.Builder
	b.WriteString(o.Kind + "[")
	for i, e := range o.Events {
		if i > 0 {
			b.WriteString(" ")
		}
		op := "u"
		if e.Delete {
			op = "d"
		}
		fmt.Fprintf(&b, "k%d@%d%s", e.Key, e.Version, op)
	}
	return b.String() + "]"
}

// scdConfig is one random configuration of the materialization.
type scdConfig struct {
	Rules
	Named bool // attributes name and tier, else the whole payload
}

// genSCDOps makes a random history: new versions, late older ones (unused versions below the
// key's newest), exact redeliveries, deletes and re-inserts, spread over appends, runs, crashes
// between plan and commit, and appends racing a run.
func genSCDOps(rng *rand.Rand) []scdOp {
	keys := 1 + rng.Intn(6)
	used := map[int]map[int]bool{}
	var all []histEvent
	next := 1 + rng.Intn(5)
	names := []string{"ann", "bob", "cy"}
	tiers := []string{"gold", "silver"}
	event := func() histEvent {
		if len(all) > 0 && rng.Intn(8) == 0 {
			return all[rng.Intn(len(all))] // a redelivery
		}
		k := rng.Intn(keys)
		if used[k] == nil {
			used[k] = map[int]bool{}
		}
		v := 0
		if rng.Intn(4) == 0 && next > 2 { // a late version: below what was already written
			for try := 0; try < 5; try++ {
				if c := 1 + rng.Intn(next-1); !used[k][c] {
					v = c
					break
				}
			}
		}
		if v == 0 {
			// versions of every size (1, 10, 100, ...) so that text order is not version order
			next += 1 + rng.Intn(3)
			if rng.Intn(10) == 0 {
				next *= 10
			}
			v = next
		}
		used[k][v] = true
		e := histEvent{Key: k, Version: v, Delete: rng.Intn(5) == 0, Name: names[rng.Intn(len(names))],
			Reorder: rng.Intn(3) == 0, NoTS: rng.Intn(10) == 0}
		if rng.Intn(4) > 0 {
			e.Tier = &tiers[rng.Intn(len(tiers))]
		}
		all = append(all, e)
		return e
	}
	batch := func() []histEvent {
		evs := make([]histEvent, 1+rng.Intn(6))
		for i := range evs {
			evs[i] = event()
		}
		return evs
	}
	var ops []scdOp
	for n := 4 + rng.Intn(10); n > 0; n-- {
		switch r := rng.Intn(10); {
		case r < 5:
			ops = append(ops, scdOp{Kind: "append", Events: batch()})
		case r < 8:
			ops = append(ops, scdOp{Kind: "run"})
		case r < 9:
			ops = append(ops, scdOp{Kind: "crash"})
		default:
			ops = append(ops, scdOp{Kind: "race", Events: batch()})
		}
	}
	return append(ops, scdOp{Kind: "run"})
}

// expectSCD is the model: the SCD rows of the history, as lines
// key|version|valid_from|valid_to|is_current|is_deleted|attributes.
func expectSCD(hist []histEvent, cfg scdConfig) []string {
	byKey := map[int]map[int]histEvent{}
	for _, e := range hist { // in delivery order: a redelivery is the same event
		if byKey[e.Key] == nil {
			byKey[e.Key] = map[int]histEvent{}
		}
		byKey[e.Key][e.Version] = e
	}
	var out []string
	for k, vs := range byKey {
		versions := make([]int, 0, len(vs))
		for v := range vs {
			versions = append(versions, v)
		}
		sort.Ints(versions)
		var kept []histEvent
		for _, v := range versions {
			e := vs[v]
			if cfg.SkipUnchanged && len(kept) > 0 {
				last := kept[len(kept)-1]
				if last.Delete && e.Delete || !last.Delete && !e.Delete && attrLine(last, cfg) == attrLine(e, cfg) {
					continue
				}
			}
			kept = append(kept, e)
		}
		for i, e := range kept {
			if e.Delete && !cfg.DeleteMarkers {
				continue
			}
			to := "-"
			if i+1 < len(kept) {
				to = strconv.FormatInt(kept[i+1].validFrom().UnixMilli(), 10)
			}
			attrs := "-"
			if !e.Delete {
				attrs = attrLine(e, cfg)
			}
			out = append(out, fmt.Sprintf("%s|%d|%d|%s|%v|%v|%s", keyJSON(k), e.Version, e.validFrom().UnixMilli(), to,
				i == len(kept)-1 && !e.Delete, e.Delete && cfg.DeleteMarkers, attrs))
		}
	}
	sort.Strings(out)
	return out
}

func keyJSON(k int) string { return fmt.Sprintf(`{"id":%d}`, k) }

func attrLine(e histEvent, cfg scdConfig) string {
	if !cfg.Named {
		return e.canonical()
	}
	tier := "<null>"
	if e.Tier != nil {
		tier = *e.Tier
	}
	return e.Name + "," + tier
}

// scdLines reads the SCD table (deletes applied) as the model's lines, and checks that record_hash
// is a function of the attributes and tells different attributes apart.
func scdLines(ctx context.Context, tbl *table.Table, cfg scdConfig) ([]string, error) {
	var out []string
	hashOf, attrsOf := map[string]string{}, map[string]string{}
	for r, err := range icetable.LiveRows(ctx, tbl, 0, nil) {
		if err != nil {
			return nil, err
		}
		ms := func(c string) string {
			if t, ok := r[c].(time.Time); ok {
				return strconv.FormatInt(t.UnixMilli(), 10)
			}
			return "-"
		}
		deleted, _ := r[ColIsDeleted].(bool)
		attrs := "-"
		if !deleted {
			if cfg.Named {
				tier := "<null>"
				if s, ok := r["tier"].(string); ok {
					tier = s
				}
				attrs = fmt.Sprint(r["name"]) + "," + tier
			} else {
				attrs = fmt.Sprint(r[ColAttributes])
			}
			h := fmt.Sprint(r[ColRecordHash])
			if prev, ok := hashOf[attrs]; ok && prev != h {
				return nil, fmt.Errorf("attributes %s hash to %s and %s", attrs, prev, h)
			}
			if prev, ok := attrsOf[h]; ok && prev != attrs {
				return nil, fmt.Errorf("hash %s of %s and %s", h, prev, attrs)
			}
			hashOf[attrs], attrsOf[h] = h, attrs
		} else if r[ColRecordHash] != nil {
			return nil, fmt.Errorf("delete marker with a record_hash: %v", r)
		}
		out = append(out, fmt.Sprintf("%s|%s|%s|%s|%v|%v|%s", r[ColBusinessKey], r[ColSourceVersion], ms(ColValidFrom), ms(ColValidTo),
			r[ColIsCurrent], deleted, attrs))
	}
	sort.Strings(out)
	return out, nil
}

// historyIdent and scdIdent are the tables of a model run.
var (
	historyIdent = table.Identifier{"db", "customers_history"}
	scdIdent     = table.Identifier{"db", "customers_scd"}
)

// appendHistory commits events to the raw history as one snapshot, with the next Kafka offsets.
func appendHistory(ctx context.Context, cat catalog.Catalog, evs []histEvent, offset *int64) error {
	tbl, err := cat.LoadTable(ctx, historyIdent)
	if err != nil {
		return err
	}
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return err
	}
	rows := make([]icerow.Row, len(evs))
	for i, e := range evs {
		op, after := "u", any(e.payload())
		if e.Delete {
			op, after = "d", nil
		}
		r := icerow.Row{
			"source_system": "postgresql:inventory", "source_table": "customers",
			icerow.RawPrimaryKey: keyJSON(e.Key), icerow.RawOperation: op, icerow.RawAfterPayload: after,
			icerow.RawSourceVersion: strconv.Itoa(e.Version), "kafka_topic": "inventory.customers",
			icerow.RawKafkaPartition: int32(0), icerow.RawKafkaOffset: *offset,
			icerow.RawKafkaTimestamp: e.kafkaTime(), "ingested_at": time.Now().UTC(),
		}
		if !e.NoTS {
			r[icerow.RawSourceTimestamp] = e.sourceTime()
		}
		*offset++
		rows[i] = r
	}
	rec, err := icerow.BuildRecord(asc, rows)
	if err != nil {
		return err
	}
	defer rec.Release()
	tx := tbl.NewTransaction()
	rdr, err := recordReader(asc, rec)
	if err != nil {
		return err
	}
	defer rdr.Release()
	if err := tx.Append(ctx, rdr, nil); err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}

// modelOpts are the options of a model run.
func modelOpts(cfg scdConfig) Options {
	o := Options{History: historyIdent, Target: scdIdent, Rules: cfg.Rules}
	if cfg.Named {
		o.Attributes = []string{"name", "tier"}
	}
	return o
}

// checkRun compares the SCD table with the model of hist and bounds the files the run added.
func checkRun(ctx context.Context, cat catalog.Catalog, hist []histEvent, cfg scdConfig, rep Report) error {
	tbl, err := cat.LoadTable(ctx, scdIdent)
	if err != nil {
		return err
	}
	if rep.SnapshotID != 0 {
		s := tbl.SnapshotByID(rep.SnapshotID)
		added := 0
		for _, k := range []string{"added-data-files", "added-delete-files"} {
			n, _ := strconv.Atoi(s.Summary.Properties[k])
			added += n
		}
		if added > 2 || rep.DataFiles > 1 || rep.DeleteFiles > 1 {
			return fmt.Errorf("run added %d files (%d data, %d delete): more than one data and one delete file", added, rep.DataFiles, rep.DeleteFiles)
		}
	}
	got, err := scdLines(ctx, tbl, cfg)
	if err != nil {
		return err
	}
	if want := expectSCD(hist, cfg); !slices.Equal(got, want) {
		return fmt.Errorf("SCD table differs from the model\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	return nil
}

// runSCDModel runs ops against a fresh catalog; check (when set) is called after each checked run.
func runSCDModel(t *testing.T, ops []scdOp, cfg scdConfig, check func(cat catalog.Catalog, hist []histEvent, rep Report) error) error {
	ctx := context.Background()
	cat := icebergtest.SQLiteCatalogIn(t, t.TempDir())
	var hist []histEvent
	var offset int64
	o := modelOpts(cfg)
	if _, err := icetable.CreateTable(ctx, cat, historyIdent, icerow.RawCDCSchema, icetable.TableOptions{}); err != nil {
		return err
	}
	for i, op := range ops {
		var err error
		switch op.Kind {
		case "append":
			if err = appendHistory(ctx, cat, op.Events, &offset); err == nil {
				hist = append(hist, op.Events...)
			}
		case "crash":
			// the process dies after writing the run's files, before committing them
			_, err = PlanRun(ctx, cat, o)
		case "run", "race":
			var p *Plan
			if p, err = PlanRun(ctx, cat, o); err != nil {
				break
			}
			planned := len(hist)
			if op.Kind == "race" {
				if err = appendHistory(ctx, cat, op.Events, &offset); err != nil {
					break
				}
				hist = append(hist, op.Events...)
			}
			if err = p.Commit(ctx); err != nil {
				break
			}
			if err = checkRun(ctx, cat, hist[:planned], cfg, p.report()); err == nil && check != nil {
				err = check(cat, hist[:planned], p.report())
			}
			if err != nil {
				break
			}
			// a rerun on the same history changes nothing
			var again Report
			if again, err = Run(ctx, cat, o); err == nil && op.Kind == "run" && (!again.UpToDate || again.SnapshotID != 0) {
				err = fmt.Errorf("a rerun on the same history committed: %+v", again)
			}
		}
		if err != nil {
			return fmt.Errorf("op %d (%s): %w", i, op, err)
		}
	}
	return nil
}

func scdSeeds(t *testing.T, def int) (int64, int) {
	base, n := time.Now().UnixNano()%1_000_000, def
	if s := os.Getenv("SCD_SEED"); s != "" {
		base, _ = strconv.ParseInt(s, 10, 64)
	}
	if s := os.Getenv("SCD_SEEDS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if testing.Short() && n > 5 {
		n = 5
	}
	t.Logf("seeds %d.. (SCD_SEED), %d of them (SCD_SEEDS)", base, n)
	return base, n
}

func seedConfig(seed int64) scdConfig {
	rng := rand.New(rand.NewSource(seed ^ 0x5cd))
	return scdConfig{Rules: Rules{SkipUnchanged: rng.Intn(2) == 0, DeleteMarkers: rng.Intn(2) == 0}, Named: rng.Intn(2) == 0}
}

// shrinkSCDOps removes runs of ops while the run still fails.
func shrinkSCDOps(ops []scdOp, fails func([]scdOp) bool) []scdOp {
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

// modelSeeds runs each seed's ops and, on a failure, shrinks them and reports the shortest list.
func modelSeeds(t *testing.T, base int64, n int, config func(int64) scdConfig, check func(cfg scdConfig) func(catalog.Catalog, []histEvent, Report) error) {
	for s := base; s < base+int64(n); s++ {
		cfg := config(s)
		ops := genSCDOps(rand.New(rand.NewSource(s)))
		err := runSCDModel(t, ops, cfg, check(cfg))
		if err == nil {
			continue
		}
		min := shrinkSCDOps(ops, func(c []scdOp) bool { return runSCDModel(t, c, cfg, check(cfg)) != nil })
		t.Fatalf("seed %d (SCD_SEED=%d SCD_SEEDS=1), config %+v: %v\nshrunk to %d ops: %v\nfails with: %v", s, s, cfg, err, len(min), min,
			runSCDModel(t, min, cfg, check(cfg)))
	}
}

// TestSCDModel: random histories with late, duplicated and out-of-order versions, deletes and
// re-inserts, appends racing a run and crashes between plan and commit, in every configuration
// (skip unchanged, delete markers, named attributes or the whole payload): after every run the
// SCD table equals the model's intervals, a rerun commits nothing, and each run adds at most one
// data and one delete file.
func TestSCDModel(t *testing.T) {
	base, n := scdSeeds(t, 40)
	modelSeeds(t, base, n, seedConfig, func(scdConfig) func(catalog.Catalog, []histEvent, Report) error { return nil })
}
