package cdcmodel

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
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
	// bareTombstones is the generator's rate of tombstones without their delete unless CDC_BARE_TOMBSTONES
	// sets it.
	bareTombstones float64
}

// params of a run, from the environment (make soak sets them).
type params struct {
	seed       int64
	streams    int // per round
	total      int // all rounds
	kills      int // per round
	partitions int
	shrink     time.Duration
	bare       float64 // < 0: the sink's default
}

func envInt(name string, def int64) int64 {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			return n
		}
	}
	return def
}

func readParams() params {
	p := params{
		seed:       envInt("CDC_SEED", time.Now().UnixNano()%1_000_000_000),
		streams:    int(envInt("CDC_STREAMS", 2000)),
		total:      int(envInt("CDC_TOTAL_STREAMS", 0)),
		kills:      int(envInt("CDC_KILLS", 3)),
		partitions: int(envInt("CDC_PARTITIONS", 3)),
		shrink:     time.Duration(envInt("CDC_SHRINK_SECONDS", 300)) * time.Second,
		bare:       -1,
	}
	if p.total > 0 && p.total < p.streams {
		p.streams = p.total
	}
	p.total = max(p.total, p.streams)
	if v := os.Getenv("CDC_BARE_TOMBSTONES"); v != "" {
		p.bare, _ = strconv.ParseFloat(v, 64)
	}
	return p
}

// harness drives one worker on one topic: produce, kill/restart, wait until the group committed everything.
type harness struct {
	t      *testing.T
	addr   string
	topic  string
	group  string
	parts  int
	args   []string
	prod   sarama.SyncProducer
	admin  sarama.ClusterAdmin
	next   map[int32]int64
	worker *worker
	total  int64
}

func newHarness(t *testing.T, sink sinkUnderTest, p params, rng *rand.Rand) *harness {
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "cdc-model")
	kafkatest.CreateTopic(t, addr, topic, int32(p.partitions), nil)
	dir := t.TempDir()
	wprops := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(wprops, []byte(fmt.Sprintf(`bootstrap.servers=%s
listeners=http://127.0.0.1:0
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.flush.interval.ms=%d
`, addr, 100+rng.Intn(300))), 0o644))
	props := sink.props(topic, rng)
	cprops := filepath.Join(dir, "connector.properties")
	require.NoError(t, os.WriteFile(cprops, []byte(props), 0o644))
	name := ""
	for _, l := range strings.Split(props, "\n") {
		if v, ok := strings.CutPrefix(l, "name="); ok {
			name = v
		}
	}
	cfg := kafkatest.NewConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Flush.MaxMessages = 5000
	prod, err := sarama.NewSyncProducer([]string{addr}, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	admin, err := sarama.NewClusterAdmin([]string{addr}, kafkatest.NewConfig())
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	return &harness{t: t, addr: addr, topic: topic, group: "connect-" + name, parts: p.partitions,
		args: []string{"standalone", wprops, cprops}, prod: prod, admin: admin, next: map[int32]int64{}}
}

func (h *harness) start() { h.worker = startWorker(h.t, h.args...) }

func (h *harness) restart() {
	h.worker.kill()
	h.start()
}

// record renders event e of stream s.
func (h *harness) record(s cdcstream.Stream, e cdcstream.Event) *sarama.ProducerMessage {
	k, v := cdcstream.Debezium(s, e)
	m := &sarama.ProducerMessage{Topic: h.topic, Partition: cdcstream.Partition(s.FullKey(e), h.parts), Key: sarama.ByteEncoder(k)}
	if v != nil {
		m.Value = sarama.ByteEncoder(v)
	}
	return m
}

func (h *harness) produce(msgs []*sarama.ProducerMessage) {
	if len(msgs) == 0 {
		return
	}
	require.NoError(h.t, h.prod.SendMessages(msgs))
	for _, m := range msgs {
		if m.Offset+1 > h.next[m.Partition] {
			h.next[m.Partition] = m.Offset + 1
		}
	}
	h.total += int64(len(msgs))
}

// committed returns the group's committed offsets; a transient error (coordinator loading, moving) is
// an empty answer.
func (h *harness) committed() map[int32]int64 {
	parts := make([]int32, h.parts)
	for i := range parts {
		parts[i] = int32(i)
	}
	out := map[int32]int64{}
	resp, err := h.admin.ListConsumerGroupOffsets(h.group, map[string][]int32{h.topic: parts})
	if err != nil {
		return out
	}
	for _, p := range parts {
		if b := resp.GetBlock(h.topic, p); b != nil && b.Err == sarama.ErrNoError && b.Offset >= 0 {
			out[p] = b.Offset
		}
	}
	return out
}

// caughtUp reports whether the connector's group has committed every produced record.
func (h *harness) caughtUp() bool {
	c := h.committed()
	for p, n := range h.next {
		if c[p] < n {
			return false
		}
	}
	return true
}

