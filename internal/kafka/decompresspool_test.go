package kafka

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDecompressPoolClasses: a buffer asked for n bytes holds n and at most a quarter more (from 4 KiB
// up); a buffer given back serves only requests its capacity holds.
func TestDecompressPoolClasses(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for c := 1; c < numClasses; c++ {
		require.Greater(t, classSize(c), classSize(c-1))
	}
	require.Equal(t, 4096, classSize(0))
	require.Equal(t, 64<<20, classSize(numClasses-1))
	for range 100_000 {
		n := 1 + rng.IntN(80<<20)
		if c := classAtLeast(n); c < numClasses {
			require.GreaterOrEqual(t, classSize(c), n, "n %d", n)
			require.True(t, c == 0 || classSize(c-1) < n, "n %d: a smaller class holds it", n)
			require.LessOrEqual(t, classSize(c), max(n+n/4, 4096), "n %d", n)
		} else {
			require.Greater(t, n, 64<<20)
		}
		if c := classAtMost(n); c >= 0 {
			require.LessOrEqual(t, classSize(c), n, "cap %d", n)
			require.True(t, c == numClasses-1 || classSize(c+1) > n, "cap %d: a larger class fits", n)
		} else {
			require.True(t, n < 4096 || n > 64<<20, "cap %d", n)
		}
	}
}

// TestDecompressPoolReuse: buffers come back to the requests they fit, the estimate follows the
// batches' ratio, and the free lists never hold more than maxFreeBytes.
func TestDecompressPoolReuse(t *testing.T) {
	p := NewDecompressPool()
	compressed := make([]byte, 10_000)
	b := p.GetDecompressBytes(compressed, kgo.CodecLz4)
	require.Zero(t, len(b))
	require.GreaterOrEqual(t, cap(b), 4*len(compressed)+readSlack)
	p.PutDecompressBytes(b[:cap(b)])
	again := p.GetDecompressBytes(compressed, kgo.CodecLz4)
	require.Equal(t, &b[:1][0], &again[:1][0], "the buffer given back is handed out again")

	for range 100 {
		p.OnFetchBatchRead(kgo.BrokerMetadata{}, "t", 0, kgo.FetchBatchMetrics{CompressedBytes: 1000, UncompressedBytes: 10_000, CompressionType: 3})
	}
	require.InDelta(t, 10*ratioUnit, int(p.ratio.Load()), ratioUnit/10)
	require.GreaterOrEqual(t, cap(p.GetDecompressBytes(compressed, kgo.CodecLz4)), 10*len(compressed)+readSlack)

	for range 200 {
		p.PutDecompressBytes(make([]byte, 1<<20))
	}
	require.LessOrEqual(t, p.freeBytes, maxFreeBytes)
	p.PutDecompressBytes(make([]byte, 100<<20)) // larger than any class: left to the collector
	require.LessOrEqual(t, p.freeBytes, maxFreeBytes)

	p.Release()
	require.Zero(t, p.freeBytes)
	fresh := p.GetDecompressBytes(make([]byte, 100_000), kgo.CodecLz4)
	require.GreaterOrEqual(t, cap(fresh), 10*100_000)
	for _, l := range p.free {
		require.Empty(t, l)
	}
}
