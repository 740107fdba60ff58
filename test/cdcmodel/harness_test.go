package cdcmodel

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// harness drives one worker on one topic: produce, kill/restart, wait until the group committed everything.
type harness struct {
	t      *testing.T
	addr   string
	topic  string
	group  string
	parts  int
	args   []string
	admin  *kadm.Client
	next   map[int32]int64
	worker *workerproc.Proc
	total  int64 // records produced that reach the sink

	// with skipped tails: every partition's waves end with records the sink never gets
	skips     bool
	rng       *rand.Rand
	name      string // the connector
	cprops    string // the connector's properties file
	props     string // the sink's properties, without the error handling
	dlq       bool   // tolerated records go to dlqTopic; each restart switches it
	dlqTopic  string
	rest      string // the worker's REST URL
	skipSeq   int
	rejected  map[int32]map[int64]bool // offsets of values the converter rejects
	dlqRounds int                      // restarts that dead-lettered
}

// skippedTailProps drop the stream's tombstones (Debezium's usual filter) and tolerate the values the
// converter rejects; restarts switch a dead letter queue for them on and off.
const skippedTailProps = `transforms=dropTombstones
transforms.dropTombstones.type=org.apache.kafka.connect.transforms.Filter
transforms.dropTombstones.predicate=isTombstone
predicates=isTombstone
predicates.isTombstone.type=org.apache.kafka.connect.transforms.predicates.RecordIsTombstone
errors.tolerance=all
`

func newHarness(t *testing.T, sink sinkUnderTest, p params, rng *rand.Rand) *harness {
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "cdc-model")
	kafkatest.CreateTopic(t, addr, topic, int32(p.partitions), nil)
	dir := t.TempDir()
	h := &harness{t: t, addr: addr, topic: topic, parts: p.partitions, next: map[int32]int64{}, skips: p.skippedTails}
	listen := "127.0.0.1:0"
	if h.skips {
		h.rng = rand.New(rand.NewSource(rng.Int63()))
		h.dlq = true // the first run, which delivers the known cases phase by phase, dead-letters
		h.dlqTopic = topic + "-dlq"
		h.rejected = map[int32]map[int64]bool{}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		listen = l.Addr().String()
		require.NoError(t, l.Close())
		h.rest = "http://" + listen
	}
	wprops := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(wprops, []byte(fmt.Sprintf(`bootstrap.servers=%s
listeners=http://%s
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.flush.interval.ms=%d
`, addr, listen, 100+rng.Intn(300))), 0o644))
	h.props = sink.props(topic, rng)
	if h.skips {
		// a group of its own, apart from the same sink's run without skipped tails
		h.props = strings.Replace(h.props, "name=cdc-model-", "name=cdc-model-skipped-tails-", 1)
	}
	h.cprops = filepath.Join(dir, "connector.properties")
	h.writeConnectorProps()
	for _, l := range strings.Split(h.props, "\n") {
		if v, ok := strings.CutPrefix(l, "name="); ok {
			h.name = v
		}
	}
	h.group, h.args, h.admin = "connect-"+h.name, []string{"standalone", wprops, h.cprops}, kafkatest.NewAdmin(t, addr)
	return h
}

func (h *harness) writeConnectorProps() {
	props := h.props
	if h.skips {
		props += skippedTailProps
		if h.dlq {
			props += fmt.Sprintf(`errors.deadletterqueue.topic.name=%s
errors.deadletterqueue.topic.replication.factor=1
errors.deadletterqueue.context.headers.enable=true
`, h.dlqTopic)
		}
	}
	require.NoError(h.t, os.WriteFile(h.cprops, []byte(props), 0o644))
}

func (h *harness) start() {
	if h.dlq {
		h.dlqRounds++
	}
	h.worker = startWorker(h.t, h.args...)
}

// restart SIGKILLs the worker and starts it again; with skipped tails, with the dead letter queue
// switched (what the killed worker consumed but did not commit is read again under the other setting).
func (h *harness) restart() {
	h.worker.Kill()
	if h.skips {
		h.dlq = !h.dlq
		h.writeConnectorProps()
	}
	h.start()
}

