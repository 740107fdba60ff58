// Package kafkatest gives tests a real Apache Kafka broker (KRaft, single node) and small
// sarama helpers around it.
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

	"github.com/IBM/sarama"
)

// EnvBootstrap names the environment variable holding a running broker's address.
const EnvBootstrap = "KAFKA_BOOTSTRAP"

// Version is the Kafka protocol version NewConfig sets on sarama configs. Kafka 4 removed old
// protocol versions (KIP-896), so clients must speak at least the 2.1-era versions; V4_0_0_0
// is served by every 4.x broker.
var Version = sarama.V4_0_0_0

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

// NewConfig returns a sarama config for the test broker: Kafka 4 protocol version, producer
// successes returned (as SyncProducer needs), acks=all, consumers starting at the oldest offset,
// and admin/metadata retries suited to a freshly started broker.
func NewConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = Version
	cfg.ClientID = "kafkatest"
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Max = 10
	cfg.Producer.Retry.Backoff = 200 * time.Millisecond
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Return.Errors = true
	cfg.Metadata.Retry.Max = 10
	cfg.Metadata.Retry.Backoff = 200 * time.Millisecond
	cfg.Admin.Retry.Max = 10
	cfg.Admin.Retry.Backoff = 200 * time.Millisecond
	cfg.Admin.Timeout = 30 * time.Second
	return cfg
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

