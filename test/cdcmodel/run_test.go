package cdcmodel

import (
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// view is one way of reading a sink's current state back: a table (and the version source it is
// configured with) through one independent reader. read returns the live rows by rendered key.
type view struct {
	name    string
	table   string // views of one table by different readers must agree
	version cdcstream.VersionSource
	read    func(t *testing.T) map[string][]cdcstream.Row
}

// sinkUnderTest is what a sink contributes to a run: its connector config, its views, and checks of the
// run as a whole (such as a raw history table holding every record once).
type sinkUnderTest struct {
	name  string
	props func(topic string, rng *rand.Rand) string
	views []view
	// wholeRun checks, after the main run, what does not belong to one stream; records is the count produced.
	wholeRun func(t *testing.T, records int64)
}

// runModel is the model test of one sink: rounds of CDC_STREAMS random streams (round r from seed
// CDC_SEED+r) through one worker, topic and set of tables, every stream so far checked against the model
// after each round; then the first failing stream of each view is shrunk.
func runModel(t *testing.T, sink sinkUnderTest, skippedTails bool) {
	p := readParams(t)
	if skippedTails && os.Getenv("CDC_STREAMS") == "" && os.Getenv("CDC_TOTAL_STREAMS") == "" {
		p.streams, p.total = 300, 300 // beside the runs without skipped tails, which cover the streams at length
	}
	p.skippedTails = p.skippedTails || skippedTails
	cfg := cdcstream.DefaultConfig()
	if p.bare >= 0 {
		cfg.BareTombstone = p.bare
	}
	if p.skippedTails {
		// the tombstones are filtered: a delete is the change event's alone, as with Debezium's usual filter
		cfg.BareTombstone = 0
	}
	rounds := max(1, (p.total+p.streams-1)/p.streams)
	t.Logf("CDC model test %s: CDC_SEED=%d CDC_STREAMS=%d (x %d rounds) CDC_KILLS=%d CDC_PARTITIONS=%d CDC_BARE_TOMBSTONES=%v CDC_SKIPPED_TAILS=%v",
		sink.name, p.seed, p.streams, rounds, p.kills, p.partitions, cfg.BareTombstone, p.skippedTails)
	h := newHarness(t, sink, p, rand.New(rand.NewSource(p.seed)))
	workerproc.Binary(t)
	t0 := time.Now()
	h.start()
	var all []cdcstream.Stream
	var events, kills int
	// the known cases first, with their commit boundaries
	var phases [][]int
	for i, c := range cdcstream.KnownCases(cfg.BareTombstone > 0) {
		s := cdcstream.Stream{Prefix: fmt.Sprintf("case%d", i), Events: c.Events}
		t.Logf("known case %s: %s", s.Prefix, c.Name)
		all = append(all, s)
		phases = append(phases, c.Phases)
		events += len(c.Events)
	}
	h.deliverPhased(all, phases)
	for r := 0; r < rounds; r++ {
		seed := p.seed + int64(r)
		rng := rand.New(rand.NewSource(seed))
		streams := make([]cdcstream.Stream, p.streams)
		for i := range streams {
			streams[i] = cdcstream.Generate(rng, fmt.Sprintf("r%ds%d", r, i), cfg)
			events += len(streams[i].Events)
		}
		all = append(all, streams...)
		kills += h.deliver(streams, rng, p.kills)
		t.Logf("round %d (seed %d): every record committed after %v; %d streams, %d events, %d SIGKILLs so far",
			r, seed, time.Since(t0).Round(time.Millisecond), len(all), events, kills)
		if sink.wholeRun != nil {
			sink.wholeRun(t, h.total)
		}
		h.checkDeadLetters()
		if !checkViews(t, h, sink, all, p, seed) {
			t.Errorf("%s: failed in round %d: reproduce it with CDC_SEED=%d CDC_STREAMS=%d", sink.name, r, seed, p.streams)
			return
		}
	}
	t.Logf("%s: CLEAN seed=%d streams=%d events=%d kills=%d in %v", sink.name, p.seed, len(all), events, kills,
		time.Since(t0).Round(time.Second))
}

// checkViews reads every view once and compares every stream with the model; the shortest failing
// stream of each failing view is shrunk. It reports whether all were equal.
func checkViews(t *testing.T, h *harness, sink sinkUnderTest, streams []cdcstream.Stream, p params, seed int64) bool {
	deadline := time.Now().Add(p.shrink)
	ok := true
	failedBy := map[string]string{} // table -> failing prefixes, as found by its first reader
	firstReader := map[string]string{}
	for _, v := range sink.views {
		got := byPrefix(v.read(t))
		var failing []int
		var first string
		for i, s := range streams {
			d := diff(s, keyed(s, h.state(s.Events, v.version)), got[s.Prefix])
			if d != "" {
				if first == "" {
					first = fmt.Sprintf("stream %s:\n%s", s.Prefix, d)
				}
				failing = append(failing, i)
			}
		}
		if len(failing) == 0 {
			t.Logf("%s: all %d streams equal the model", v.name, len(streams))
			continue
		}
		ok = false
		t.Errorf("%s: %d of %d streams differ from the model (CDC_SEED=%d); first: %s", v.name, len(failing), len(streams), seed, first)
		var ids, cases []string
		for _, i := range failing {
			ids = append(ids, streams[i].Prefix)
			if strings.HasPrefix(streams[i].Prefix, "case") {
				cases = append(cases, streams[i].Prefix)
			}
		}
		if len(cases) > 0 {
			t.Logf("%s: known cases that fail: %s", v.name, strings.Join(cases, ", "))
		}
		set := strings.Join(ids, ",")
		if prev, seen := failedBy[v.table]; seen && prev == set {
			t.Logf("%s: the same streams as %s (the readers agree); not shrunk again", v.name, firstReader[v.table])
			continue
		} else if seen {
			t.Errorf("%s and %s disagree on which streams differ", v.name, firstReader[v.table])
		} else {
			failedBy[v.table], firstReader[v.table] = set, v.name
		}
		slices.SortStableFunc(failing, func(a, b int) int { return len(streams[a].Events) - len(streams[b].Events) })
		s := streams[failing[0]]
		t.Logf("%s: shrinking stream %s (%d events):\n%s", v.name, s.Prefix, len(s.Events), cdcstream.Format(s, nil))
		shrinkAndReport(t, h, v, s, got[s.Prefix], seed, deadline)
	}
	return ok
}
