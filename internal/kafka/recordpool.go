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
	bufs    map[int][][]byte       // by capacity (a class)
	recs    map[int][][]kgo.Record // by capacity (a class)
	held    int                    // bytes in bufs and recs
	low     int                    // the least held since trimmed
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
	return &RecordPool{max: max, bufs: map[int][][]byte{}, recs: map[int][][]kgo.Record{}}
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
	p.mu.Lock()
	if l := p.bufs[c]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		p.bufs[c] = l[:len(l)-1]
		p.held -= c
		p.low = min(p.low, p.held)
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	return make([]byte, n, c)
}

// GetDecompressBytes implements kgo.PoolDecompressBytes; the client does not call it, as the
// consumers have their own Decompressor (which takes its buffers from Bytes).
func (p *RecordPool) GetDecompressBytes(compressed []byte, _ kgo.CompressionCodecType) []byte {
	return p.Bytes(len(compressed))[:0]
}

// PutDecompressBytes implements kgo.PoolDecompressBytes: the client gives back a batch's buffer, zeroed,
// once its records were recycled. Buffers not of a class (another codec's) are left to the collector.
func (p *RecordPool) PutDecompressBytes(b []byte) {
	c := cap(b)
	if c < minPooled || sizeClass(c) != c {
		return
	}
	p.mu.Lock()
	if p.held+c <= p.max {
		p.bufs[c] = append(p.bufs[c], b[:c])
		p.held += c
	}
	p.trim(time.Now())
	p.mu.Unlock()
}

// GetRecords implements kgo.PoolRecords: n Records, of a capacity n's class; the client sets every
// field of those it decodes into.
func (p *RecordPool) GetRecords(n int) []kgo.Record {
	c := sizeClass(n)
	if c*recordSize < minPooled {
		return make([]kgo.Record, n)
	}
	p.mu.Lock()
	if l := p.recs[c]; len(l) > 0 {
		r := l[len(l)-1]
		l[len(l)-1] = nil
		p.recs[c] = l[:len(l)-1]
		p.held -= c * recordSize
		p.low = min(p.low, p.held)
		p.mu.Unlock()
		return r[:n]
	}
	p.mu.Unlock()
	return make([]kgo.Record, n, c)
}

// PutRecords implements kgo.PoolRecords: the client gives back a batch's Records once those it kept
// were recycled.
func (p *RecordPool) PutRecords(r []kgo.Record) {
	c := cap(r)
	if c*recordSize < minPooled || sizeClass(c) != c {
		return
	}
	p.mu.Lock()
	if p.held+c*recordSize <= p.max {
		p.recs[c] = append(p.recs[c], r[:c])
		p.held += c * recordSize
	}
	p.trim(time.Now())
	p.mu.Unlock()
}

// trim drops, once per trimEvery, as many free bytes as the pool held throughout the last period: no
// batch needed them. Caller holds p.mu.
func (p *RecordPool) trim(now time.Time) {
	if now.Sub(p.trimmed) < trimEvery {
		return
	}
	drop := p.low
	for c, l := range p.bufs {
		for len(l) > 0 && drop > 0 {
			l[len(l)-1] = nil
			l = l[:len(l)-1]
			drop -= c
			p.held -= c
		}
		p.bufs[c] = l
	}
	for c, l := range p.recs {
		for len(l) > 0 && drop > 0 {
			l[len(l)-1] = nil
			l = l[:len(l)-1]
			drop -= c * recordSize
			p.held -= c * recordSize
		}
		p.recs[c] = l
	}
	p.low, p.trimmed = p.held, now
}
