// Package kafkatest gives tests a real Apache Kafka broker (KRaft, single node) and small
// franz-go helpers around it: create a topic, produce records, read a topic, read a group's
// committed offsets.
//
// Bootstrap returns the broker address. When KAFKA_BOOTSTRAP is set (`make test` starts one
// broker for the whole run and sets it), that address is used. Otherwise the first call starts a
// private broker for this test binary through scripts/kafka.sh on a free port; it is shared by
// all tests of the binary and stopped when the binary ends.
//
// A package whose tests call Bootstrap should stop that private broker from TestMain:
//
//	func TestMain(m *testing.M) { kafkatest.Main(m) }
//
// (Should a test binary die without running Main's cleanup — a panic, a -timeout — a watchdog
// started by the script still stops the broker within a second or two of the process exiting.)
//
// Tests share the broker, so each test should use its own topics and groups: see UniqueName.
package kafkatest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// EnvBootstrap names the environment variable holding a running broker's address.
const EnvBootstrap = "KAFKA_BOOTSTRAP"

var (
	startOnce  sync.Once
	startAddr  string
	startErr   error
	privateEnv []string // KAFKA_PORT/KAFKA_DIR of the private broker, for Stop
	stopMu     sync.Mutex
)

// Bootstrap returns the address (host:port) of a running Kafka broker: $KAFKA_BOOTSTRAP if set,
// else a private broker started once per test binary (see the package doc). It fails the test if
// no broker can be had.
func Bootstrap(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Kafka broker: skipped under -short")
	}
	if addr := strings.TrimSpace(os.Getenv(EnvBootstrap)); addr != "" {
		return addr
	}
	startOnce.Do(func() { startAddr, startErr = startPrivate() })
	if startErr != nil {
		t.Fatalf("kafkatest: no Kafka broker: %v", startErr)
	}
	return startAddr
}

// Main runs the tests and then stops the private broker, if Bootstrap started one. Call it from
// TestMain: func TestMain(m *testing.M) { kafkatest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the private broker started by Bootstrap, if any. Main calls it; a custom TestMain
// may call it instead of using Main. Bootstrap does not start a new broker after Stop.
func Stop() {
	stopMu.Lock()
	defer stopMu.Unlock()
	if privateEnv == nil {
		return
	}
	cmd := exec.Command("bash", scriptPath(), "down")
	cmd.Env = append(os.Environ(), privateEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "kafkatest: stopping broker: %v\n%s", err, out)
	}
	privateEnv = nil
}

// scriptPath locates scripts/kafka.sh: $KAFKA_SCRIPT, else relative to this source file.
func scriptPath() string {
	if p := os.Getenv("KAFKA_SCRIPT"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", "kafka.sh")
}

func startPrivate() (string, error) {
	script := scriptPath()
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("%s not found (set %s or KAFKA_SCRIPT): %w", script, EnvBootstrap, err)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between pick and bind
		port, err := freePort()
		if err != nil {
			return "", err
		}
		env := []string{
			"KAFKA_PORT=" + strconv.Itoa(port),
			"KAFKA_OWNER_PID=" + strconv.Itoa(os.Getpid()),
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command("bash", script, "up")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err = cmd.Run()
		stopMu.Lock()
		privateEnv = env // also after a failure: `down` cleans up the half-started dir
		stopMu.Unlock()
		if err == nil {
			addr := strings.TrimSpace(stdout.String())
			fmt.Fprintf(os.Stderr, "kafkatest: started private Kafka broker at %s in %v\n", addr, time.Since(start).Round(time.Millisecond))
			return addr, nil
		}
		lastErr = fmt.Errorf("scripts/kafka.sh up: %v\n%s", err, stderr.String())
		Stop()
		if !strings.Contains(stderr.String(), "already in use") && !strings.Contains(stderr.String(), "Address already in use") {
			break
		}
	}
	return "", lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// UniqueName returns a legal, unique Kafka topic or group name: prefix, the test's name, and a
// random suffix, e.g. "orders-TestSink_flush-3f9a1c2b".
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("kafkatest: random: %v", err)
	}
	name := sanitize(t.Name())
	if len(name) > 120 {
		name = name[:120]
	}
	parts := []string{}
	if p := sanitize(prefix); p != "" {
		parts = append(parts, p)
	}
	if name != "" {
		parts = append(parts, name)
	}
	parts = append(parts, hex.EncodeToString(b[:]))
	return strings.Join(parts, "-")
}

// sanitize keeps [A-Za-z0-9_-] and turns anything else into '-'. It drops '.' too, since Kafka
// refuses topics that differ from existing ones only by '.' versus '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		default:
			return '-'
		}
	}, s)
}

