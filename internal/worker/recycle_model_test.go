package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/plugintest"
	"github.com/connectd/connectd/internal/worker"
)

// TestSinkTaskRecycleModel checks that a sink task recycles a fetched record only when nothing can read
// its bytes any more. The task's compressed batches are decompressed into buffers of a poisoning pool:
// every buffer given back is overwritten with a pattern and is the next one handed out, so a record
// recycled too early shows the pattern or another batch's bytes wherever it is still read.
//
// A round picks the converters (StringConverter, JsonConverter, ByteArrayConverter for keys and values,
// the simple or the string header converter), whether the sink takes JSON values unconverted
// (jsonvalue.Value), whether a DLQ with errors.tolerance=all is on (then some values are invalid JSON,
// and the sink reports some records to the errant-record reporter), the compression codec and
// max.poll.records, and runs random operations: produce records of random sizes to a partition, fail the
// next puts retriably, pause, resume or rewind a partition from the task at its next put, fail the next
// flush (the task rewinds to the committed offsets), wait. It checks:
//   - each record a put delivers carries the key, value and headers produced at its offset, as the
//     round's converters convert them (jsonvalue.Value: the bytes);
//   - at the end, the converted keys, values and headers the sink kept from every put (not the
//     jsonvalue.Values, which are the task's only until Put returns) are still those;
//   - every record a DLQ received carries the key and value produced at its offset;
//   - every record was delivered, no task failed, a task with a DLQ or a converter not known to copy
//     never took a buffer from the pool, and the rounds of the other tasks gave buffers back.
//
// The seed is logged; RECYCLE_MODEL_SEED=<seed> replays a run's operations (not its timing), and
// RECYCLE_MODEL_ROUNDS=<n> sets the rounds (8). A failing round is shrunk to its shortest failing
// prefix of operations (RECYCLE_MODEL_SHRINK=0: not shrunk).
func TestSinkTaskRecycleModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("RECYCLE_MODEL_SEED"); v != "" {
		var err error
		seed, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "RECYCLE_MODEL_SEED")
	}
	rounds := 8
	if testing.Short() {
		rounds = 2
	}
	rounds = envInt(t, "RECYCLE_MODEL_ROUNDS", rounds)
	t.Logf("RECYCLE_MODEL_SEED=%d", seed)
	recycling, recycled := 0, int64(0)
	defer func() {
		if !t.Failed() && recycling > 0 && recycled == 0 {
			t.Errorf("RECYCLE_MODEL_SEED=%d: no buffer came back to the pool in %d rounds whose task recycles", seed, recycling)
		}
	}()
	for round := range rounds {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		cfg := randomRecycleConfig(rng)
		ops := randomRecycleOps(rng, cfg, 12+rng.IntN(13))
		res := runRecycleRound(t, cfg, ops, seed+uint64(round))
		if cfg.recycles() {
			recycling, recycled = recycling+1, recycled+res.recycled
		}
		if len(res.problems) == 0 {
			t.Logf("round %d (%s): %d ops, %s\nops: %v", round, cfg, len(ops), res.stats, ops)
			continue
		}
		// the shortest failing prefix, assuming a prefix of a failing run fails from some length on
		lo, hi, worst := 0, len(ops), res
		for lo+1 < hi && os.Getenv("RECYCLE_MODEL_SHRINK") != "0" {
			mid := (lo + hi) / 2
			if r := runRecycleRound(t, cfg, ops[:mid], seed+uint64(round)); len(r.problems) > 0 {
				hi, worst = mid, r
			} else {
				lo = mid
			}
		}
		t.Fatalf("RECYCLE_MODEL_SEED=%d round %d (%s): a record's bytes changed under the task\nops (%d): %v\n"+
			"shortest failing prefix (%d ops): %v\nits problems:\n%s",
			seed, round, cfg, len(ops), ops, hi, ops[:hi], strings.Join(first(worst.problems, 20), "\n"))
	}
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