func (h *harness) waitCaughtUp(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for !h.caughtUp() {
		if time.Now().After(deadline) {
			h.t.Fatalf("the connector did not commit every record within %v: committed %v, produced %v",
				timeout, h.committed(), h.next)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// diff compares what a view holds for one stream (rendered keys) with the model; "" when equal.
func diff(s cdcstream.Stream, want map[string]cdcstream.Row, got map[string][]cdcstream.Row) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range want {
		keys[s.Prefix+"-"+k] = true
	}
	for k := range got {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, full := range sorted {
		w, live := want[strings.TrimPrefix(full, s.Prefix+"-")]
		w.ID = full
		g := got[full]
		switch {
		case !live && len(g) > 0:
			fmt.Fprintf(&b, "    %q: want absent (deleted or never created), got %v\n", full, g)
		case live && len(g) == 0:
			fmt.Fprintf(&b, "    %q: want %v, got absent\n", full, w)
		case live && (len(g) > 1 || !rowEqual(w, g[0])):
			fmt.Fprintf(&b, "    %q: want %v, got %v\n", full, w, g)
		}
	}
	return b.String()
}

func rowEqual(a, b cdcstream.Row) bool {
	if a.ID != b.ID || a.Name != b.Name || a.Qty != b.Qty || a.UpdatedAt != b.UpdatedAt || (a.Email == nil) != (b.Email == nil) {
		return false
	}
	return a.Email == nil || *a.Email == *b.Email
}

// byPrefix groups a view's rows by stream prefix.
func byPrefix(rows map[string][]cdcstream.Row) map[string]map[string][]cdcstream.Row {
	out := map[string]map[string][]cdcstream.Row{}
	for k, r := range rows {
		p := cdcstream.PrefixOf(k)
		if out[p] == nil {
			out[p] = map[string][]cdcstream.Row{}
		}
		out[p][k] = r
	}
	return out
}

// runModel is the model test of one sink: rounds of CDC_STREAMS random streams (round r from seed
// CDC_SEED+r) through one worker, topic and set of tables, every stream so far checked against the model
// after each round; then the first failing stream of each view is shrunk.
func runModel(t *testing.T, sink sinkUnderTest) {
	p := readParams()
	if p.bare < 0 {
		p.bare = sink.bareTombstones
	}
	cfg := cdcstream.DefaultConfig()
	cfg.BareTombstone = p.bare
	rounds := max(1, (p.total+p.streams-1)/p.streams)
	t.Logf("CDC model test %s: CDC_SEED=%d CDC_STREAMS=%d (x %d rounds) CDC_KILLS=%d CDC_PARTITIONS=%d CDC_BARE_TOMBSTONES=%v",
		sink.name, p.seed, p.streams, rounds, p.kills, p.partitions, p.bare)
	h := newHarness(t, sink, p, rand.New(rand.NewSource(p.seed)))
	connectdBinary(t)
	t0 := time.Now()
	h.start()
	var all []cdcstream.Stream
	var events, kills int
	// the known cases first, with their commit boundaries
	var phases [][]int
	for i, c := range cdcstream.KnownCases(p.bare > 0) {
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
		if !checkViews(t, h, sink, all, p, seed) {
			t.Errorf("%s: failed in round %d: reproduce it with CDC_SEED=%d CDC_STREAMS=%d", sink.name, r, seed, p.streams)
			return
		}
	}
	t.Logf("%s: CLEAN seed=%d streams=%d events=%d kills=%d in %v", sink.name, p.seed, len(all), events, kills,
		time.Since(t0).Round(time.Second))
}

// deliver produces the streams interleaved, in waves of random size; after each wave it waits for a
// commit, pauses or goes on, and SIGKILLs and restarts the worker after `kills` random waves. It returns
// once the connector has committed everything, with the number of kills.
func (h *harness) deliver(streams []cdcstream.Stream, rng *rand.Rand, kills int) int {
	order := cdcstream.Interleave(rng, streams)
	waves := 12 + len(order)/10000
	cuts := []int{0, len(order)}
	for i := 1; i < waves; i++ {
		cuts = append(cuts, rng.Intn(len(order)+1))
	}
	slices.Sort(cuts)
	killAfter := map[int]bool{}
	for len(killAfter) < min(kills, waves-1) {
		killAfter[rng.Intn(waves-1)] = true
	}
	for w := 0; w < waves; w++ {
		var msgs []*sarama.ProducerMessage
		for _, tg := range order[cuts[w]:cuts[w+1]] {
			s := streams[tg.Stream]
			msgs = append(msgs, h.record(s, s.Events[tg.Index]))
		}
		h.produce(msgs)
		switch rng.Intn(3) {
		case 0:
			h.waitCaughtUp(3 * time.Minute)
		case 1:
			time.Sleep(time.Duration(rng.Intn(500)) * time.Millisecond)
		}
		if killAfter[w] {
			time.Sleep(time.Duration(rng.Intn(1500)) * time.Millisecond)
			h.restart()
		}
	}
	h.waitCaughtUp(5 * time.Minute)
	return len(killAfter)
}

// deliverPhased produces streams phase by phase (phases[i][j] is the phase of event j of stream i) and
// waits after each phase until the connector has committed it, so that a phase change is a commit boundary.
func (h *harness) deliverPhased(streams []cdcstream.Stream, phases [][]int) {
	last := 0
	for _, p := range phases {
		if len(p) > 0 {
			last = max(last, slices.Max(p))
		}
	}
	for phase := 0; phase <= last; phase++ {
		var msgs []*sarama.ProducerMessage
		for i, s := range streams {
			for j, e := range s.Events {
				if phases[i][j] == phase {
					msgs = append(msgs, h.record(s, e))
				}
			}
		}
		h.produce(msgs)
		h.waitCaughtUp(2 * time.Minute)
	}
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
			d := diff(s, keyed(s, cdcstream.State(s.Events, v.version)), got[s.Prefix])
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
		shrinkAndReport(t, h, v, s, seed, deadline)
	}
	return ok
}

// keyed gives the model's rows of a stream their rendered ids.
func keyed(s cdcstream.Stream, state map[string]cdcstream.Row) map[string]cdcstream.Row {
	out := make(map[string]cdcstream.Row, len(state))
	for k, r := range state {
		r.ID = s.Prefix + "-" + k
		out[k] = r
	}
	return out
}

// shrinkAndReport minimises a failing stream through the same worker, topic and tables: each round
// produces every trial (its own key prefix) phase by phase, waiting for the connector to commit between
// phases, then reads the view once.
func shrinkAndReport(t *testing.T, h *harness, v view, s cdcstream.Stream, seed int64, deadline time.Time) {
	round := 0
	run := func(trials []cdcstream.Trial) ([]bool, error) {
		round++
		streams := make([]cdcstream.Stream, len(trials))
		for i, tr := range trials {
			streams[i] = cdcstream.Stream{Prefix: fmt.Sprintf("%sx%dt%d", s.Prefix, round, i), Events: tr.Events}
		}
		phases := make([][]int, len(trials))
		for i, tr := range trials {
			phases[i] = tr.Phases
		}
		h.deliverPhased(streams, phases)
		got := byPrefix(v.read(t))
		out := make([]bool, len(trials))
		for i, st := range streams {
			out[i] = diff(st, keyed(st, cdcstream.State(st.Events, v.version)), got[st.Prefix]) != ""
		}
		return out, nil
	}
	sh := &cdcstream.Shrinker{Run: run, Rand: rand.New(rand.NewSource(seed)), Random: 2,
		Continue: func() bool { return time.Now().Before(deadline) }}
	t0 := time.Now()
	m, ok, err := sh.Shrink(s.Events)
	stopped := ""
	if sh.Stopped {
		stopped = ", stopped early by CDC_SHRINK_SECONDS"
	}
	require.NoError(t, err)
	if !ok && sh.Stopped {
		t.Errorf("%s: stream %s (CDC_SEED=%d) not shrunk: the shrinking budget (CDC_SHRINK_SECONDS) is spent", v.name, s.Prefix, seed)
		return
	}
	if !ok {
		t.Errorf("%s: stream %s (CDC_SEED=%d) did not fail again without SIGKILLs under %d schedules tried; the failure needs a crash "+
			"or a timing the reruns did not hit. The stream:\n%s", v.name, s.Prefix, seed, 3+sh.Random, cdcstream.Format(s, nil))
		return
	}
	// how reliably the minimal stream fails: three more copies in one run
	again, err := run([]cdcstream.Trial{m, m, m})
	require.NoError(t, err)
	fails := 0
	for _, f := range again {
		if f {
			fails++
		}
	}
	min := cdcstream.Stream{Prefix: s.Prefix, Events: m.Events}
	want := keyed(min, cdcstream.State(m.Events, v.version))
	var wantDesc []string
	for _, r := range want {
		wantDesc = append(wantDesc, fmt.Sprintf("%q=%v", r.ID, r))
	}
	if len(wantDesc) == 0 {
		wantDesc = []string{"no live key"}
	}
	t.Errorf("%s: CDC_SEED=%d stream %s shrunk from %d to %d events in %d rounds (%v%s); minimal failing stream (%d forced commit boundaries; "+
		"keys get the prefix %s-; failed again in %d of 3 reruns):\n%s  model: %s", v.name, seed, s.Prefix, len(s.Events), len(m.Events), sh.Rounds,
		time.Since(t0).Round(time.Second), stopped, m.Boundaries(), s.Prefix, fails, cdcstream.Format(min, m.Phases), strings.Join(wantDesc, ", "))
}
