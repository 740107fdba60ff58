package jvmmixed

// JVM Connect distributed workers (ConnectDistributed from Maven Central) in a cluster's group.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// jvmClasspath returns the classpath of a JVM Connect worker from Maven Central (testdata/distributed/jvm.sh).
func jvmClasspath(t testing.TB) string {
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatalf("java is required for the JVM takeover test: %v", err)
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "testdata", "distributed", "jvm.sh"), "classpath")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "fetching the JVM Connect jars: %s", stderr.String())
	return strings.TrimSpace(string(out))
}

// jworker is a JVM Connect distributed worker (ConnectDistributed) process.
type jworker struct {
	T    testing.TB
	URL  string
	ID   string // worker id, host:port
	Cmd  *exec.Cmd
	Log  *workerproc.Buffer
	Done chan struct{}
}

// startJVM runs a JVM worker in the cluster's group and returns its REST URL, its worker id and a stop
// function (SIGTERM, wait).
func startJVM(c *cluster, cp string) (url, id string, stop func()) {
	j := launchJVM(c, cp)
	return j.URL, j.ID, j.Stop
}

// launchJVM starts a JVM worker in the cluster's group and waits until its REST listener answers.
func launchJVM(c *cluster, cp string) *jworker { return launchJVMWith(c, cp, jvmLaunch{}) }

// jvmLaunch is what a JVM worker's launch may add to launchJVM's defaults.
type jvmLaunch struct {
	port    int    // 0: a free port
	heap    string // -Xmx; 256m when empty
	props   string // worker properties appended to the defaults
	loggers []string
	name    string // of the properties files ("jvm" when empty)
}

// launchJVMWith starts a JVM worker in the cluster's group with o and waits until its REST listener answers.
func launchJVMWith(c *cluster, cp string, o jvmLaunch) *jworker {
	t := c.T
	port, heap, name := o.port, o.heap, o.name
	if port == 0 {
		port = freePort(t)
	}
	if heap == "" {
		heap = "256m"
	}
	if name == "" {
		name = "jvm"
	}
	props := workerproc.DistributedProps(c.Kafka, c.Group) + fmt.Sprintf(`key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
listeners=http://127.0.0.1:%d
offset.flush.interval.ms=500
scheduled.rebalance.max.delay.ms=1000
heartbeat.interval.ms=1000
`, port) + o.props
	pf := filepath.Join(c.Dir, fmt.Sprintf("%s-%d.properties", name, port))
	require.NoError(t, os.WriteFile(pf, []byte(props), 0o644))
	l4j := filepath.Join(c.Dir, name+"-log4j2.properties")
	require.NoError(t, os.WriteFile(l4j, []byte(strings.Join(append([]string{
		"rootLogger.level=WARN", "rootLogger.appenderRef.stdout.ref=STDOUT",
		"appender.stdout.type=Console", "appender.stdout.name=STDOUT",
		"appender.stdout.layout.type=PatternLayout", "appender.stdout.layout.pattern=[%d] %p %m (%c)%n",
	}, o.loggers...), "\n")+"\n"), 0o644))
	// java itself, not a wrapper script, so that a signal to cmd.Process reaches the JVM
	jvm := exec.Command("java", "-Xmx"+heap, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dlog4j2.configurationFile="+l4j,
		"-cp", cp, "org.apache.kafka.connect.cli.ConnectDistributed", pf)
	j := &jworker{T: t, URL: fmt.Sprintf("http://127.0.0.1:%d", port), ID: fmt.Sprintf("127.0.0.1:%d", port), Cmd: jvm, Log: &workerproc.Buffer{}, Done: make(chan struct{})}
	jvm.Stdout, jvm.Stderr = j.Log, j.Log
	require.NoError(t, jvm.Start())
	go func() { _ = jvm.Wait(); close(j.Done) }()
	t.Cleanup(func() {
		j.Kill()
		if t.Failed() {
			s := j.Log.String()
			if len(s) > 6000 {
				s = s[len(s)-6000:]
			}
			t.Logf("JVM worker %s log tail:\n%s", j.ID, s)
		}
	})
	require.Eventually(t, func() bool {
		code, _ := httpDo("GET", j.URL+"/connectors", "")
		return code == 200 || !j.Alive()
	}, 120*time.Second, 250*time.Millisecond, "JVM worker did not start")
	require.True(t, j.Alive(), "JVM worker exited:\n%s", j.Log.String())
	return j
}

// Stop stops the worker gracefully (SIGTERM) and waits for it to exit.
func (j *jworker) Stop() {
	_ = j.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-j.Done:
	case <-time.After(60 * time.Second):
		j.T.Fatal("JVM worker did not stop")
	}
}

// Kill ends the JVM with SIGKILL: no shutdown hook runs, it does not leave the group.
func (j *jworker) Kill() {
	select {
	case <-j.Done:
	default:
		_ = j.Cmd.Process.Signal(syscall.SIGKILL)
		<-j.Done
	}
}

// Alive tells whether the JVM still runs.
func (j *jworker) Alive() bool {
	select {
	case <-j.Done:
		return false
	default:
		return true
	}
}
