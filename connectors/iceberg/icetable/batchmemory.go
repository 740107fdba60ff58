package icetable

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batchMemory is the Arrow allocator of the segments' builders. A built batch's buffers come back
// when the spool or the data file writer releases the batch, and the builders of the batches that
// follow take them again: a commit interval's rows pass through a few batches' worth of memory
// rather than each batch's being allocated, zeroed and collected afresh.
var batchMemory = newBufferPool(minPooledBuffer, maxPooledBytes)

const (
	// minPooledBuffer is the smallest buffer the pool keeps: below it, the Go allocator is as cheap.
	minPooledBuffer = 4 << 10
	// maxPooledBytes bounds the free buffers the pool holds; beyond it, freed buffers are left to
	// the collector.
	maxPooledBytes = 16 << 20
	// bufferAlignment is Arrow's buffer alignment.
	bufferAlignment = 64
)

// bufferPool is a memory.Allocator that keeps freed buffers of at least min bytes, at most max
// bytes of them, for reuse. Buffer sizes are rounded up to size classes a quarter of a power of two
// apart, so that a freed buffer serves a later request of about its size. A reused buffer is not
// zeroed: Arrow's builders write every byte of a value they append and zero their validity bitmaps
// themselves, and the bytes under a null are unspecified in Arrow's format.
type bufferPool struct {
	min, max int

	mu   sync.Mutex
	free map[int][][]byte // by capacity (a size class)
	held int              // bytes in free
}

var _ memory.Allocator = (*bufferPool)(nil)

func newBufferPool(min, max int) *bufferPool {
	return &bufferPool{min: min, max: max, free: map[int][][]byte{}}
}

// sizeClass is the capacity a buffer of size bytes is given: size itself below the pool's minimum,
// else the next of 1, 1.25, 1.5 and 1.75 times a power of two.
func (p *bufferPool) sizeClass(size int) int {
	if size < p.min {
		return size
	}
	base := 1 << (bits.Len(uint(size-1)) - 1) // the largest power of two below size
	step := base / 4
	return base + (size-base+step-1)/step*step
}

func (p *bufferPool) Allocate(size int) []byte {
	class := p.sizeClass(size)
	if class >= p.min {
		p.mu.Lock()
		if l := p.free[class]; len(l) > 0 {
			b := l[len(l)-1]
			l[len(l)-1] = nil
			p.free[class] = l[:len(l)-1]
			p.held -= class
			p.mu.Unlock()
			return b[:size]
		}
		p.mu.Unlock()
	}
	return alignedBuffer(size, class)
}

func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free keeps b for reuse when it is one of the pool's size classes and there is room.
func (p *bufferPool) Free(b []byte) {
	class := cap(b)
	if class < p.min || p.sizeClass(class) != class {
		return
	}
	p.mu.Lock()
	if p.held+class <= p.max {
		p.free[class] = append(p.free[class], b[:class])
		p.held += class
	}
	p.mu.Unlock()
}

// alignedBuffer is a buffer of length size and capacity class whose first byte is Arrow-aligned.
func alignedBuffer(size, class int) []byte {
	b := make([]byte, class)
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%bufferAlignment == 0 {
		return b[:size]
	}
	b = make([]byte, class+bufferAlignment)
	shift := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) % bufferAlignment)
	return b[shift : shift+size : shift+class]
}
