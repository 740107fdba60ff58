package kafkatest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BrokerOptions configure a broker started by StartBroker.
type BrokerOptions struct {
	// ExtraPorts is how many more free ports to reserve, for listeners that Config adds; they
	// are in Broker.Ports.
	ExtraPorts int
	// Config returns extra server.properties lines, appended last (so a key set there wins over
	// the script's: listeners=..., advertised.listeners=..., listener.security.protocol.map=...).
	// A listeners line must keep PLAINTEXT://127.0.0.1:<b.Port> and
	// CONTROLLER://127.0.0.1:<b.ControllerPort>: the script waits on the first and the KRaft
	// quorum uses the second.
	Config func(b *Broker) string
	// FormatArgs are extra arguments of the storage format step, e.g.
	// "--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]".
	FormatArgs []string
}

// Broker is a private broker started by StartBroker for one test.
type Broker struct {
	Addr           string // PLAINTEXT listener, host:port
	Port           int    // PLAINTEXT port
	ControllerPort int
	Ports          []int  // BrokerOptions.ExtraPorts free ports, for extra listeners
	Dir            string // data, logs and config (under t.TempDir())
}

// StartBroker starts a broker of its own for this test through scripts/kafka.sh, configured by
// opts (e.g. extra SSL or SASL listeners), and stops it when the test ends. It does not touch
// the shared broker of Bootstrap. It fails the test if the broker does not start; the broker's
// logs are then shown.
func StartBroker(t testing.TB, opts BrokerOptions) *Broker {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Kafka broker: skipped under -short")
	}
	script := scriptPath()
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("kafkatest: %s not found (set KAFKA_SCRIPT): %v", script, err)
	}
	root := t.TempDir()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between pick and bind
		ports, err := freePorts(2 + opts.ExtraPorts)
		if err != nil {
			t.Fatalf("kafkatest: %v", err)
		}
		b := &Broker{
			Port:           ports[0],
			ControllerPort: ports[1],
			Ports:          ports[2:],
			Dir:            filepath.Join(root, "kafka-"+strconv.Itoa(attempt)),
		}
		b.Addr = "127.0.0.1:" + strconv.Itoa(b.Port)
		env := []string{
			"KAFKA_PORT=" + strconv.Itoa(b.Port),
			"KAFKA_CONTROLLER_PORT=" + strconv.Itoa(b.ControllerPort),
			"KAFKA_DIR=" + b.Dir,
			"KAFKA_OWNER_PID=" + strconv.Itoa(os.Getpid()),
			"KAFKA_EXTRA_CONFIG=",
			"KAFKA_FORMAT_ARGS=" + strings.Join(opts.FormatArgs, "\n"),
		}
		if opts.Config != nil {
			env[4] = "KAFKA_EXTRA_CONFIG=" + opts.Config(b)
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command("bash", script, "up")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err = cmd.Run()
		down := func() {
			cmd := exec.Command("bash", script, "down")
			cmd.Env = append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Logf("kafkatest: stopping broker %s: %v\n%s", b.Addr, err, out)
			}
		}
		if err == nil {
			t.Cleanup(down)
			t.Logf("kafkatest: started broker %s in %v", b.Addr, time.Since(start).Round(time.Millisecond))
			return b
		}
		down()
		lastErr = fmt.Errorf("scripts/kafka.sh up: %v\n%s", err, stderr.String())
		if !strings.Contains(stderr.String(), "already in use") && !strings.Contains(stderr.String(), "Address already in use") {
			break
		}
	}
	t.Fatalf("kafkatest: starting broker: %v", lastErr)
	return nil
}

// freePorts returns n distinct free ports, holding each open until all are picked.
func freePorts(n int) ([]int, error) {
	out := make([]int, 0, n)
	var closers []func() error
	defer func() {
		for _, c := range closers {
			_ = c()
		}
	}()
	for len(out) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		closers = append(closers, l.Close)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