// opTimeout bounds one helper's broker round trips (produce, admin requests).
const opTimeout = 60 * time.Second

// NewClient opens a franz-go client to addr with opts, closed at the end of the test (closing it
// sooner is fine). Its metadata is refreshed often, so topics created moments ago are seen quickly.
func NewClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl := openClient(t, addr, opts...)
	t.Cleanup(cl.Close)
	return cl
}

// NewAdmin returns an admin client to addr, closed at the end of the test (closing it sooner is
// fine).
func NewAdmin(t testing.TB, addr string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(NewClient(t, addr))
}

// openClient opens a client the caller closes.
func openClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	base := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("kafkatest"), kgo.MetadataMinAge(100 * time.Millisecond)}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatalf("kafkatest: client for %s: %v", addr, err)
	}
	return cl
}

// openAdmin opens an admin client the caller closes.
func openAdmin(t testing.TB, addr string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(openClient(t, addr))
}

// CreateTopic creates a topic with replication factor 1 and the given partition count and topic
// configs (nil for none), then waits until every partition has a leader. It fails the test if the
// topic exists already.
func CreateTopic(t testing.TB, addr, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	admin := openAdmin(t, addr)
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	resp, err := admin.CreateTopic(ctx, partitions, 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("kafkatest: creating topic %q: %v", name, err)
	}
	waitTopic(t, admin, name, partitions, 30*time.Second)
}

// AwaitTopic waits until the topic's metadata shows want partitions, each with a leader, and fails
// the test if it does not within timeout.
func AwaitTopic(t testing.TB, addr, topic string, want int32, timeout time.Duration) {
	t.Helper()
	admin := openAdmin(t, addr)
	defer admin.Close()
	waitTopic(t, admin, topic, want, timeout)
}

// waitTopic waits until the topic's metadata shows want partitions, each with a leader.
func waitTopic(t testing.TB, admin *kadm.Client, topic string, want int32, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := topicReady(admin, topic, want)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kafkatest: topic %q not ready after %v: %v", topic, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func topicReady(admin *kadm.Client, topic string, want int32) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	details, err := admin.ListTopics(ctx, topic)
	if err != nil {
		return err
	}
	d, ok := details[topic]
	if !ok {
		return errors.New("not in metadata")
	}
	if d.Err != nil {
		return d.Err
	}
	if int32(len(d.Partitions)) != want {
		return fmt.Errorf("%d of %d partitions visible", len(d.Partitions), want)
	}
	for _, p := range d.Partitions {
		if p.Err != nil {
			return fmt.Errorf("partition %d: %w", p.Partition, p.Err)
		}
		if p.Leader < 0 {
			return fmt.Errorf("partition %d has no leader", p.Partition)
		}
	}
	return nil
}

// Produce sends the records to topic synchronously (acks=all, idempotent) and fails the test on
// any error. A keyed record goes to the partition of its key's murmur2 hash, as the JVM producer
// places it; records without a key are spread round-robin. Each record's Topic is set to topic;
// after the call its Partition and Offset are filled in. A missing topic is auto-created when the
// broker allows it.
func Produce(t testing.TB, addr, topic string, recs ...*kgo.Record) {
	t.Helper()
	produce(t, addr, topic, keyOrRoundRobin(), recs)
}