const (
	recycleSinkClass  = "io.connectd.test.RecycleModelSinkConnector"
	recycleTopic      = "recycle"
	recyclePartitions = 3

	classString    = "org.apache.kafka.connect.storage.StringConverter"
	classJSON      = "org.apache.kafka.connect.json.JsonConverter"
	classByteArray = "org.apache.kafka.connect.converters.ByteArrayConverter"
	classSimpleHdr = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
)

var recycleSinkPlugin = connect.Plugin{Class: recycleSinkClass, Type: connect.PluginSink, New: func() any { return &recycleConnector{} }}

type recycleConfig struct {
	keyConv, valConv, hdrConv string
	jsonValues                bool // the sink takes JSON object values unconverted
	dlq                       bool // errors.tolerance=all and a DLQ
	codec                     string
	maxPoll                   int
}

func (c recycleConfig) String() string {
	short := func(class string) string { return class[strings.LastIndex(class, ".")+1:] }
	return fmt.Sprintf("key %s, value %s, header %s, json values %v, dlq %v, %s, max.poll.records %d",
		short(c.keyConv), short(c.valConv), short(c.hdrConv), c.jsonValues, c.dlq, c.codec, c.maxPoll)
}

// recycles says whether the task is expected to recycle records.
func (c recycleConfig) recycles() bool {
	return !c.dlq && c.keyConv != classByteArray && c.valConv != classByteArray
}

func randomRecycleConfig(rng *rand.Rand) recycleConfig {
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	return recycleConfig{
		// mostly tasks that recycle
		keyConv:    pick(classString, classString, classString, classJSON, classJSON, classByteArray),
		valConv:    pick(classJSON, classJSON, classJSON, classString, classString, classByteArray),
		hdrConv:    pick(classSimpleHdr, classSimpleHdr, classString),
		jsonValues: rng.IntN(2) == 0,
		dlq:        rng.IntN(6) == 0,
		codec:      pick("lz4", "zstd", "snappy", "gzip"),
		maxPoll:    []int{7, 50, 500}[rng.IntN(3)],
	}
}

type recycleOpKind int

const (
	rOpProduce recycleOpKind = iota
	rOpFailPuts
	rOpPause
	rOpResume
	rOpRewind
	rOpFailFlush
	rOpReport
	rOpWait
)

type recycleOp struct {
	kind recycleOpKind
	p    int32
	n    int // records, failures, records back, milliseconds
	seed uint64
}

func (o recycleOp) String() string {
	switch o.kind {
	case rOpProduce:
		return fmt.Sprintf("produce(p%d,%d)", o.p, o.n)
	case rOpFailPuts:
		return fmt.Sprintf("failPuts(%d)", o.n)
	case rOpPause:
		return fmt.Sprintf("pause(p%d)", o.p)
	case rOpResume:
		return fmt.Sprintf("resume(p%d)", o.p)
	case rOpRewind:
		return fmt.Sprintf("rewind(p%d,-%d)", o.p, o.n)
	case rOpFailFlush:
		return "failFlush"
	case rOpReport:
		return "report"
	default:
		return fmt.Sprintf("wait(%dms)", o.n)
	}
}

func randomRecycleOps(rng *rand.Rand, cfg recycleConfig, n int) []recycleOp {
	var ops []recycleOp
	for range n {
		p := rng.Int32N(recyclePartitions)
		switch k := rng.IntN(20); {
		case k < 8:
			ops = append(ops, recycleOp{kind: rOpProduce, p: p, n: 1 + rng.IntN(300), seed: rng.Uint64()})
		case k < 11:
			ops = append(ops, recycleOp{kind: rOpFailPuts, n: 1 + rng.IntN(4)})
		case k < 12:
			ops = append(ops, recycleOp{kind: rOpPause, p: p})
		case k < 14:
			ops = append(ops, recycleOp{kind: rOpResume, p: p})
		case k < 16:
			ops = append(ops, recycleOp{kind: rOpRewind, p: p, n: 1 + rng.IntN(200)})
		case k < 17:
			ops = append(ops, recycleOp{kind: rOpFailFlush})
		case k < 18 && cfg.dlq:
			ops = append(ops, recycleOp{kind: rOpReport})
		default:
			ops = append(ops, recycleOp{kind: rOpWait, n: 20 + rng.IntN(300)})
		}
	}
	return ops
}

