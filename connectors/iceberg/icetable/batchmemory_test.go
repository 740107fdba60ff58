package icetable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
)

func TestBufferPoolSizeClasses(t *testing.T) {
	p := newBufferPool(4<<10, 1<<20)
	for size, want := range map[int]int{
		1: 1, 4095: 4095, 4096: 4096, 4097: 5120, 5120: 5120, 5121: 6144, 7169: 8192, 8192: 8192,
		3 << 20: 3 << 20, 3<<20 + 1: 3<<20 + 1<<19,
	} {
		if got := p.sizeClass(size); got != want {
			t.Errorf("sizeClass(%d) = %d, want %d", size, got, want)
		}
	}
	for size := 4 << 10; size < 1<<22; size += 61 {
		c := p.sizeClass(size)
		if c < size || c > size+size/4 || p.sizeClass(c) != c {
			t.Fatalf("sizeClass(%d) = %d: not the least class at or above it", size, c)
		}
	}
}

// TestBufferPoolModel allocates, grows, writes and frees buffers at random, as builders and the
// batches they hand on do, and checks against a plain model that no buffer is handed out while
// another holder still has it, that a holder's bytes stay as it wrote them, that every buffer is
// aligned, and that the free buffers stay within the bound.
func TestBufferPoolModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for round := range 50 {
		s := seed + uint64(round)
		if err := runBufferPoolModel(s, 400); err != nil {
			// shrink: the fewest steps that still fail
			n := 400
			for n > 1 && runBufferPoolModel(s, n-1) != nil {
				n--
			}
			t.Fatalf("seed %d, %d steps: %v", s, n, runBufferPoolModel(s, n))
		}
	}
}

func runBufferPoolModel(seed uint64, steps int) error {
	rng := rand.New(rand.NewPCG(seed, 0))
	const maxHeld = 256 << 10
	p := newBufferPool(4<<10, maxHeld)
	type held struct {
		b    []byte
		fill byte
	}
	var live []held
	var fill byte
	check := func(h held) error {
		if n := bytes.Count(h.b, []byte{h.fill}); n != len(h.b) {
			return fmt.Errorf("a held buffer changed: %d of its %d bytes are another holder's", len(h.b)-n, len(h.b))
		}
		return nil
	}
	for range steps {
		switch op := rng.IntN(3); {
		case op == 0 || len(live) == 0:
			size := rng.IntN(64 << 10)
			b := p.Allocate(size)
			if len(b) != size {
				return fmt.Errorf("Allocate(%d) gave %d bytes", size, len(b))
			}
			if size > 0 && uintptr(unsafe.Pointer(&b[0]))%bufferAlignment != 0 {
				return fmt.Errorf("Allocate(%d) not aligned", size)
			}
			fill++
			copy(b, bytes.Repeat([]byte{fill}, size))
			live = append(live, held{b, fill})
		case op == 1:
			k := rng.IntN(len(live))
			if err := check(live[k]); err != nil {
				return err
			}
			old := live[k]
			size := len(old.b) + rng.IntN(32<<10)
			b := p.Reallocate(size, old.b)
			live[k].b = b
			if err := check(held{b[:len(old.b)], old.fill}); err != nil {
				return fmt.Errorf("Reallocate: %w", err)
			}
			copy(b[len(old.b):], bytes.Repeat([]byte{old.fill}, size-len(old.b)))
		default:
			k := rng.IntN(len(live))
			if err := check(live[k]); err != nil {
				return err
			}
			p.Free(live[k].b)
			live = append(live[:k], live[k+1:]...)
		}
		for _, h := range live {
			if err := check(h); err != nil {
				return err
			}
		}
		if p.held > maxHeld {
			return fmt.Errorf("the pool holds %d bytes, over %d", p.held, maxHeld)
		}
	}
	return nil
}
