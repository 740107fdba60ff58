package kafka

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/lz4test"
)

func TestRecordPoolSizeClasses(t *testing.T) {
	for n, want := range map[int]int{1: 1, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 10, 4096: 4096, 4097: 5120, 7169: 8192} {
		require.Equal(t, want, sizeClass(n), "sizeClass(%d)", n)
	}
	for n := 5; n < 1<<22; n += 97 {
		c := sizeClass(n)
		require.True(t, c >= n && c <= n+n/4+1 && sizeClass(c) == c, "sizeClass(%d) = %d", n, c)
	}
	p := NewRecordPool(1 << 20)
	b := p.Bytes(5000)
	require.Len(t, b, 5000)
	require.Equal(t, 5120, cap(b))
	p.PutDecompressBytes(b)
	require.Equal(t, 5120, p.held)
	require.Equal(t, 5120, cap(p.Bytes(5100)), "a freed buffer serves a request of its class")
	require.Zero(t, p.held)
	p.PutDecompressBytes(make([]byte, 10240))
	require.Equal(t, 4096, cap(p.Bytes(4096)), "a buffer five classes up is not taken")
	require.Equal(t, 10240, cap(p.Bytes(4097)), "a buffer four classes up serves a request")
	require.Zero(t, p.held)
	p.PutDecompressBytes(make([]byte, 5000)) // not a class: another codec's
	require.Zero(t, p.held)
	p.PutDecompressBytes(make([]byte, 2<<20))
	require.Zero(t, p.held, "over the bound")
	r := p.GetRecords(100)
	require.Len(t, r, 100)
	p.PutRecords(r)
	require.Equal(t, cap(r)*recordSize, p.held)
}

// A consumer of ConsumerOpts that recycles its records reads lz4 batches into memory that earlier
// batches gave back: every record reads as produced while the consumer holds it, over random runs of
// polls held at once before they are recycled (seed printed).
func TestConsumerOptsRecycledBatches(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	require.NoError(t, err)
	defer cluster.Close()
	addr := cluster.ListenAddrs()[0]
	ctx := context.Background()
	value := func(producer, id int) []byte {
		return fmt.Appendf(nil, `{"producer":%d,"id":%d,"note":"%s"}`, producer, id, bytes.Repeat([]byte{'a' + byte(id%26)}, 100+id%300))
	}
	const perProducer = 20_000
	for i, compressor := range []kgo.Opt{kgo.ProducerBatchCompression(kgo.Lz4Compression()), kgo.WithCompressor(lz4test.JVMCompressor{})} {
		pr, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("t"), compressor,
			kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(64<<10))
		require.NoError(t, err)
		for j := range perProducer {
			pr.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "%d/%d", i, j), Value: value(i, j)}, func(_ *kgo.Record, err error) { require.NoError(t, err) })
		}
		require.NoError(t, pr.Flush(ctx))
		pr.Close()
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	held0 := fetchPool.held
	opts, err := ConsumerOpts(map[string]string{"bootstrap.servers": addr})
	require.NoError(t, err)
	cl, err := kgo.NewClient(append(opts, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"))...)
	require.NoError(t, err)
	defer cl.Close()
	check := func(r *kgo.Record) {
		var producer, id int
		_, err := fmt.Sscanf(string(r.Key), "%d/%d", &producer, &id)
		require.NoError(t, err, "key %q at offset %d", r.Key, r.Offset)
		require.Equal(t, producer*perProducer+id, int(r.Offset), "key %q", r.Key)
		require.Equal(t, string(value(producer, id)), string(r.Value), "offset %d", r.Offset)
	}
	var held [][]*kgo.Record // polls not yet recycled, oldest first
	n := 0
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for n < 2*perProducer {
		fs := cl.PollRecords(ctx, 1+rng.IntN(3000))
		require.NoError(t, fs.Err0())
		recs := fs.Records()
		n += len(recs)
		held = append(held, recs)
		for _, poll := range held { // the polls held still read as produced
			for _, r := range poll {
				check(r)
			}
		}
		for len(held) > 0 && rng.IntN(3) > 0 {
			for _, r := range held[0] {
				r.Recycle()
			}
			held = held[1:]
		}
	}
	for _, poll := range held {
		for _, r := range poll {
			r.Recycle()
		}
	}
	fetchPool.mu.Lock()
	defer fetchPool.mu.Unlock()
	require.Greater(t, fetchPool.held, held0, "recycled batches gave their memory back")
}

// Once per trimEvery the pool gives up the free memory no batch needed since the last trim: the least
// it held in that time.
func TestRecordPoolTrim(t *testing.T) {
	p := NewRecordPool(1 << 20)
	p.trimmed = time.Now() // no trim before the first period ends
	var bufs [][]byte
	for range 4 {
		bufs = append(bufs, p.Bytes(5000))
	}
	for _, b := range bufs {
		p.PutDecompressBytes(b)
	}
	const c = 5120
	require.Equal(t, 4*c, p.held)
	p.trim(p.trimmed.Add(trimEvery))
	require.Equal(t, 4*c, p.held, "nothing was taken before: the least held was nothing")
	a, b := p.Bytes(5000), p.Bytes(5000)
	p.PutDecompressBytes(a)
	require.Equal(t, 3*c, p.held)
	p.trim(p.trimmed.Add(trimEvery / 2))
	require.Equal(t, 3*c, p.held, "not a period yet")
	p.trim(p.trimmed.Add(trimEvery))
	require.Equal(t, c, p.held, "two buffers were free all period")
	p.PutDecompressBytes(b)
	require.Equal(t, 2*c, p.held)
}