// ---- the produced records and what the round's converters make of them

type recycleProduced struct {
	key, value []byte
	headers    []kgo.RecordHeader
	invalid    bool // not JSON where the value converter wants JSON: the error handler's
	// what the round's converters make of them (nil for invalid)
	wantKey, wantValue connect.SchemaAndValue
	wantHeaders        connect.Headers
}

type recycleConverters struct {
	key, value connect.Converter
	header     connect.HeaderConverter
}

func newRecycleConverters(t testing.TB, cfg recycleConfig) recycleConverters {
	reg := plugintest.Registry()
	var cs recycleConverters
	var err error
	cs.key, err = reg.NewConverter(cfg.keyConv)
	require.NoError(t, err)
	require.NoError(t, cs.key.Configure(map[string]string{"schemas.enable": "false"}, true))
	cs.value, err = reg.NewConverter(cfg.valConv)
	require.NoError(t, err)
	require.NoError(t, cs.value.Configure(map[string]string{"schemas.enable": "false"}, false))
	cs.header, err = reg.NewHeaderConverter(cfg.hdrConv)
	require.NoError(t, err)
	require.NoError(t, cs.header.Configure(map[string]string{}))
	return cs
}

// randomRecord makes record i of a produce op: values of 0 to 4,000 compressible bytes, JSON objects
// where the value converter wants JSON (a few invalid with a DLQ), keys and headers of a few bytes.
func randomRecord(rng *rand.Rand, cfg recycleConfig, p int32, off int64) (*kgo.Record, bool) {
	words := []string{"alpha ", "beta ", "gamma ", "delta ", "eps ", "zeta ", "eta ", "theta ", "7 ", "42 "}
	text := func(n int) string { // compressible by every codec
		b := make([]byte, 0, n+6)
		for len(b) < n {
			b = append(b, words[rng.IntN(len(words))]...)
		}
		return string(b[:n])
	}
	r := &kgo.Record{Topic: recycleTopic, Partition: p}
	switch rng.IntN(4) {
	case 0: // no key
	default:
		if cfg.keyConv == classJSON {
			r.Key = []byte(strconv.Quote(fmt.Sprintf("k%d-%d-%s", p, off, text(rng.IntN(30)))))
		} else {
			r.Key = []byte(fmt.Sprintf("k%d-%d-%s", p, off, text(rng.IntN(30))))
		}
	}
	size := rng.IntN(4000)
	invalid := false
	if cfg.valConv == classJSON {
		if cfg.dlq && rng.IntN(20) == 0 {
			r.Value, invalid = []byte(fmt.Sprintf("not json %d %d {", p, off)), true
		} else {
			r.Value = fmt.Appendf(nil, `{"p":%d,"o":%d,"n":%d.5,"s":%q}`, p, off, rng.IntN(1e6), text(size))
		}
	} else {
		r.Value = fmt.Appendf(nil, "v%d-%d-%s", p, off, text(size))
	}
	for i := range rng.IntN(3) {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: fmt.Sprintf("h%d", i), Value: []byte(text(1 + rng.IntN(40)))})
	}
	return r, invalid
}

func (cs recycleConverters) expect(t testing.TB, r *kgo.Record, invalid bool) recycleProduced {
	pr := recycleProduced{key: bytes.Clone(r.Key), value: bytes.Clone(r.Value), headers: slices.Clone(r.Headers), invalid: invalid}
	if invalid {
		return pr
	}
	for _, h := range r.Headers {
		sv, err := cs.header.ToConnectHeader(recycleTopic, h.Key, bytes.Clone(h.Value))
		require.NoError(t, err)
		pr.wantHeaders = append(pr.wantHeaders, connect.Header{Key: h.Key, Schema: sv.Schema, Value: sv.Value})
	}
	var err error
	pr.wantKey, err = cs.key.ToConnectData(recycleTopic, pr.wantHeaders, bytes.Clone(r.Key))
	require.NoError(t, err)
	pr.wantValue, err = cs.value.ToConnectData(recycleTopic, pr.wantHeaders, bytes.Clone(r.Value))
	require.NoError(t, err)
	return pr
}

