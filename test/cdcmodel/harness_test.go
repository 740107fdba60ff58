package cdcmodel

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

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
		if h.worker.crashed() {
			h.t.Fatalf("the worker process ended by itself; its log (tail):\n%s", h.worker.tail(20000))
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
		var msgs []*sarama.ProducerMessage
		for _, tg := range order[cuts[w]:cuts[w+1]] {
			s := streams[tg.Stream]
			msgs = append(msgs, h.record(s, s.Events[tg.Index]))
		}
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
		h.waitCaughtUp(10 * time.Minute)
	}
}
