package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/lz4test"
	"github.com/connectd/connectd/internal/testutil/plugintest"
	"github.com/connectd/connectd/internal/worker"
)

// BenchmarkSinkTaskFetch measures a sink task's whole loop (fetch, decompress, convert, put, commit) on
// lz4-compressed flat JSON records of ~400 bytes in 6 partitions (the records of
// scripts/bench-iceberg-jvm.sh), read from the start of the topic by a fresh connector with the worker's
// converters of that benchmark (StringConverter keys, schemaless JsonConverter values). The lz4 frames
// are those of one of two producers:
//   - kgo: franz-go's, as the benchmark's topic has them (4 MiB blocks, content checksum);
//   - jvm: the JVM's KafkaLZ4BlockOutputStream's (64 KiB independent blocks, no checksums).
//
// and the sinks:
//   - iceberg: the Iceberg sink, append mode, SQLite catalog and local warehouse, committing every
//     second; done when the group committed every record;
//   - discard: a sink that takes the values unconverted (jsonvalue.Value) and drops them; done when it
//     was given every record: the fetch and the JSON check alone.
//
// It reports the process's CPU per million records (the broker is another process), the bytes allocated
// per record and the peak RSS. The topics (bench-fetch-<n>, bench-fetch-jvm-<n>) are produced once per
// broker and kept, so that a second run's peak RSS is the sink task's alone. BENCH_FETCH_RECORDS sets n
// (500,000).
//
//	scripts/with-kafka.sh go test ./internal/worker/ -run '^$' -bench SinkTaskFetch -benchtime 1x -count 3
func BenchmarkSinkTaskFetch(b *testing.B) {
	addr := kafkatest.Bootstrap(b)
	n := 500_000
	if v := os.Getenv("BENCH_FETCH_RECORDS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err, "BENCH_FETCH_RECORDS")
	}
	for _, frames := range []string{"kgo", "jvm"} {
		for _, sink := range []string{"iceberg", "discard"} {
			b.Run(frames+"/"+sink, func(b *testing.B) {
				topic := benchFetchTopic(b, addr, n, frames)
				var cpu, secs float64
				var alloc uint64
				for range b.N {
					c, s, a := runFetchBench(b, addr, topic, sink, n)
					cpu, secs, alloc = cpu+c, secs+s, alloc+a
				}
				recs := float64(n * b.N)
				b.ReportMetric(cpu/recs*1e6, "cpu-s/M-records")
				b.ReportMetric(float64(alloc)/recs, "alloc-B/record")
				b.ReportMetric(recs/secs, "records/s")
				b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// benchFetchTopic makes sure the topic of n records in the frames of a producer (kgo or jvm) holds them
// and returns its name.
func benchFetchTopic(b *testing.B, addr string, n int, frames string) string {
	topic, compressor := fmt.Sprintf("bench-fetch-%d", n), kgo.ProducerBatchCompression(kgo.Lz4Compression())
	if frames == "jvm" {
		topic, compressor = fmt.Sprintf("bench-fetch-jvm-%d", n), kgo.WithCompressor(lz4test.JVMCompressor{})
	}
	adm := kafkatest.NewAdmin(b, addr)
	ctx := context.Background()
	if ends, err := adm.ListEndOffsets(ctx, topic); err == nil && ends.Error() == nil {
		total := int64(0)
		ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
		if total >= int64(n) {
			return topic
		}
	}
	kafkatest.CreateTopic(b, addr, topic, 6, nil)
	cl := kafkatest.NewClient(b, addr, kgo.DefaultProduceTopic(topic), compressor,
		kgo.ProducerLinger(20*time.Millisecond), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.MaxBufferedRecords(100_000))
	var failed atomic.Pointer[error]
	pad := make([]byte, 406)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	regions := []string{"eu-west", "us-east", "ap-south"}
	for i := range n {
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339)
		v := fmt.Appendf(nil, `{"id":%d,"name":"customer-%07d","email":"customer-%07d@example.com","region":"%s","amount":%d.%02d,"qty":%d,"ts":"%s","version":%d,"note":"`,
			i, i%1000000, i%1000000, regions[i%len(regions)], i%100000, i%100, i%17, ts, i%5)
		v = append(append(v, pad[:406-len(v)-2]...), '"', '}')
		cl.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(&err)
			}
		})
	}
	require.NoError(b, cl.Flush(ctx))
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	return topic
}

var fetchBenchSeq atomic.Int64

// runFetchBench runs one connector over the topic to its end and returns the CPU seconds, the seconds
// and the bytes allocated from its start until then.
func runFetchBench(b *testing.B, addr, topic, sink string, n int) (cpu, secs float64, alloc uint64) {
	b.StopTimer()
	dir := b.TempDir()
	cfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers":                 addr,
		"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":    "false",
		"offset.flush.interval.ms":          "1000",
		"task.shutdown.graceful.timeout.ms": "30000",
	})
	require.NoError(b, err)
	w := worker.New(cfg, plugintest.Registry(fetchDiscardPlugin), &taskStates{})
	defer w.Stop()
	conn := fmt.Sprintf("bench-fetch-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), fetchBenchSeq.Add(1))
	props := map[string]string{"name": conn, "tasks.max": "1", "topics": topic}
	var done func() bool
	switch sink {
	case "iceberg":
		props["connector.class"] = "org.apache.iceberg.connect.IcebergSinkConnector"
		props["iceberg.tables"] = "bench.events"
		props["iceberg.tables.auto-create-enabled"] = "true"
		props["iceberg.catalog.catalog-impl"] = "org.apache.iceberg.jdbc.JdbcCatalog"
		props["iceberg.catalog.uri"] = "jdbc:sqlite:" + filepath.Join(dir, "catalog.db")
		props["iceberg.catalog.warehouse"] = filepath.Join(dir, "warehouse")
		props["iceberg.control.commit.interval-ms"] = "1000"
		done = func() bool {
			total := int64(0)
			for _, off := range kafkatest.CommittedOffsets(b, addr, "connect-"+conn, topic) {
				total += off
			}
			return total >= int64(n)
		}
	case "discard":
		props["connector.class"] = fetchDiscardClass
		done = func() bool { return fetchDiscarded(conn).Load() >= int64(n) }
	}
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0, t0 := cpuSecondsNow(), time.Now()
	b.StartTimer()
	require.NoError(b, w.StartTask(state.TaskID{Connector: conn}, props, props, state.Started))
	deadline := time.Now().Add(10 * time.Minute)
	for !done() {
		require.True(b, time.Now().Before(deadline), "%s: not done after 10 minutes", sink)
		time.Sleep(50 * time.Millisecond)
	}
	b.StopTimer()
	cpu, secs = cpuSecondsNow()-cpu0, time.Since(t0).Seconds()
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	return cpu, secs, ms1.TotalAlloc - ms0.TotalAlloc
}