// ---- the poisoning pool

// poisonPool is a kgo.PoolDecompressBytes that overwrites every buffer given back with a pattern and
// hands the last one given back out first.
type poisonPool struct {
	mu       sync.Mutex
	free     [][]byte
	gets     atomic.Int64
	recycled atomic.Int64
}

func (p *poisonPool) GetDecompressBytes(compressed []byte, _ kgo.CompressionCodecType) []byte {
	p.gets.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, 4*len(compressed))
}

func (p *poisonPool) PutDecompressBytes(b []byte) {
	p.recycled.Add(1)
	b = b[:cap(b)]
	for i := range b {
		b[i] = "\xde\xad\xbe\xef"[i%4]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, b)
}

// ---- the sink

var recycleRounds sync.Map // sink.id → *recycleRound

type recycleConnector struct{ props map[string]string }

func (c *recycleConnector) Version() string                     { return "1" }
func (c *recycleConnector) Initialize(connect.ConnectorContext) {}
func (c *recycleConnector) ConfigDef() *connect.ConfigDef       { return &connect.ConfigDef{} }
func (c *recycleConnector) Start(props map[string]string) error { c.props = props; return nil }
func (c *recycleConnector) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{c.props}, nil
}
func (c *recycleConnector) Stop() error               { return nil }
func (c *recycleConnector) NewTask() connect.SinkTask { return &recycleTask{} }

type recycleTask struct {
	ctx connect.SinkTaskContext
	r   *recycleRound
}

// recycleJSONTask is recycleTask taking JSON object values unconverted.
type recycleJSONTask struct{ recycleTask }

func (t *recycleJSONTask) AcceptsJSONValues() bool { return true }

func (t *recycleTask) Version() string                        { return "1" }
func (t *recycleTask) Initialize(ctx connect.SinkTaskContext) { t.ctx = ctx }
func (t *recycleTask) Start(props map[string]string) error {
	r, ok := recycleRounds.Load(props["sink.id"])
	if !ok {
		return errors.New("no round")
	}
	t.r = r.(*recycleRound)
	return nil
}
func (t *recycleTask) Open([]connect.TopicPartition) error  { return nil }
func (t *recycleTask) Close([]connect.TopicPartition) error { return nil }
func (t *recycleTask) Stop() error                          { return nil }
func (t *recycleTask) Put(ctx context.Context, recs []*connect.SinkRecord) error {
	return t.r.put(ctx, t.ctx, recs)
}
func (t *recycleTask) Flush(context.Context, connect.ConsumedOffsets) error {
	r := t.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failFlush {
		r.failFlush = false
		return errors.New("recycle model: flush failed")
	}
	return nil
}

// kept is what the sink keeps of a delivered record past Put: its converted key, value and headers.
type kept struct {
	p       int32
	off     int64
	key     any
	value   any
	headers connect.Headers
}

type recycleRound struct {
	cfg recycleConfig

	mu        sync.Mutex
	produced  [recyclePartitions][]recycleProduced
	delivered [recyclePartitions]map[int64]bool
	pos       [recyclePartitions]int64 // after the last record put: where a rewind goes back from
	kept      []kept
	problems  []string
	// actions for the next put
	failPuts  int
	failFlush bool
	pause     []int32
	resume    []int32
	rewind    map[int32]int
	report    bool
	puts      int
	failed    int // puts failed retriably
	reported  int
}

