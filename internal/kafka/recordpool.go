package kafka

import (
	"math/bits"
	"sync"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

// RecordPool is the memory the consumers' fetched batches are decoded into, for reuse (kgo.WithPools):
// the slices of Records a batch's records are decoded into, and the buffers the Decompressor decodes lz4
// batches into. A batch's memory comes back when every record the client kept of it was recycled
// (kgo.Record.Recycle), zeroed by the client; a consumer that recycles nothing leaves it all to the
// collector. The pool keeps at most max bytes of free memory, and every trimEvery gives up what it did
// not need since: the least it held in that time. Sizes are rounded up to classes a quarter of a power
// of two apart, so that a freed slice serves a later batch of about its size.
type RecordPool struct {
	max int

	mu      sync.Mutex
	bufs    freeLists[byte]
	recs    freeLists[kgo.Record]
	held    int // bytes in bufs and recs
	low     int // the least held since trimmed
	trimmed time.Time
}

// trimEvery is how often the pool gives the collector the free memory it did not use.
const trimEvery = time.Second

// minPooled is the smallest slice the pool keeps: below it the Go allocator is as cheap.
const minPooled = 4 << 10

const recordSize = int(unsafe.Sizeof(kgo.Record{}))

var _ interface {
	kgo.PoolDecompressBytes
	kgo.PoolRecords
} = (*RecordPool)(nil)

// NewRecordPool returns a pool that keeps at most max bytes of free memory.
func NewRecordPool(max int) *RecordPool {
	return &RecordPool{max: max, bufs: freeLists[byte]{}, recs: freeLists[kgo.Record]{}}
}

// sizeClass is the capacity n is rounded up to: the next of 1, 1.25, 1.5 and 1.75 times a power of two.
func sizeClass(n int) int {
	if n <= 4 {
		return n
	}
	base := 1 << (bits.Len(uint(n-1)) - 1) // the largest power of two below n
	step := base / 4
	return base + (n-base+step-1)/step*step
}

// Bytes returns a zeroed slice of length n from the pool, or a new one; its capacity is n's class.
func (p *RecordPool) Bytes(n int) []byte {
	c := sizeClass(n)
	if c < minPooled {
		return make([]byte, n)
	}
	if b := take(p, p.bufs, c, 1); b != nil {
		return b[:n]
	}
	return make([]byte, n, c)
}

// GetDecompressBytes implements kgo.PoolDecompressBytes; the client does not call it, as the
// consumers have their own Decompressor (which takes its buffers from Bytes).
func (p *RecordPool) GetDecompressBytes(compressed []byte, _ kgo.CompressionCodecType) []byte {
	return p.Bytes(len(compressed))[:0]
}

// PutDecompressBytes implements kgo.PoolDecompressBytes: the client gives back a batch's buffer, zeroed,
// once its records were recycled. Buffers not of a class (another codec's) are left to the collector.
func (p *RecordPool) PutDecompressBytes(b []byte) { put(p, p.bufs, b, 1) }

// GetRecords implements kgo.PoolRecords: n Records, of a capacity n's class; the client sets every
// field of those it decodes into.
func (p *RecordPool) GetRecords(n int) []kgo.Record {
	c := sizeClass(n)
	if c*recordSize < minPooled {
		return make([]kgo.Record, n)
	}
	if r := take(p, p.recs, c, recordSize); r != nil {
		return r[:n]
	}
	return make([]kgo.Record, n, c)
}

// PutRecords implements kgo.PoolRecords: the client gives back a batch's Records once those it kept
// were recycled.
func (p *RecordPool) PutRecords(r []kgo.Record) { put(p, p.recs, r, recordSize) }

// take takes a free slice of capacity c from f, whose elements are size bytes (nil: none is free).
func take[T any](p *RecordPool, f freeLists[T], c, size int) []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := f.take(c)
	if s != nil {
		p.held -= cap(s) * size
		p.low = min(p.low, p.held)
	}
	return s
}

// put keeps s in f, whose elements are size bytes, when its capacity is a class and there is room.
func put[T any](p *RecordPool, f freeLists[T], s []T, size int) {
	c := cap(s)
	if c*size < minPooled || sizeClass(c) != c {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held+c*size <= p.max {
		f[c] = append(f[c], s[:c])
		p.held += c * size
	}
	p.trim(time.Now())
}

// trim drops, once per trimEvery, as many free bytes as the pool held throughout the last period: no
// batch needed them. Caller holds p.mu.
func (p *RecordPool) trim(now time.Time) {
	if now.Sub(p.trimmed) < trimEvery {
		return
	}
	dropped := p.bufs.shed(p.low, 1)
	dropped += p.recs.shed(p.low-dropped, recordSize)
	p.held -= dropped
	p.low, p.trimmed = p.held, now
}

// freeLists are free slices by capacity (a size class).
type freeLists[T any] map[int][][]T

// takeClasses is how many classes above the one asked for take looks in: batches vary in size, and a
// slice up to twice as large serves one that finds its own class empty.
const takeClasses = 4

// take removes and returns a slice of capacity c, or of one of the next takeClasses classes (nil:
// none).
func (f freeLists[T]) take(c int) []T {
	for range takeClasses + 1 {
		if l := f[c]; len(l) > 0 {
			s := l[len(l)-1]
			l[len(l)-1] = nil
			f[c] = l[:len(l)-1]
			return s
		}
		c = sizeClass(c + 1)
	}
	return nil
}

// shed removes slices, whose elements are size bytes, until n bytes are gone or none is left; it
// returns the bytes removed.
func (f freeLists[T]) shed(n, size int) int {
	removed := 0
	for c, l := range f {
		for len(l) > 0 && removed < n {
			l[len(l)-1] = nil
			l = l[:len(l)-1]
			removed += c * size
		}
		f[c] = l
	}
	return removed
}
