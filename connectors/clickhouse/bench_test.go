package clickhouse

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/ch-go/compress"
	"github.com/ClickHouse/ch-go/proto"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters/jsonconv"
)

// Benchmarks of the sink's CPU path: Kafka records to encoded (LZ4-compressed) native insert blocks,
// against ch-go's raw column building for the same rows. No network and no engine: run with
//
//	go test -run '^$' -bench . -benchtime 1000000x ./connectors/clickhouse/
//
// Each op is one row; blocks of benchRows rows are encoded at the client's protocol version and
// compressed as ch-go does before writing them to the socket. Metrics: rows/s and CPU seconds (user +
// system, whole process) per million rows.

const (
	benchRows     = 50_000
	benchDistinct = 1024 // distinct rows cycled through by every benchmark (same data for all three)
)

var benchTable = &tableInfo{db: "bench", name: "events", columns: []colInfo{
	{name: "id", typ: "UInt64"},
	{name: "user", typ: "String"},
	{name: "status", typ: "LowCardinality(String)"},
	{name: "ts", typ: "DateTime64(3, 'UTC')"},
	{name: "amount", typ: "Float64"},
	{name: "note", typ: "Nullable(String)"},
	{name: "tags", typ: "Array(String)"},
	{name: "flag", typ: "UInt8"},
}}

var benchSchema = connect.StructBuilder().Name("bench.Value").
	Field("id", connect.Int64Schema).Field("user", connect.StringSchema).Field("status", connect.StringSchema).
	Field("ts", connect.TimestampSchema).Field("amount", connect.Float64Schema).Field("note", connect.OptionalStringSchema).
	Field("tags", connect.ArrayBuilder(connect.StringSchema).MustBuild()).Field("flag", connect.Int8Schema).MustBuild()

var benchStatuses = []string{"new", "paid", "shipped", "returned"}

func benchValue(i int) *connect.Struct {
	s := connect.NewStruct(benchSchema).MustPut("id", int64(i)).MustPut("user", fmt.Sprintf("user-%d", i%10007)).
		MustPut("status", benchStatuses[i%4]).MustPut("ts", time.UnixMilli(1_764_000_000_000+int64(i)).UTC()).
		MustPut("amount", float64(i)*0.25).MustPut("tags", []any{"a", "b"}).MustPut("flag", int8(i%2))
	if i%3 != 0 {
		s.MustPut("note", "some note")
	}
	return s
}

type cpuMeter struct {
	start time.Time
	ru    syscall.Rusage
}

func startCPU() cpuMeter {
	var m cpuMeter
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &m.ru)
	m.start = time.Now()
	return m
}

func (m cpuMeter) report(b *testing.B, rows int) {
	wall := time.Since(m.start)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano()+ru.Stime.Nano()-m.ru.Utime.Nano()-m.ru.Stime.Nano()) * time.Nanosecond
	b.ReportMetric(float64(rows)/wall.Seconds(), "rows/s")
	b.ReportMetric(cpu.Seconds()/float64(rows)*1e6, "cpu-s/Mrows")
}

type encoder struct {
	buf  proto.Buffer
	comp *compress.Writer
	out  int
}

func (e *encoder) encode(b *testing.B, in proto.Input) {
	for _, c := range in {
		if p, ok := c.Data.(interface{ Prepare() error }); ok {
			if err := p.Prepare(); err != nil {
				b.Fatal(err)
			}
		}
	}
	e.buf.Reset()
	blk := proto.Block{Columns: len(in), Rows: in[0].Data.Rows(), Info: proto.BlockInfo{BucketNum: -1}}
	if err := blk.EncodeBlock(&e.buf, proto.Version, in); err != nil {
		b.Fatal(err)
	}
	if err := e.comp.Compress(e.buf.Buf); err != nil {
		b.Fatal(err)
	}
	e.out += len(e.comp.Data)
}

func benchSink(b *testing.B, next func(i int) *connect.SinkRecord) {
	task := &Task{cfg: &Config{BatchMaxRows: benchRows, BatchMaxBytes: 1 << 30}}
	blk, err := newBlock(benchTable, task.cfg)
	if err != nil {
		b.Fatal(err)
	}
	enc := &encoder{comp: compress.NewWriter(compress.LevelZero, compress.LZ4)}
	b.ReportAllocs()
	b.ResetTimer()
	m := startCPU()
	for i := 0; i < b.N; i++ {
		rec := next(i)
		r, skip, err := task.extract(rec, benchTable)
		if err != nil || skip {
			b.Fatal(err, skip)
		}
		if err := blk.add(&r); err != nil {
			b.Fatal(err)
		}
		if blk.rows == benchRows || i == b.N-1 {
			_, in := blk.input(benchTable.qualified())
			enc.encode(b, in)
			blk.reset()
		}
	}
	m.report(b, b.N)
	b.ReportMetric(float64(enc.out)/float64(b.N), "wire-B/row")
}

// BenchmarkRecordsToBlocks: converted records (Connect structs, as any converter delivers them) to
// compressed native blocks through the sink's type mapping.
func BenchmarkRecordsToBlocks(b *testing.B) {
	recs := make([]*connect.SinkRecord, benchDistinct)
	for i := range recs {
		recs[i] = &connect.SinkRecord{Topic: "events", ValueSchema: benchSchema, Value: benchValue(i), Offset: int64(i)}
	}
	benchSink(b, func(i int) *connect.SinkRecord { return recs[i%len(recs)] })
}