func (r *recycleRound) problem(format string, args ...any) {
	if len(r.problems) < 200 {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

func (r *recycleRound) put(ctx context.Context, tc connect.SinkTaskContext, recs []*connect.SinkRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.puts++
	for _, rec := range recs {
		p, off := rec.OriginalPartition, rec.OriginalOffset
		if p < 0 || p >= recyclePartitions || off < 0 || off >= int64(len(r.produced[p])) {
			r.problem("put: a record of p%d at %d, which was not produced", p, off)
			continue
		}
		want := &r.produced[p][off]
		if want.invalid {
			r.problem("put: p%d-%d is not JSON, the converter should have failed it", p, off)
			continue
		}
		r.delivered[p][off] = true
		r.pos[p] = off + 1
		if jv, ok := rec.Value.(*jsonvalue.Value); ok {
			if !bytes.Equal(jv.Bytes, want.value) {
				r.problem("put: the JSON value of p%d-%d is %q, produced %q", p, off, clip(jv.Bytes), clip(want.value))
			}
		} else if !reflect.DeepEqual(rec.Value, want.wantValue.Value) {
			r.problem("put: the value of p%d-%d is %s, produced %s", p, off, clipAny(rec.Value), clipAny(want.wantValue.Value))
		}
		if !reflect.DeepEqual(rec.Key, want.wantKey.Value) {
			r.problem("put: the key of p%d-%d is %s, produced %s", p, off, clipAny(rec.Key), clipAny(want.wantKey.Value))
		}
		if !sameHeaders(rec.Headers, want.wantHeaders) {
			r.problem("put: the headers of p%d-%d are %v, produced %v", p, off, rec.Headers, want.wantHeaders)
		}
		k := kept{p: p, off: off, key: rec.Key, headers: rec.Headers}
		if _, ok := rec.Value.(*jsonvalue.Value); !ok {
			k.value = rec.Value
		}
		r.kept = append(r.kept, k)
	}
	if r.report && len(recs) > 0 {
		r.report = false
		if rep := tc.ErrantRecordReporter(); rep != nil {
			if err := rep.Report(ctx, recs[0], errors.New("recycle model: reported")); err != nil {
				r.problem("report: %v", err)
			}
			r.reported++
		}
	}
	if len(r.pause) > 0 {
		tc.Pause(tps(r.pause)...)
		r.pause = nil
	}
	if len(r.resume) > 0 {
		tc.Resume(tps(r.resume)...)
		r.resume = nil
	}
	if len(r.rewind) > 0 {
		seeks := map[connect.TopicPartition]int64{}
		for p, back := range r.rewind {
			seeks[connect.TopicPartition{Topic: recycleTopic, Partition: p}] = max(r.pos[p]-int64(back), 0)
		}
		tc.Offset(seeks)
		clear(r.rewind)
	}
	if r.failPuts > 0 && len(recs) > 0 {
		r.failPuts--
		r.failed++
		return connect.Retriable(errors.New("recycle model: retriable put failure"))
	}
	return nil
}

func tps(ps []int32) []connect.TopicPartition {
	out := make([]connect.TopicPartition, len(ps))
	for i, p := range ps {
		out[i] = connect.TopicPartition{Topic: recycleTopic, Partition: p}
	}
	return out
}

func sameHeaders(got, want connect.Headers) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Key != want[i].Key || !reflect.DeepEqual(got[i].Value, want[i].Value) {
			return false
		}
	}
	return true
}

func clip(b []byte) []byte {
	if len(b) > 60 {
		return b[:60]
	}
	return b
}