// newClient opens a sarama client closed at the end of the test.
func newClient(t testing.TB, cfg *sarama.Config, addr string) sarama.Client {
	t.Helper()
	client, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("kafkatest: connecting to %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// CreateTopic creates a topic with replication factor 1 and the given partition count and topic
// configs (nil for none), then waits until every partition has a leader. It fails the test if the
// topic exists already.
func CreateTopic(t testing.TB, addr, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	client := newClient(t, NewConfig(), addr)
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatalf("kafkatest: admin: %v", err)
	}
	err = admin.CreateTopic(name, &sarama.TopicDetail{
		NumPartitions:     partitions,
		ReplicationFactor: 1,
		ConfigEntries:     configs,
	}, false)
	if err != nil {
		t.Fatalf("kafkatest: creating topic %q: %v", name, err)
	}
	waitTopic(t, client, name, partitions, 30*time.Second)
}

// waitTopic waits until the topic's metadata shows want partitions, each with a leader.
func waitTopic(t testing.TB, client sarama.Client, topic string, want int32, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := client.RefreshMetadata(topic)
		if err == nil {
			var parts []int32
			parts, err = client.Partitions(topic)
			if err == nil && int32(len(parts)) != want {
				err = fmt.Errorf("%d of %d partitions visible", len(parts), want)
			}
			for _, p := range parts {
				if err != nil {
					break
				}
				_, err = client.Leader(topic, p)
			}
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kafkatest: topic %q not ready after %v: %v", topic, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Produce sends the messages to topic synchronously (acks=all) and fails the test on any error.
// Each message's Topic is set to topic; after the call its Partition and Offset are filled in.
func Produce(t testing.TB, addr, topic string, msgs ...*sarama.ProducerMessage) {
	t.Helper()
	if len(msgs) == 0 {
		return
	}
	producer, err := sarama.NewSyncProducer([]string{addr}, NewConfig())
	if err != nil {
		t.Fatalf("kafkatest: producer: %v", err)
	}
	defer func() { _ = producer.Close() }()
	for _, m := range msgs {
		m.Topic = topic
	}
	if err := producer.SendMessages(msgs); err != nil {
		var perrs sarama.ProducerErrors
		if errors.As(err, &perrs) && len(perrs) > 0 {
			t.Fatalf("kafkatest: producing to %q: %d of %d failed, first: %v", topic, len(perrs), len(msgs), perrs[0].Err)
		}
		t.Fatalf("kafkatest: producing to %q: %v", topic, err)
	}
}

// ConsumeAll reads every partition of topic from the oldest offset until want messages have
// arrived or timeout has passed, and returns them sorted by partition, then offset. It does not
// fail the test on a timeout: it returns what it got (assert on the length). It reads
// uncommitted records too; use ConsumeAllConfig for read_committed.
func ConsumeAll(t testing.TB, addr, topic string, want int, timeout time.Duration) []*sarama.ConsumerMessage {
	t.Helper()
	return ConsumeAllConfig(t, NewConfig(), addr, topic, want, timeout)
}

// ConsumeAllConfig is ConsumeAll with a given sarama config, e.g. one with
// cfg.Consumer.IsolationLevel = sarama.ReadCommitted.
func ConsumeAllConfig(t testing.TB, cfg *sarama.Config, addr, topic string, want int, timeout time.Duration) []*sarama.ConsumerMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	client := newClient(t, cfg, addr)
	// The topic may still be being created (or auto-created): wait for its partitions.
	var parts []int32
	for {
		_ = client.RefreshMetadata(topic)
		p, err := client.Partitions(topic)
		if err == nil && len(p) > 0 {
			parts = p
			break
		}
		select {
		case <-ctx.Done():
			t.Logf("kafkatest: ConsumeAll(%q): no partitions after %v: %v", topic, timeout, err)
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}

	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatalf("kafkatest: consumer: %v", err)
	}
	defer func() { _ = consumer.Close() }()

	type result struct {
		msg *sarama.ConsumerMessage
		err error
	}
	results := make(chan result)
	var wg sync.WaitGroup
	for _, p := range parts {
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("kafkatest: consuming %s/%d: %v", topic, p, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer pc.AsyncClose()
			msgs, errs := pc.Messages(), pc.Errors()
			for {
				var r result
				select {
				case m, ok := <-msgs:
					if !ok {
						return
					}
					r.msg = m
				case e, ok := <-errs:
					if !ok {
						return
					}
					r.err = e
				case <-ctx.Done():
					return
				}
				select {
				case results <- r:
				case <-ctx.Done():
					return
				}
			}
		}()
	}

	var got []*sarama.ConsumerMessage
loop:
	for len(got) < want {
		select {
		case r := <-results:
			if r.err != nil {
				t.Logf("kafkatest: ConsumeAll(%q): %v", topic, r.err)
				continue
			}
			got = append(got, r.msg)
		case <-ctx.Done():
			t.Logf("kafkatest: ConsumeAll(%q): %d of %d messages after %v", topic, len(got), want, timeout)
			break loop
		}
	}
	cancel()
	wg.Wait()
	sort.SliceStable(got, func(i, j int) bool {
		if got[i].Partition != got[j].Partition {
			return got[i].Partition < got[j].Partition
		}
		return got[i].Offset < got[j].Offset
	})
	return got
}

// CommittedOffsets returns the offsets group has committed for topic, by partition. Partitions
// without a committed offset are left out (so an unknown group gives an empty map).
func CommittedOffsets(t testing.TB, addr, group, topic string) map[int32]int64 {
	t.Helper()
	client := newClient(t, NewConfig(), addr)
	parts, err := client.Partitions(topic)
	if err != nil {
		t.Fatalf("kafkatest: partitions of %q: %v", topic, err)
	}
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatalf("kafkatest: admin: %v", err)
	}
	resp, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: parts})
	if err != nil {
		t.Fatalf("kafkatest: committed offsets of group %q: %v", group, err)
	}
	out := make(map[int32]int64, len(parts))
	for _, p := range parts {
		b := resp.GetBlock(topic, p)
		if b == nil {
			continue
		}
		if !errors.Is(b.Err, sarama.ErrNoError) {
			t.Fatalf("kafkatest: committed offset of group %q %s/%d: %v", group, topic, p, b.Err)
		}
		if b.Offset >= 0 {
			out[p] = b.Offset
		}
	}
	return out
}
