package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

var binPath string

// buildBinary builds connectd once per test binary.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the connectd binary: skipped under -short")
	}
	if binPath != "" {
		return binPath
	}
	dir, err := os.MkdirTemp("", "connectd-bin")
	require.NoError(t, err)
	out := filepath.Join(dir, "connectd")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Run())
	binPath = out
	return out
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type proc struct {
	cmd *exec.Cmd
	log *bytes.Buffer
}

func startWorker(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(buildBinary(t), args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	require.NoError(t, cmd.Start())
	p := &proc{cmd: cmd, log: &buf}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("worker log:\n%s", tail(buf.String(), 4000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func waitREST(t *testing.T, url string) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := http.Get(url + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 60*time.Second, 50*time.Millisecond, "REST at %s never became healthy", url)
}

func doJSON(t *testing.T, method, url string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// producePartitioned writes "p<partition>-<seq>" values, seq = the offset within the partition.
func producePartitioned(t *testing.T, addr, topic string, partitions int32, from, n int) {
	t.Helper()
	var msgs []*kgo.Record
	for seq := from; seq < from+n; seq++ {
		for part := int32(0); part < partitions; part++ {
			msgs = append(msgs, &kgo.Record{Topic: topic, Partition: part, Value: []byte(fmt.Sprintf("p%d-%06d", part, seq))})
		}
	}
	kafkatest.ProducePartitioned(t, addr, topic, msgs...)
}

func readLines(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func parseLine(t *testing.T, l string) (int32, int) {
	var p int32
	var seq int
	_, err := fmt.Sscanf(l, "p%d-%d", &p, &seq)
	require.NoError(t, err, "line %q", l)
	return p, seq
}

// metricSum adds the samples of a metric whose labels contain match (Prometheus text format).
func metricSum(text, name, match string) float64 {
	var sum float64
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, name+"{") || !strings.Contains(l, match) {
			continue
		}
		f, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err == nil {
			sum += f
		}
	}
	return sum
}

func writeWorkerProps(t *testing.T, dir, addr string, port int, extra string) string {
	path := filepath.Join(dir, "worker.properties")
	content := fmt.Sprintf(`bootstrap.servers=%s
listeners=http://127.0.0.1:%d
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.flush.interval.ms=1000
%s`, addr, port, extra)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// A connector created by POST (JVM body, JVM class name) delivers every record of a 3-partition topic to the
// file sink, in per-partition order.
func TestFileSinkViaREST(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "e2e-file")
	kafkatest.CreateTopic(t, addr, topic, 3, nil)
	producePartitioned(t, addr, topic, 3, 0, 200)
	dir := t.TempDir()
	port := freePort(t)
	startWorker(t, "standalone", writeWorkerProps(t, dir, addr, port, ""))
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitREST(t, url)
	out := filepath.Join(dir, "out.txt")
	code, body := doJSON(t, "POST", url+"/connectors", map[string]any{
		"name": "file-sink",
		"config": map[string]string{
			"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
			"tasks.max":       "2",
			"topics":          topic,
			"file":            out,
		},
	})
	require.Equal(t, 201, code, string(body))
	var info map[string]any
	require.NoError(t, json.Unmarshal(body, &info))
	assert.Equal(t, "file-sink", info["name"])
	assert.Equal(t, "sink", info["type"])
	require.Eventually(t, func() bool { return len(readLines(t, out)) >= 600 }, 60*time.Second, 100*time.Millisecond)
	lines := readLines(t, out)
	require.Len(t, lines, 600)
	last := map[int32]int{0: -1, 1: -1, 2: -1}
	for _, l := range lines {
		p, seq := parseLine(t, l)
		require.Equal(t, last[p]+1, seq, "partition %d out of order or duplicated", p)
		last[p] = seq
	}
	// per-connector metrics: everything read and sent, lag drained
	require.Eventually(t, func() bool {
		_, m := doJSON(t, "GET", url+"/metrics", nil)
		return metricSum(string(m), "connectd_sink_task_sink_record_read_total", `connector="file-sink"`) == 600 &&
			metricSum(string(m), "connectd_sink_task_sink_record_send_total", `connector="file-sink"`) == 600 &&
			metricSum(string(m), "connectd_sink_partition_lag_records", `connector="file-sink"`) == 0 &&
			strings.Contains(string(m), "connectd_sink_partition_lag_records{")
	}, 30*time.Second, 200*time.Millisecond)
	code, body = doJSON(t, "GET", url+"/connectors/file-sink/status", nil)
	require.Equal(t, 200, code)
	var st map[string]any
	require.NoError(t, json.Unmarshal(body, &st))
	assert.Equal(t, "RUNNING", st["connector"].(map[string]any)["state"])
}

// SIGKILL mid-stream, restart: nothing lost, and records are redelivered only from after the last commit.
func TestSIGKILLRedeliversOnlyUncommitted(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "e2e-kill")
	kafkatest.CreateTopic(t, addr, topic, 3, nil)
	dir := t.TempDir()
	port := freePort(t)
	out := filepath.Join(dir, "out.txt")
	connProps := filepath.Join(dir, "sink.properties")
	require.NoError(t, os.WriteFile(connProps, []byte(fmt.Sprintf(
		"name=kill-sink\nconnector.class=FileStreamSink\ntasks.max=1\ntopics=%s\nfile=%s\nconsumer.override.max.poll.records=50\n", topic, out)), 0o644))
	wprops := writeWorkerProps(t, dir, addr, port, "offset.flush.interval.ms=300\n")
	url := fmt.Sprintf("http://127.0.0.1:%d", port)

	const perPart = 3000
	p := startWorker(t, "standalone", wprops, connProps)
	waitREST(t, url)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < perPart; i += 100 {
			producePartitioned(t, addr, topic, 3, i, 100)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	// kill once a good part has been delivered, while producing continues
	require.Eventually(t, func() bool {
		return len(readLines(t, out)) > 1500 && len(kafkatest.CommittedOffsets(t, addr, "connect-kill-sink", topic)) > 0
	}, 60*time.Second, 20*time.Millisecond)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	p.cmd.Wait()
	committed := kafkatest.CommittedOffsets(t, addr, "connect-kill-sink", topic)
	require.NotEmpty(t, committed)
	<-done

	startWorker(t, "standalone", wprops, connProps)
	waitREST(t, url)
	require.Eventually(t, func() bool { return len(readLines(t, out)) >= 3*perPart }, 90*time.Second, 100*time.Millisecond)
	time.Sleep(time.Second)
	count := map[string]int{}
	for _, l := range readLines(t, out) {
		count[l]++
	}
	for part := int32(0); part < 3; part++ {
		for seq := 0; seq < perPart; seq++ {
			v := fmt.Sprintf("p%d-%06d", part, seq)
			require.GreaterOrEqual(t, count[v], 1, "lost %s", v)
			if int64(seq) < committed[part] {
				require.Equal(t, 1, count[v], "%s was committed (offset %d < %d) but redelivered", v, seq, committed[part])
			}
		}
	}
	t.Logf("committed at kill: %v; duplicates after restart: %d", committed, len(readLines(t, out))-3*perPart)
	_ = strconv.Itoa
	_ = strings.TrimSpace
}
