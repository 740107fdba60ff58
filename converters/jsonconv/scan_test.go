package jsonconv

import (
	"math/rand/v2"
	"testing"
)

// TestScanString: the end of a string token and whether it has escapes, against a walk byte by byte.
func TestScanString(t *testing.T) {
	ref := func(b []byte, i int) (int, bool) {
		plain := true
		for i++; i < len(b); i++ {
			switch b[i] {
			case '"':
				return i + 1, plain
			case '\\':
				plain = false
				i++
			}
		}
		return len(b), plain
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	alphabet := []byte(`ab"\\x`)
	for n := 0; n < 200_000; n++ {
		b := []byte{'"'}
		for range r.IntN(40) {
			b = append(b, alphabet[r.IntN(len(alphabet))])
		}
		b = append(b, '"')
		gotEnd, gotPlain := scanString(b, 0)
		wantEnd, wantPlain := ref(b, 0)
		if wantEnd > len(b) {
			wantEnd = len(b)
		}
		if gotEnd != wantEnd || gotPlain != wantPlain {
			t.Fatalf("scanString(%q) = %d, %v; want %d, %v", b, gotEnd, gotPlain, wantEnd, wantPlain)
		}
	}
}

// plainASCII stops at the first byte that validString must look at, or where fewer than 8 bytes are
// left, for every byte value at every place, and for random text.
func TestPlainASCII(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	want := func(b []byte, i int) int {
		for ; i+8 <= len(b); i += 8 {
			for j, c := range b[i : i+8] {
				if !plain(c) {
					return i + j
				}
			}
		}
		return i
	}
	b := make([]byte, 19)
	for c := range 256 {
		for p := range b {
			for j := range b {
				b[j] = 'a'
			}
			b[p] = byte(c)
			for i := range 3 {
				if got, w := plainASCII(b, i), want(b, i); got != w {
					t.Fatalf("byte 0x%02x at %d, from %d: %d, want %d", c, p, i, got, w)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab \x1f\x20\x7e\x7f\x80\xff\"\\\x00\x21\x5b\x5d")
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			if rng.IntN(4) == 0 {
				b[j] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[j] = byte(0x20 + rng.IntN(0x60))
			}
		}
		if got, w := plainASCII(b, 0), want(b, 0); got != w {
			t.Fatalf("%q: %d, want %d", b, got, w)
		}
	}
}
