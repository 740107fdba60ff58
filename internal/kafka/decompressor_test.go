package kafka

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/lz4frame"
	"github.com/connectd/connectd/internal/testutil/lz4test"
)

func TestDecompressorCodecs(t *testing.T) {
	d := NewDecompressor(1<<20, nil)
	data := bytes.Repeat([]byte("connectd "), 1000)
	got, err := d.Decompress(data, kgo.CodecNone)
	require.NoError(t, err)
	require.Equal(t, data, got)
	for _, codec := range []kgo.CompressionCodec{kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		c, err := kgo.DefaultCompressor(codec)
		require.NoError(t, err)
		var buf bytes.Buffer
		src, typ := c.Compress(&buf, data)
		got, err := d.Decompress(bytes.Clone(src), typ)
		require.NoError(t, err, "codec %d", typ)
		require.Equal(t, data, got, "codec %d", typ)
		_, err = NewDecompressor(len(data)-1, nil).Decompress(bytes.Clone(src), typ)
		require.ErrorIs(t, err, kgo.ErrMaxDecompress, "codec %d", typ)
	}
}

func TestDecompressorLZ4Errors(t *testing.T) {
	frame := lz4test.Frame(t, make([]byte, 1<<20))
	_, err := NewDecompressor(1<<20-1, nil).Decompress(frame, kgo.CodecLz4)
	require.ErrorIs(t, err, kgo.ErrMaxDecompress)
	_, err = NewDecompressor(1<<20, nil).Decompress(frame[:len(frame)-1], kgo.CodecLz4)
	require.ErrorIs(t, err, lz4frame.ErrFrame)
	require.NotErrorIs(t, err, kgo.ErrMaxDecompress)
}

// A Decompressor decodes each lz4 batch into about the room the batch before it took: over random runs of
// batches that compress alike and batches that do not (JSON, zeros, random bytes, of both producers'
// block sizes), every batch reads as written and holds at most half again its size (seed printed).
func TestDecompressorLZ4Guesses(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	d := NewDecompressor(8<<20, NewRecordPool(16<<20))
	kinds := []string{"json", "zeros", "random"}
	kind := kinds[0]
	for i := range 300 {
		if rng.IntN(5) == 0 {
			kind = kinds[rng.IntN(len(kinds))]
		}
		n := 1 + rng.IntN(300<<10)
		data := make([]byte, 0, n)
		switch kind {
		case "json":
			for j := 0; len(data) < n; j++ {
				data = fmt.Appendf(data, `{"id":%d,"note":"%s"}`, rng.IntN(1e9), bytes.Repeat([]byte{'a' + byte(j%26)}, rng.IntN(200)))
			}
			data = data[:n]
		case "zeros":
			data = data[:n]
		case "random":
			for range n {
				data = append(data, byte(rng.Uint32()))
			}
		}
		opts := []lz4.Option{lz4.BlockSizeOption(lz4.Block4Mb)}
		if rng.IntN(2) == 0 {
			opts = []lz4.Option{lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false)}
		}
		got, err := d.Decompress(lz4test.Frame(t, data, opts...), kgo.CodecLz4)
		require.NoError(t, err, "batch %d (%s, %d bytes)", i, kind, n)
		require.Equal(t, data, got, "batch %d (%s, %d bytes)", i, kind, n)
		require.LessOrEqual(t, cap(got), len(got)+len(got)/2+minPooled, "batch %d (%s, %d bytes)", i, kind, n)
	}
}

// BenchmarkLZ4Decompress compares this decoder with franz-go's default on a batch of ~400-byte JSON
// records: frames as franz-go's producer writes them (4 MiB blocks, content checksum) and as the JVM's
// writes them (64 KiB blocks, no content checksum). It reports the process's CPU per batch (the GC's
// included) with a live heap of 64 MiB, so that the GC runs about as often per batch as in a sink task.
//
//	go test ./internal/kafka -run '^$' -bench LZ4Decompress -count 6
func BenchmarkLZ4Decompress(b *testing.B) {
	var batch []byte
	for i := 0; len(batch) < 900<<10; i++ {
		v := fmt.Appendf(nil, `{"id":%d,"name":"customer-%07d","email":"customer-%07d@example.com","region":"eu-west","amount":%d.%02d,"qty":%d,"ts":"2026-01-01T00:00:00Z","version":%d,"note":"`,
			i, i, i, i%100000, i%100, i%17, i%5)
		for len(v) < 404 {
			v = append(v, 'a'+byte(len(v)%26))
		}
		batch = append(append(batch, 0, 0, 0, 0, 0, 0), append(v, '"', '}')...)
	}
	frames := map[string][]byte{
		"kgo": lz4test.Frame(b, batch),
		"jvm": lz4test.Frame(b, batch, lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false)),
	}
	ballast := make([]*[1 << 20]byte, 64)
	for i := range ballast {
		ballast[i] = new([1 << 20]byte)
	}
	defer runtime.KeepAlive(ballast)
	for _, name := range []string{"kgo", "jvm"} {
		frame := frames[name]
		for _, dec := range []struct {
			name string
			d    kgo.Decompressor
		}{{"default", kgo.DefaultDecompressor()}, {"connectd", NewDecompressor(MaxDecompressBatchBytes, nil)}} {
			b.Run(name+"/"+dec.name, func(b *testing.B) {
				b.SetBytes(int64(len(batch)))
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					out, err := dec.d.Decompress(frame, kgo.CodecLz4)
					if err != nil || len(out) != len(batch) {
						b.Fatal(err, len(out))
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestConsumerOptsDecompressor(t *testing.T) {
	d, ok := consumerOptValue(t, nil, kgo.WithDecompressor).(*Decompressor)
	require.True(t, ok, "the consumers decompress with Decompressor")
	require.Equal(t, MaxDecompressBatchBytes, d.max)
}

// A consumer of ConsumerOpts reads lz4 batches of franz-go's producer and of JVM-style frames (64 KiB
// blocks, no checksum), stored as produced by an in-process broker, record for record.
func TestConsumerOptsReadLZ4Batches(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	require.NoError(t, err)
	defer cluster.Close()
	addr := cluster.ListenAddrs()[0]
	ctx := context.Background()
	var want [][]byte
	for i, compressor := range []kgo.Opt{kgo.ProducerBatchCompression(kgo.Lz4Compression()), kgo.WithCompressor(lz4test.JVMCompressor{})} {
		pr, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("t"), compressor, kgo.ProducerLinger(50*time.Millisecond))
		require.NoError(t, err)
		for j := range 3000 {
			v := fmt.Appendf(nil, `{"producer":%d,"id":%d,"note":"%s"}`, i, j, bytes.Repeat([]byte{'a' + byte(j%26)}, j%200))
			want = append(want, v)
			pr.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) { require.NoError(t, err) })
		}
		require.NoError(t, pr.Flush(ctx))
		pr.Close()
	}
	opts, err := ConsumerOpts(map[string]string{"bootstrap.servers": addr})
	require.NoError(t, err)
	cl, err := kgo.NewClient(append(opts, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"))...)
	require.NoError(t, err)
	defer cl.Close()
	var got [][]byte
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for len(got) < len(want) {
		fs := cl.PollFetches(ctx)
		require.NoError(t, fs.Err0())
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r.Value) })
	}
	require.Equal(t, want, got)
}