// record renders event e of stream s.
func (h *harness) record(s cdcstream.Stream, e cdcstream.Event) *kgo.Record {
	k, v := cdcstream.Debezium(s, e)
	m := &kgo.Record{Topic: h.topic, Partition: cdcstream.Partition(s.FullKey(e), h.parts), Key: k}
	if v != nil {
		m.Value = v
	}
	return m
}

func (h *harness) produce(msgs []*kgo.Record) {
	if len(msgs) == 0 {
		return
	}
	kafkatest.ProducePartitioned(h.t, h.addr, h.topic, msgs...)
	for _, m := range msgs {
		if m.Offset+1 > h.next[m.Partition] {
			h.next[m.Partition] = m.Offset + 1
		}
		if _, rejected := kindOf(m).(rejectedValue); rejected {
			if h.rejected[m.Partition] == nil {
				h.rejected[m.Partition] = map[int64]bool{}
			}
			h.rejected[m.Partition][m.Offset] = true
			continue
		}
		if kindOf(m) == nil && (m.Value != nil || !h.skips) {
			h.total++
		}
	}
}

type (
	rejectedValue struct{} // a record whose value the converter rejects
	droppedRecord struct{} // a record a transformation drops
)

// recordKind keys a produced record's kind (rejectedValue, droppedRecord) in the record's Context; a
// record the sink gets has none.
type recordKind struct{}

func withKind(kind any) context.Context {
	return context.WithValue(context.Background(), recordKind{}, kind)
}

func kindOf(r *kgo.Record) any {
	if r.Context == nil {
		return nil
	}
	return r.Context.Value(recordKind{})
}

// skippedTail returns, for each partition, up to three records the sink never gets (at least one with
// every): tombstones of keys of no stream, which the Filter drops, and values the converter rejects,
// which errors.tolerance=all skips or dead-letters.
func (h *harness) skippedTail(every bool) []*kgo.Record {
	if !h.skips {
		return nil
	}
	var msgs []*kgo.Record
	for p := 0; p < h.parts; p++ {
		n := h.rng.Intn(4)
		if every {
			n = 1 + h.rng.Intn(3)
		}
		for i := 0; i < n; i++ {
			h.skipSeq++
			m := &kgo.Record{Topic: h.topic, Partition: int32(p),
				Key: []byte(fmt.Sprintf(`{"id":"skipped-%d"}`, h.skipSeq)), Context: withKind(droppedRecord{})}
			if h.rng.Intn(2) == 0 {
				m.Value, m.Context = []byte(fmt.Sprintf(`{"op":"c","after":{"id":"skipped-%d"`, h.skipSeq)), withKind(rejectedValue{})
			}
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// checkLagZero checks, with skipped tails, after the group committed every record: the connector's
// offsets (REST) are the end offsets, and the group's lag in /metrics is 0 for every partition.
func (h *harness) checkLagZero() {
	if !h.skips {
		return
	}
	t := h.t
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(h.rest + "/connectors/" + h.name + "/offsets")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		var body struct {
			Offsets []struct {
				Partition struct {
					Topic     string `json:"kafka_topic"`
					Partition int32  `json:"kafka_partition"`
				} `json:"partition"`
				Offset struct {
					Offset int64 `json:"kafka_offset"`
				} `json:"offset"`
			} `json:"offsets"`
		}
		if !assert.NoError(c, json.NewDecoder(resp.Body).Decode(&body)) {
			return
		}
		got := map[int32]int64{}
		for _, o := range body.Offsets {
			got[o.Partition.Partition] = o.Offset.Offset
		}
		assert.Equal(c, h.next, got, "GET /connectors/%s/offsets: the end offsets", h.name)
	}, 30*time.Second, 100*time.Millisecond)
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(h.rest + "/metrics")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		lag := map[string]string{}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if !strings.HasPrefix(l, "connectd_sink_partition_committed_lag_records{") || !strings.Contains(l, `connector="`+h.name+`"`) {
				continue
			}
			labels, value, _ := strings.Cut(l, "} ")
			_, part, _ := strings.Cut(labels, `partition="`)
			part, _, _ = strings.Cut(part, `"`)
			lag[part] = value
		}
		want := map[string]string{}
		for p := 0; p < h.parts; p++ {
			want[fmt.Sprint(p)] = "0"
		}
		assert.Equal(c, want, lag, "connectd_sink_partition_committed_lag_records of %s by partition", h.name)
	}, 30*time.Second, 100*time.Millisecond)
	if t.Failed() {
		t.FailNow()
	}
}

