// Package worker holds the end-to-end tests of a single connectd worker: standalone mode through its REST API,
// SIGKILL and restart, dev mode and the demo pipeline, on processes started through internal/testutil/workerproc.
package worker

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

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

// A connector created by POST (JVM body, JVM class name) delivers every record of a 3-partition topic to the
// file sink, in per-partition order.
func TestFileSinkViaREST(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "e2e-file")
	kafkatest.CreateTopic(t, addr, topic, 3, nil)
	producePartitioned(t, addr, topic, 3, 0, 200)
	dir := t.TempDir()
	port := workerproc.FreePort(t)
	workerproc.Start(t, "standalone", workerproc.WriteWorkerProps(t, dir, addr, port, ""))
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	workerproc.WaitHealthy(t, url, 60*time.Second)
	out := filepath.Join(dir, "out.txt")
	code, body := workerproc.DoJSON(t, "POST", url+"/connectors", map[string]any{
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
	require.Eventually(t, func() bool { return len(workerproc.ReadLines(t, out)) >= 600 }, 60*time.Second, 100*time.Millisecond)
	lines := workerproc.ReadLines(t, out)
	require.Len(t, lines, 600)
	last := map[int32]int{0: -1, 1: -1, 2: -1}
	for _, l := range lines {
		p, seq := parseLine(t, l)
		require.Equal(t, last[p]+1, seq, "partition %d out of order or duplicated", p)
		last[p] = seq
	}
	// per-connector metrics: everything read and sent, lag drained
	require.Eventually(t, func() bool {
		_, m := workerproc.DoJSON(t, "GET", url+"/metrics", nil)
		return metricSum(string(m), "connectd_sink_task_sink_record_read_total", `connector="file-sink"`) == 600 &&
			metricSum(string(m), "connectd_sink_task_sink_record_send_total", `connector="file-sink"`) == 600 &&
			metricSum(string(m), "connectd_sink_partition_lag_records", `connector="file-sink"`) == 0 &&
			strings.Contains(string(m), "connectd_sink_partition_lag_records{")
	}, 30*time.Second, 200*time.Millisecond)
	code, body = workerproc.DoJSON(t, "GET", url+"/connectors/file-sink/status", nil)
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
	port := workerproc.FreePort(t)
	out := filepath.Join(dir, "out.txt")
	connProps := filepath.Join(dir, "sink.properties")
	require.NoError(t, os.WriteFile(connProps, []byte(fmt.Sprintf(
		"name=kill-sink\nconnector.class=FileStreamSink\ntasks.max=1\ntopics=%s\nfile=%s\nconsumer.override.max.poll.records=50\n", topic, out)), 0o644))
	wprops := workerproc.WriteWorkerProps(t, dir, addr, port, "offset.flush.interval.ms=300\n")
	url := fmt.Sprintf("http://127.0.0.1:%d", port)

	const perPart = 3000
	p := workerproc.Start(t, "standalone", wprops, connProps)
	workerproc.WaitHealthy(t, url, 60*time.Second)
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
		return len(workerproc.ReadLines(t, out)) > 1500 && len(kafkatest.CommittedOffsets(t, addr, "connect-kill-sink", topic)) > 0
	}, 60*time.Second, 20*time.Millisecond)
	p.Kill()
	committed := kafkatest.CommittedOffsets(t, addr, "connect-kill-sink", topic)
	require.NotEmpty(t, committed)
	<-done

	workerproc.Start(t, "standalone", wprops, connProps)
	workerproc.WaitHealthy(t, url, 60*time.Second)
	require.Eventually(t, func() bool { return len(workerproc.ReadLines(t, out)) >= 3*perPart }, 90*time.Second, 100*time.Millisecond)
	time.Sleep(time.Second)
	count := map[string]int{}
	for _, l := range workerproc.ReadLines(t, out) {
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
	t.Logf("committed at kill: %v; duplicates after restart: %d", committed, len(workerproc.ReadLines(t, out))-3*perPart)
	_ = strconv.Itoa
	_ = strings.TrimSpace
}
