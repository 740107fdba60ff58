package kafka

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// DecompressPool holds the buffers a consumer decompresses fetched batches into
// (kgo.PoolDecompressBytes). franz-go takes a buffer back once every record of its batch was recycled
// (kgo.Record.Recycle), so a consumer with this pool must recycle a record only when nothing can still
// reference its key, value or header bytes; a record never recycled costs only its buffer's reuse.
//
// A batch gets a buffer sized from the decompression ratio of the batches read before
// (OnFetchBatchRead), rounded up to a size class a quarter power of two apart: at most a quarter more
// than it needs, and rarely grown while decompressing. Buffers given back wait in free lists by class
// up to maxFreeBytes in all; more are left to the garbage collector. The free lists are not emptied
// at each collection, as a sync.Pool is: a sink that allocates much collects often, and would lose
// the buffers between two fetches. Release empties them when the consumer is idle.
type DecompressPool struct {
	ratio atomic.Uint64 // decompressed bytes per compressed byte of recent batches, in 1/ratioUnit

	mu        sync.Mutex
	free      [numClasses][][]byte
	freeBytes int
}

const (
	ratioUnit    = 1024
	initialRatio = 4 * ratioUnit // JSON under lz4 or zstd decompresses to 3-8 times its size
	// The smallest class holds 4 KiB; the largest 64 MiB: a larger buffer is left to the collector.
	minClassShift = 12
	maxClassShift = 26
	numClasses    = (maxClassShift-minClassShift)*4 + 1
	// readSlack is room past the estimate: bytes.Buffer.ReadFrom grows a buffer with less than
	// bytes.MinRead (512) bytes free before its last read.
	readSlack = 1024
	// maxFreeBytes bounds the bytes waiting in the free lists: a few fetches' worth of batches of
	// max.partition.fetch.bytes (256 KiB) compressed several times.
	maxFreeBytes = 16 << 20
	// classReach is how many classes above the one asked for a free buffer may come from (up to
	// twice the size), so that a drifting estimate still finds buffers.
	classReach = 3
)

var (
	_ kgo.PoolDecompressBytes = (*DecompressPool)(nil)
	_ kgo.HookFetchBatchRead  = (*DecompressPool)(nil)
)

// NewDecompressPool returns an empty pool.
func NewDecompressPool() *DecompressPool {
	p := &DecompressPool{}
	p.ratio.Store(initialRatio)
	return p
}

// classSize is the capacity of the buffers of class c.
func classSize(c int) int {
	return (4 + c%4) << (minClassShift + c/4 - 2)
}

// classAtLeast is the smallest class whose buffers hold n bytes (numClasses: none).
func classAtLeast(n int) int {
	if n <= 1<<minClassShift {
		return 0
	}
	shift := bits.Len(uint(n-1)) - 1 // 1<<shift < n <= 1<<(shift+1)
	c := (shift-minClassShift)*4 + 1
	for c < numClasses && classSize(c) < n {
		c++
	}
	return c
}

// classAtMost is the largest class whose buffers a slice of capacity n can serve (-1: none).
func classAtMost(n int) int {
	if n < 1<<minClassShift {
		return -1
	}
	if n >= 1<<maxClassShift {
		if n == 1<<maxClassShift {
			return numClasses - 1
		}
		return -1 // larger than any class: not kept
	}
	shift := bits.Len(uint(n)) - 1 // 1<<shift <= n < 1<<(shift+1)
	c := (shift - minClassShift) * 4
	for c+1 < numClasses && classSize(c+1) <= n {
		c++
	}
	return c
}

// GetDecompressBytes implements kgo.PoolDecompressBytes.
func (p *DecompressPool) GetDecompressBytes(compressed []byte, _ kgo.CompressionCodecType) []byte {
	want := int(uint64(len(compressed))*p.ratio.Load()/ratioUnit) + readSlack
	c := classAtLeast(want)
	if c >= numClasses {
		return make([]byte, 0, want)
	}
	p.mu.Lock()
	for k := c; k < min(c+classReach+1, numClasses); k++ {
		if n := len(p.free[k]); n > 0 {
			b := p.free[k][n-1]
			p.free[k][n-1] = nil
			p.free[k] = p.free[k][:n-1]
			p.freeBytes -= cap(b)
			p.mu.Unlock()
			return b[:0]
		}
	}
	p.mu.Unlock()
	return make([]byte, 0, classSize(c))
}

// PutDecompressBytes implements kgo.PoolDecompressBytes; franz-go zeroed b.
func (p *DecompressPool) PutDecompressBytes(b []byte) {
	c := classAtMost(cap(b))
	if c < 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.freeBytes+cap(b) > maxFreeBytes {
		return
	}
	p.free[c] = append(p.free[c], b[:0])
	p.freeBytes += cap(b)
}

// Release drops the free buffers, for the collector: the consumer is idle.
func (p *DecompressPool) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.free[:])
	p.freeBytes = 0
}

// OnFetchBatchRead implements kgo.HookFetchBatchRead: it follows the decompression ratio, moving an
// eighth of the way to each compressed batch's.
func (p *DecompressPool) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	if m.CompressionType == 0 || m.CompressedBytes <= 0 {
		return
	}
	r := uint64(m.UncompressedBytes) * ratioUnit / uint64(m.CompressedBytes)
	old := p.ratio.Load()
	p.ratio.Store(old - old/8 + r/8) // a lost update between consumers of one pool only delays the estimate
}