func clipAny(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// ---- a round

type recycleResult struct {
	problems []string
	recycled int64 // buffers given back to the pool
	stats    string
}

func runRecycleRound(t *testing.T, cfg recycleConfig, ops []recycleOp, seed uint64) recycleResult {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(recyclePartitions, recycleTopic))
	require.NoError(t, err)
	defer cluster.Close()
	addr := cluster.ListenAddrs()[0]
	codec := map[string]kgo.CompressionCodec{"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
		"snappy": kgo.SnappyCompression(), "gzip": kgo.GzipCompression()}[cfg.codec]
	compressed := &compressedBatches{}
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(5*time.Millisecond), kgo.WithHooks(compressed),
		kgo.ProducerBatchMaxBytes(16<<10)) // many batches: many buffers given back and handed out again
	require.NoError(t, err)
	defer producer.Close()

	pool := &poisonPool{}
	restore := worker.SetDecompressPool(func() kgo.PoolDecompressBytes { return pool })
	defer restore()

	r := &recycleRound{cfg: cfg, rewind: map[int32]int{}}
	for p := range r.delivered {
		r.delivered[p] = map[int64]bool{}
	}
	sinkID := fmt.Sprintf("recycle-%d-%d", seed, time.Now().UnixNano())
	recycleRounds.Store(sinkID, r)
	defer recycleRounds.Delete(sinkID)
	convs := newRecycleConverters(t, cfg)

	wprops := map[string]string{
		"bootstrap.servers":                 addr,
		"key.converter":                     cfg.keyConv,
		"key.converter.schemas.enable":      "false",
		"value.converter":                   cfg.valConv,
		"value.converter.schemas.enable":    "false",
		"header.converter":                  cfg.hdrConv,
		"offset.flush.interval.ms":          "150",
		"task.shutdown.graceful.timeout.ms": "10000",
		"consumer.max.poll.records":         strconv.Itoa(cfg.maxPoll),
		"consumer.fetch.max.wait.ms":        "50",
		"consumer.heartbeat.interval.ms":    "100",
	}
	wcfg, err := worker.ParseConfig(wprops)
	require.NoError(t, err)
	states := &taskStates{}
	w := worker.New(wcfg, plugintest.Registry(recycleSinkPlugin, recycleJSONSinkPlugin), states)
	conn := "recycle-" + sinkID
	class := recycleSinkClass
	if cfg.jsonValues {
		class = recycleJSONSinkClass
	}
	props := map[string]string{"name": conn, "connector.class": class, "tasks.max": "1", "topics": recycleTopic, "sink.id": sinkID}
	dlqTopic := "recycle-dlq"
	if cfg.dlq {
		props["errors.tolerance"] = "all"
		props["errors.deadletterqueue.topic.name"] = dlqTopic
		props["errors.deadletterqueue.topic.replication.factor"] = "1"
		props["errors.deadletterqueue.context.headers.enable"] = "true"
	}
	id := state.TaskID{Connector: conn}
	require.NoError(t, w.StartTask(id, props, props, state.Started))
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			w.Stop()
		}
	}
	defer stop()

	rng := rand.New(rand.NewPCG(seed, 1))
	for _, op := range ops {
		switch op.kind {
		case rOpProduce:
			orng := rand.New(rand.NewPCG(op.seed, 2))
			r.mu.Lock()
			base := int64(len(r.produced[op.p]))
			var recs []*kgo.Record
			for i := range op.n {
				rec, invalid := randomRecord(orng, cfg, op.p, base+int64(i))
				r.produced[op.p] = append(r.produced[op.p], convs.expect(t, rec, invalid))
				recs = append(recs, rec)
			}
			r.mu.Unlock()
			require.NoError(t, producer.ProduceSync(context.Background(), recs...).FirstErr())
		case rOpFailPuts:
			r.mu.Lock()
			r.failPuts = min(r.failPuts+op.n, 4) // consecutive failures back off up to 10 s each
			r.mu.Unlock()
		case rOpPause:
			r.mu.Lock()
			r.pause = append(r.pause, op.p)
			r.mu.Unlock()
		case rOpResume:
			r.mu.Lock()
			r.resume = append(r.resume, op.p)
			r.mu.Unlock()
		case rOpRewind:
			r.mu.Lock()
			r.rewind[op.p] = op.n
			r.mu.Unlock()
		case rOpFailFlush:
			r.mu.Lock()
			r.failFlush = true
			r.mu.Unlock()
		case rOpReport:
			r.mu.Lock()
			r.report = true
			r.mu.Unlock()
		case rOpWait:
			time.Sleep(time.Duration(op.n) * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
	}
	// the end: every partition resumed, every record delivered
	r.mu.Lock()
	r.resume = []int32{0, 1, 2}
	r.mu.Unlock()
	complete := func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.resume) > 0 || len(r.pause) > 0 || len(r.rewind) > 0 {
			return false
		}
		for p := range r.produced {
			for off, pr := range r.produced[p] {
				if !pr.invalid && !r.delivered[p][int64(off)] {
					return false
				}
			}
		}
		return true
	}
	deadline := time.Now().Add(60 * time.Second)
	for !complete() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stop()

	r.mu.Lock()
	defer r.mu.Unlock()
	problems := slices.Clone(r.problems)
	missing := 0
	for p := range r.produced {
		for off, pr := range r.produced[p] {
			if !pr.invalid && !r.delivered[p][int64(off)] {
				missing++
			}
		}
	}
	if missing > 0 {
		problems = append(problems, fmt.Sprintf("%d records were never delivered", missing))
	}
	for _, k := range r.kept {
		want := &r.produced[k.p][k.off]
		if !reflect.DeepEqual(k.key, want.wantKey.Value) {
			problems = append(problems, fmt.Sprintf("kept: the key of p%d-%d became %s, produced %s", k.p, k.off, clipAny(k.key), clipAny(want.wantKey.Value)))
		}
		if k.value != nil && !reflect.DeepEqual(k.value, want.wantValue.Value) {
			problems = append(problems, fmt.Sprintf("kept: the value of p%d-%d became %s, produced %s", k.p, k.off, clipAny(k.value), clipAny(want.wantValue.Value)))
		}
		if !sameHeaders(k.headers, want.wantHeaders) {
			problems = append(problems, fmt.Sprintf("kept: the headers of p%d-%d became %v, produced %v", k.p, k.off, k.headers, want.wantHeaders))
		}
		if len(problems) > 200 {
			break
		}
	}
	if slices.Contains(states.of(id), state.Failed) {
		problems = append(problems, fmt.Sprintf("the task failed: states %v", states.of(id)))
	}
	dlqd := 0
	if cfg.dlq {
		dlqd, problems = checkRecycleDLQ(t, addr, dlqTopic, &r.produced, problems)
	}
	if cfg.recycles() && pool.gets.Load() < compressed.n.Load() {
		problems = append(problems, fmt.Sprintf("%d compressed batches were produced, %d decompressed into the pool", compressed.n.Load(), pool.gets.Load()))
	}
	if !cfg.recycles() && pool.gets.Load() > 0 {
		problems = append(problems, fmt.Sprintf("a task that must not recycle decompressed %d batches into the pool", pool.gets.Load()))
	}
	return recycleResult{problems: problems, recycled: pool.recycled.Load(), stats: fmt.Sprintf("%d puts (%d failed), %d records delivered, %d compressed batches, %d buffers from the pool, %d given back, %d in the DLQ",
		r.puts, r.failed, len(r.kept), compressed.n.Load(), pool.gets.Load(), pool.recycled.Load(), dlqd)}
}