// BenchmarkKafkaJSONToBlocks: Kafka value bytes (JsonConverter with schemas, ~700 B/record) through the
// project's JsonConverter and the sink to compressed native blocks.
func BenchmarkKafkaJSONToBlocks(b *testing.B) {
	conv := jsonconv.New()
	if err := conv.Configure(map[string]string{"schemas.enable": "true"}, false); err != nil {
		b.Fatal(err)
	}
	payloads := make([][]byte, benchDistinct)
	for i := range payloads {
		p, err := conv.FromConnectData("events", nil, benchSchema, benchValue(i))
		if err != nil {
			b.Fatal(err)
		}
		payloads[i] = p
	}
	rec := &connect.SinkRecord{Topic: "events"}
	benchSink(b, func(i int) *connect.SinkRecord {
		sv, err := conv.ToConnectData("events", nil, payloads[i%len(payloads)])
		if err != nil {
			b.Fatal(err)
		}
		rec.ValueSchema, rec.Value, rec.Offset = sv.Schema, sv.Value, int64(i)
		return rec
	})
}

// BenchmarkRawChGoColumns: the same rows appended straight to ch-go's typed columns from Go values
// (what a hand-written, schema-specific ch-go program does), encoded and compressed the same way.
func BenchmarkRawChGoColumns(b *testing.B) {
	var (
		id     proto.ColUInt64
		user   proto.ColStr
		status = new(proto.ColStr).LowCardinality()
		ts     = new(proto.ColDateTime64).WithPrecision(proto.PrecisionMilli).WithLocation(time.UTC)
		amount proto.ColFloat64
		note   = new(proto.ColStr).Nullable()
		tags   = new(proto.ColStr).Array()
		flag   proto.ColUInt8
	)
	in := proto.Input{{Name: "id", Data: &id}, {Name: "user", Data: &user}, {Name: "status", Data: status}, {Name: "ts", Data: ts},
		{Name: "amount", Data: &amount}, {Name: "note", Data: note}, {Name: "tags", Data: tags}, {Name: "flag", Data: &flag}}
	users := make([]string, benchDistinct)
	for i := range users {
		users[i] = fmt.Sprintf("user-%d", i%10007)
	}
	tagv := []string{"a", "b"}
	enc := &encoder{comp: compress.NewWriter(compress.LevelZero, compress.LZ4)}
	b.ReportAllocs()
	b.ResetTimer()
	m := startCPU()
	for i := 0; i < b.N; i++ {
		j := i % benchDistinct
		id.Append(uint64(j))
		user.Append(users[j])
		status.Append(benchStatuses[j%4])
		ts.Append(time.UnixMilli(1_764_000_000_000 + int64(j)))
		amount.Append(float64(j) * 0.25)
		if j%3 != 0 {
			note.Append(proto.NewNullable("some note"))
		} else {
			note.Append(proto.Null[string]())
		}
		tags.Append(tagv)
		flag.Append(uint8(j % 2))
		if id.Rows() == benchRows || i == b.N-1 {
			enc.encode(b, in)
			in.Reset()
		}
	}
	m.report(b, b.N)
	b.ReportMetric(float64(enc.out)/float64(b.N), "wire-B/row")
}

// BenchmarkPutIntoEngine: the whole write path on one machine — Task.Put of converted records → ch-go
// (LZ4) → loopback → chDB test shim → the real engine's MergeTree insert. The engine, the shim and the
// sink share the machine's cores, so this is a floor for a remote server, not a sink-only number.
func BenchmarkPutIntoEngine(b *testing.B) {
	s, _ := engine(b)
	db := fmt.Sprintf("bench_put_%d", time.Now().UnixNano())
	if _, err := s.Query("CREATE DATABASE "+db, ""); err != nil {
		b.Fatal(err)
	}
	defer s.Query("DROP DATABASE "+db+" SYNC", "")
	if _, err := s.Query("CREATE TABLE "+db+".events (id UInt64, user String, status LowCardinality(String), ts DateTime64(3, 'UTC'), "+
		"amount Float64, note Nullable(String), tags Array(String), flag UInt8) ENGINE = MergeTree ORDER BY id", ""); err != nil {
		b.Fatal(err)
	}
	task := startTask(b, props(db, "batch.max.rows", "50000"), nil)
	const batch = 10_000
	recs := make([]*connect.SinkRecord, batch)
	vals := make([]*connect.Struct, benchDistinct)
	for i := range vals {
		vals[i] = benchValue(i)
	}
	ctx := context.Background()
	b.ResetTimer()
	m := startCPU()
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		for i := 0; i < n; i++ {
			recs[i] = &connect.SinkRecord{Topic: "events", ValueSchema: benchSchema, Value: vals[(done+i)%benchDistinct], Offset: int64(done + i)}
		}
		if err := task.Put(ctx, recs[:n]); err != nil {
			b.Fatal(err)
		}
		done += n
	}
	m.report(b, b.N)
}