// checkDeadLetters checks, with skipped tails, that the dead letter queue holds rejected values (the first
// run's at least) and nothing else (by their context headers).
func (h *harness) checkDeadLetters() {
	if !h.skips {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs, err := h.admin.ListTopics(ctx)
	require.NoError(h.t, err)
	_, ok := offs[h.dlqTopic]
	require.True(h.t, ok, "dead letter queue %s: the first run had it, and every phase ended with rejected values", h.dlqTopic)
	end := kafkatest.EndOffsets(h.t, h.addr, h.dlqTopic)[0]
	require.Positive(h.t, end, "dead letter queue %s: empty", h.dlqTopic)
	seen := map[string]bool{}
	for _, m := range kafkatest.ReadToEnd(h.t, h.addr, h.dlqTopic, 30*time.Second) {
		if m.Partition != 0 || m.Offset >= end {
			continue
		}
		hs := map[string]string{}
		for _, x := range m.Headers {
			hs[x.Key] = string(x.Value)
		}
		var part int32
		var off int64
		_, err := fmt.Sscan(hs["__connect.errors.partition"]+" "+hs["__connect.errors.offset"], &part, &off)
		require.NoError(h.t, err, "dead letter headers %v", hs)
		require.True(h.t, h.rejected[part][off], "dead letter of partition %d offset %d: not a rejected value", part, off)
		seen[fmt.Sprint(part, "/", off)] = true
	}
	rejected := 0
	for _, m := range h.rejected {
		rejected += len(m)
	}
	h.t.Logf("dead letter queue: %d records, %d distinct, of %d rejected values (%d of the worker's runs had it)", end, len(seen), rejected, h.dlqRounds)
}

// committed returns the group's committed offsets; a transient error (coordinator loading, moving) is
// an empty answer.
func (h *harness) committed() map[int32]int64 {
	parts := make([]int32, h.parts)
	for i := range parts {
		parts[i] = int32(i)
	}
	out := map[int32]int64{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := h.admin.FetchOffsetsForTopics(ctx, h.group, h.topic)
	if err != nil {
		return out
	}
	for _, p := range parts {
		if b, ok := resp.Lookup(h.topic, p); ok && b.Err == nil && b.At >= 0 {
			out[p] = b.At
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
		if h.worker.Crashed() {
			h.t.Fatalf("the worker process ended by itself; its log (tail):\n%s", h.worker.Tail(20000))
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the connector did not commit every record within %v: committed %v, produced %v",
				timeout, h.committed(), h.next)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
		var msgs []*kgo.Record
		for _, tg := range order[cuts[w]:cuts[w+1]] {
			s := streams[tg.Stream]
			msgs = append(msgs, h.record(s, s.Events[tg.Index]))
		}
		msgs = append(msgs, h.skippedTail(w == waves-1)...)
		h.produce(msgs)
		switch rng.Intn(3) {
		case 0:
			h.waitCaughtUp(10 * time.Minute)
		case 1:
			time.Sleep(time.Duration(rng.Intn(500)) * time.Millisecond)
		}
		if killAfter[w] {
			time.Sleep(time.Duration(rng.Intn(1500)) * time.Millisecond)
			h.restart()
		}
	}
	h.waitCaughtUp(15 * time.Minute)
	h.checkLagZero()
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
		var msgs []*kgo.Record
		for i, s := range streams {
			for j, e := range s.Events {
				if phases[i][j] == phase {
					msgs = append(msgs, h.record(s, e))
				}
			}
		}
		h.produce(append(msgs, h.skippedTail(true)...))
		h.waitCaughtUp(10 * time.Minute)
		h.checkLagZero()
	}
}

// state is the model's current state after events; with skipped tails the Filter drops every tombstone
// before the sink, so the model sees none of them.
func (h *harness) state(events []cdcstream.Event, vs cdcstream.VersionSource) map[string]cdcstream.Row {
	if h.skips {
		events = slices.DeleteFunc(slices.Clone(events), func(e cdcstream.Event) bool { return e.Op == cdcstream.Tombstone })
	}
	return cdcstream.State(events, vs)
}