// compressedBatches counts the compressed batches a producer wrote.
type compressedBatches struct{ n atomic.Int64 }

func (c *compressedBatches) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	if m.CompressionType != 0 {
		c.n.Add(1)
	}
}

// checkRecycleDLQ reads the DLQ and checks each record's key and value against what was produced at
// its original offset.
func checkRecycleDLQ(t *testing.T, addr, topic string, produced *[recyclePartitions][]recycleProduced, problems []string) (int, []string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n := 0
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(rec *kgo.Record) {
			n++
			var p, off int64 = -1, -1
			for _, h := range rec.Headers {
				switch h.Key {
				case worker.HeaderPartition:
					p, _ = strconv.ParseInt(string(h.Value), 10, 32)
				case worker.HeaderOffset:
					off, _ = strconv.ParseInt(string(h.Value), 10, 64)
				}
			}
			if p < 0 || p >= recyclePartitions || off < 0 || off >= int64(len(produced[p])) {
				problems = append(problems, fmt.Sprintf("dlq: a record of p%d at %d, which was not produced", p, off))
				return
			}
			want := &produced[p][off]
			if !bytes.Equal(rec.Value, want.value) || !bytes.Equal(rec.Key, want.key) {
				problems = append(problems, fmt.Sprintf("dlq: p%d-%d is %q / %q, produced %q / %q", p, off, clip(rec.Key), clip(rec.Value), clip(want.key), clip(want.value)))
			}
		})
	}
	return n, problems
}

const recycleJSONSinkClass = "io.connectd.test.RecycleModelJSONSinkConnector"

var recycleJSONSinkPlugin = connect.Plugin{Class: recycleJSONSinkClass, Type: connect.PluginSink, New: func() any { return &recycleJSONConnector{} }}

type recycleJSONConnector struct{ recycleConnector }

func (c *recycleJSONConnector) NewTask() connect.SinkTask { return &recycleJSONTask{} }