func cpuSecondsNow() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024
}

// ---- the discarding sink

const fetchDiscardClass = "io.connectd.test.FetchDiscardSinkConnector"

var fetchDiscardPlugin = connect.Plugin{Class: fetchDiscardClass, Type: connect.PluginSink, New: func() any {
	return &oneTaskConnector{newTask: func() connect.SinkTask { return &fetchDiscardTask{} }}
}}

var fetchDiscardCounts sync.Map // connector name → *atomic.Int64

func fetchDiscarded(conn string) *atomic.Int64 {
	c, _ := fetchDiscardCounts.LoadOrStore(conn, &atomic.Int64{})
	return c.(*atomic.Int64)
}

// oneTaskConnector is a sink connector of one task configured as the connector, made by newTask.
type oneTaskConnector struct {
	props   map[string]string
	newTask func() connect.SinkTask
}

func (c *oneTaskConnector) Version() string                     { return "1" }
func (c *oneTaskConnector) Initialize(connect.ConnectorContext) {}
func (c *oneTaskConnector) ConfigDef() *connect.ConfigDef       { return &connect.ConfigDef{} }
func (c *oneTaskConnector) Start(props map[string]string) error { c.props = props; return nil }
func (c *oneTaskConnector) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{c.props}, nil
}
func (c *oneTaskConnector) Stop() error               { return nil }
func (c *oneTaskConnector) NewTask() connect.SinkTask { return c.newTask() }

type fetchDiscardTask struct {
	count *atomic.Int64
	bytes int
}

func (t *fetchDiscardTask) Version() string                    { return "1" }
func (t *fetchDiscardTask) Initialize(connect.SinkTaskContext) {}
func (t *fetchDiscardTask) Start(props map[string]string) error {
	t.count = fetchDiscarded(props["name"])
	return nil
}
func (t *fetchDiscardTask) Open([]connect.TopicPartition) error  { return nil }
func (t *fetchDiscardTask) Close([]connect.TopicPartition) error { return nil }
func (t *fetchDiscardTask) Put(_ context.Context, recs []*connect.SinkRecord) error {
	for _, r := range recs {
		if jv, ok := r.Value.(*jsonvalue.Value); ok {
			t.bytes += len(jv.Bytes)
		}
	}
	t.count.Add(int64(len(recs)))
	return nil
}
func (t *fetchDiscardTask) Flush(context.Context, connect.ConsumedOffsets) error {
	return nil
}
func (t *fetchDiscardTask) Stop() error             { return nil }
func (t *fetchDiscardTask) AcceptsJSONValues() bool { return true }
