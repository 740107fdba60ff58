package iceberg

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

var benchSchema = connect.StructBuilder().Name("bench.Order").
	Field("id", connect.Int64Builder().MustBuild()).
	Field("customer", connect.StringBuilder().Optional().MustBuild()).
	Field("email", connect.StringBuilder().Optional().MustBuild()).
	Field("amount", connect.DecimalBuilder(2).Optional().MustBuild()).
	Field("qty", connect.Int32Builder().Optional().MustBuild()).
	Field("region", connect.StringBuilder().Optional().MustBuild()).
	Field("ts", connect.TimestampBuilder().Optional().MustBuild()).
	Field("version", connect.Int64Builder().Optional().MustBuild()).
	Field("note", connect.StringBuilder().Optional().MustBuild()).
	MustBuild()

func benchRecords(n int, keys int64, start int64) []*connect.SinkRecord {
	out := make([]*connect.SinkRecord, n)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		off := start + int64(i)
		s := connect.NewStruct(benchSchema)
		id := off % keys
		s.PutIndex(0, id)
		s.PutIndex(1, fmt.Sprintf("customer-%d", id))
		s.PutIndex(2, fmt.Sprintf("c%d@example.com", id))
		s.PutIndex(3, connect.NewDecimal(off*37%100000, 2))
		s.PutIndex(4, int32(off%13))
		s.PutIndex(5, []string{"eu", "us", "ap"}[off%3])
		s.PutIndex(6, base.Add(time.Duration(off)*time.Second))
		s.PutIndex(7, off)
		s.PutIndex(8, "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt")
		p := int32(off % 4)
		out[i] = &connect.SinkRecord{Topic: "orders", Partition: p, ValueSchema: benchSchema, Value: s, Offset: off,
			OriginalTopic: "orders", OriginalPartition: p, OriginalOffset: off, Timestamp: 1700000000000 + off}
	}
	return out
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func peakRSSMB() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024
}

// benchSink measures records through Put (conversion, routing, buffering) and the commit
// (Arrow build, Parquet write, equality deletes, catalog commit): one commit per `perCommit`
// records, as one commit interval's worth.
func benchSink(b *testing.B, extra map[string]string, keys int64) {
	const perCommit = 100_000
	const batch = 500
	props, _ := sinkProps(b, extra)
	props[KeyMaxBufferedRecords] = "10000000"
	task, _ := startTask(b, props)
	defer task.Stop()
	// pre-build the records outside the timer
	recs := benchRecords(perCommit, keys, 0)
	ctx := context.Background()
	var files, commits int64
	cpu0 := cpuSeconds()
	b.ResetTimer()
	start := time.Now()
	off := int64(0)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for _, r := range recs { // fresh offsets every round
			r.Offset, r.OriginalOffset = off, off
			off++
		}
		b.StartTimer()
		for j := 0; j < len(recs); j += batch {
			require.NoError(b, task.Put(ctx, recs[j:min(j+batch, len(recs))]))
		}
		before := task.coord.stats()
		require.True(b, task.coord.CommitNow(ctx))
		after := task.coord.stats()
		files += (after.DataFiles + after.DeleteFiles) - (before.DataFiles + before.DeleteFiles)
		commits++
	}
	b.StopTimer()
	el := time.Since(start).Seconds()
	n := float64(b.N * perCommit)
	b.ReportMetric(n/el, "records/s")
	b.ReportMetric((cpuSeconds()-cpu0)/n*1e6, "cpu-s/M-records")
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
	b.ReportMetric(float64(files)/float64(commits), "files/commit")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkAppend: append mode, unpartitioned.
func BenchmarkAppend(b *testing.B) {
	benchSink(b, map[string]string{KeyTables: "bench.orders_append"}, 1<<62)
}

// BenchmarkAppendPartitioned: append mode, partitioned by day(ts) and region.
func BenchmarkAppendPartitioned(b *testing.B) {
	benchSink(b, map[string]string{KeyTables: "bench.orders_append_p", KeyDefaultPartitionBy: "day(ts),region"}, 1<<62)
}