// ProduceN produces records from..from+n-1 to topic: value v<i>, key k<i mod 17>.
func ProduceN(t testing.TB, addr, topic string, from, n int) {
	msgs := make([]*kgo.Record, 0, n)
	for i := from; i < from+n; i++ {
		msgs = append(msgs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%d", i%17)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	Produce(t, addr, topic, msgs...)
}

// ProducePartitioned is Produce with each record sent to its own Partition.
func ProducePartitioned(t testing.TB, addr, topic string, recs ...*kgo.Record) {
	t.Helper()
	produce(t, addr, topic, kgo.ManualPartitioner(), recs)
}

func produce(t testing.TB, addr, topic string, partitioner kgo.Partitioner, recs []*kgo.Record) {
	t.Helper()
	if len(recs) == 0 {
		return
	}
	cl := openClient(t, addr, kgo.RecordPartitioner(partitioner), kgo.AllowAutoTopicCreation(),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
	defer cl.Close()
	for _, r := range recs {
		r.Topic = topic
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var failed int
	var first error
	for _, res := range cl.ProduceSync(ctx, recs...) {
		if res.Err != nil {
			if first == nil {
				first = res.Err
			}
			failed++
		}
	}
	if first != nil {
		t.Fatalf("kafkatest: producing to %q: %d of %d failed, first: %v", topic, failed, len(recs), first)
	}
}

// keyOrRoundRobin hashes keyed records with murmur2 (as the JVM) and sends the others
// round-robin, so that keyless test records land on every partition.
func keyOrRoundRobin() kgo.Partitioner {
	byKey := kgo.StickyKeyPartitioner(nil)
	return kgo.BasicConsistentPartitioner(func(topic string) func(*kgo.Record, int) int {
		hash := byKey.ForTopic(topic)
		var next int
		return func(r *kgo.Record, n int) int {
			if r.Key == nil {
				next++
				return next % n
			}
			return hash.Partition(r, n)
		}
	})
}

// ConsumeAll reads every partition of topic from the start until want records have arrived or
// timeout has passed, and returns them sorted by partition, then offset. It does not fail the
// test on a timeout: it returns what it got (assert on the length). It reads uncommitted records
// too; pass kgo.FetchIsolationLevel(kgo.ReadCommitted()) in opts for read_committed.
func ConsumeAll(t testing.TB, addr, topic string, want int, timeout time.Duration, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	base := []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	cl := openClient(t, addr, append(base, opts...)...)
	defer cl.Close()

	var got []*kgo.Record
	for len(got) < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Logf("kafkatest: ConsumeAll(%q): %d of %d records after %v", topic, len(got), want, timeout)
			break
		}
		fetches.EachError(func(topic string, p int32, err error) {
			t.Logf("kafkatest: ConsumeAll(%q): partition %d: %v", topic, p, err)
		})
		fetches.EachRecord(func(r *kgo.Record) { got = append(got, r) })
	}
	sort.SliceStable(got, func(i, j int) bool {
		if got[i].Partition != got[j].Partition {
			return got[i].Partition < got[j].Partition
		}
		return got[i].Offset < got[j].Offset
	})
	return got
}

// EndOffsets returns the end (high watermark) offset of each partition of topic.
func EndOffsets(t testing.TB, addr, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	admin := openAdmin(t, addr)
	defer admin.Close()
	listed, err := admin.ListEndOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		t.Fatalf("kafkatest: end offsets of %q: %v", topic, err)
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// CommittedOffsets returns the offsets group has committed for topic, by partition. Partitions
// without a committed offset are left out (so an unknown group gives an empty map).
func CommittedOffsets(t testing.TB, addr, group, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	admin := openAdmin(t, addr)
	defer admin.Close()
	var resp kadm.OffsetResponses
	var err error
	for {
		// a fresh broker answers COORDINATOR_NOT_AVAILABLE until __consumer_offsets is ready
		resp, err = admin.FetchOffsets(ctx, group)
		if err == nil || !kerr.IsRetriable(err) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("kafkatest: committed offsets of group %q: %v", group, err)
	}
	out := map[int32]int64{}
	for p, o := range resp[topic] {
		if o.Err != nil {
			t.Fatalf("kafkatest: committed offset of group %q %s/%d: %v", group, topic, p, o.Err)
		}
		if o.At >= 0 {
			out[p] = o.At
		}
	}
	return out
}

// ReadToEnd reads topic from the start up to the end offsets it has when called, and returns its
// records (uncommitted ones too, not the transaction markers) sorted by partition, then offset. It
// fails the test if that end is not reached within timeout.
func ReadToEnd(t testing.TB, addr, topic string, timeout time.Duration) []*kgo.Record {
	t.Helper()
	ends := EndOffsets(t, addr, topic)
	pending := map[int32]int64{}
	start := map[int32]kgo.Offset{}
	for p, end := range ends {
		if end > 0 {
			pending[p] = end
			start[p] = kgo.NewOffset().AtStart()
		}
	}
	if len(pending) == 0 {
		return nil
	}
	// a transactional topic ends with a marker: kept, so that the end is seen
	cl := openClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}), kgo.KeepControlRecords())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got []*kgo.Record
	for len(pending) > 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("kafkatest: ReadToEnd(%q): after %v, partitions %v not read to their end %v", topic, timeout, keys(pending), ends)
		}
		fetches.EachError(func(_ string, p int32, err error) {
			t.Logf("kafkatest: ReadToEnd(%q): partition %d: %v", topic, p, err)
		})
		fetches.EachRecord(func(r *kgo.Record) {
			end, ok := pending[r.Partition]
			if !ok {
				return // past the end this read is for
			}
			if !r.Attrs.IsControl() {
				got = append(got, r)
			}
			if r.Offset+1 >= end {
				delete(pending, r.Partition)
			}
		})
	}
	sort.SliceStable(got, func(i, j int) bool {
		if got[i].Partition != got[j].Partition {
			return got[i].Partition < got[j].Partition
		}
		return got[i].Offset < got[j].Offset
	})
	return got
}

func keys(m map[int32]int64) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