// BenchmarkUpsert: upsert mode on 50k keys (each commit touches every key twice: collapse +
// one equality delete per key), unpartitioned.
func BenchmarkUpsert(b *testing.B) {
	benchSink(b, map[string]string{KeyTables: "bench.orders_upsert", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"}, 50_000)
}

// BenchmarkUpsertBucketed: upsert mode, partitioned by bucket(id,8) (partition from the key:
// no lookup needed).
func BenchmarkUpsertBucketed(b *testing.B) {
	benchSink(b, map[string]string{KeyTables: "bench.orders_upsert_b", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true",
		KeyDefaultPartitionBy: "bucket(id,8)"}, 50_000)
}

// BenchmarkUpsertVersioned: upsert with a version column: each commit scans the live rows of
// its keys (stale-version check), the price of version-aware upserts.
func BenchmarkUpsertVersioned(b *testing.B) {
	benchSink(b, map[string]string{KeyTables: "bench.orders_upsert_v", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true",
		KeyVersionColumn: "version"}, 50_000)
}

// BenchmarkCommitRound compares one commit round of two tasks (50,000 append records each)
// committed in-process (local: both tasks in one process) with the cross-process protocol
// (topic: each task in its own simulated process, committer + participant over the control
// topic on the real broker, files encoded and decoded). The difference is the price of one
// snapshot per round across processes.
func BenchmarkCommitRound(b *testing.B) {
	for _, mode := range []string{"local", "topic"} {
		b.Run(mode, func(b *testing.B) { benchRound(b, mode) })
	}
}

func benchRound(b *testing.B, mode string) {
	const perTask = 50_000
	const batch = 500
	addr := kafkatest.Bootstrap(b)
	topic := kafkatest.UniqueName(b, "bench-round")
	kafkatest.CreateTopic(b, addr, topic, 2, nil)
	props, _ := sinkProps(b, map[string]string{KeyTables: "bench.round", KeyMaxBufferedRecords: "10000000", "topics": topic,
		KeyCoordination: mode, KeyControlTopic: kafkatest.UniqueName(b, "bench-ctl"), KeyCommitTimeoutMs: "60000"})
	var tasks [2]*Task
	if mode == "local" {
		tasks[0], _ = startTask(b, props)
		tasks[1], _ = startTask(b, props)
		defer tasks[0].Stop()
		defer tasks[1].Stop()
	} else {
		tasks[0] = startProcTask(b, props, "a:8083", addr)
		tasks[1] = startProcTask(b, props, "b:8083", addr)
	}
	recs := make([][]*connect.SinkRecord, 2)
	for i := range tasks {
		require.NoError(b, tasks[i].Open([]connect.TopicPartition{{Topic: topic, Partition: int32(i)}}))
		recs[i] = benchRecords(perTask, 1<<62, 0)
		for _, r := range recs[i] {
			r.Topic, r.OriginalTopic, r.Partition, r.OriginalPartition = topic, topic, int32(i), int32(i)
		}
	}
	ctx := context.Background()
	durable := func(off int64) bool {
		for i, t := range tasks {
			pc, err := t.PreCommit(ctx, nil)
			require.NoError(b, err)
			if pc[connect.TopicPartition{Topic: topic, Partition: int32(i)}].Offset != off {
				return false
			}
		}
		return true
	}
	var roundTime time.Duration
	cpu0 := cpuSeconds()
	b.ResetTimer()
	start := time.Now()
	off := int64(0)
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		for i := range recs {
			for j, r := range recs[i] {
				r.Offset, r.OriginalOffset = off+int64(j), off+int64(j)
			}
		}
		off += perTask
		b.StartTimer()
		for i, t := range tasks {
			for j := 0; j < perTask; j += batch {
				require.NoError(b, t.Put(ctx, recs[i][j:j+batch]))
			}
		}
		r0 := time.Now()
		if mode == "local" {
			require.True(b, tasks[0].coord.CommitNow(ctx))
		} else {
			tasks[0].coord.orch.(interface{ RequestRound() }).RequestRound() // task 0 holds the first partition: committer
		}
		for !durable(off) {
			time.Sleep(2 * time.Millisecond)
		}
		roundTime += time.Since(r0)
	}
	b.StopTimer()
	el := time.Since(start).Seconds()
	total := float64(b.N * perTask * 2)
	b.ReportMetric(total/el, "records/s")
	b.ReportMetric((cpuSeconds()-cpu0)/total*1e6, "cpu-s/M-records")
	b.ReportMetric(float64(roundTime.Milliseconds())/float64(b.N), "ms/round")
	b.ReportMetric(0, "ns/op")
}
