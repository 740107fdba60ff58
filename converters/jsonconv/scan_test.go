package jsonconv

import (
	"math/rand/v2"
	"testing"
)

func TestPlain8(t *testing.T) {
	plain := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	b := make([]byte, 8)
	for n := 0; n < 2_000_000; n++ {
		for i := range b {
			if r.IntN(4) == 0 {
				b[i] = byte(r.IntN(256))
			} else {
				b[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		if got := plain8(b, 0); got && !plain(b) {
			t.Fatalf("plain8(%q) = true", b)
		}
	}
	for c := 0; c < 256; c++ { // every byte value in every position
		for i := range 8 {
			for j := range b {
				b[j] = 'a'
			}
			b[i] = byte(c)
			if got, want := plain8(b, 0), plain(b); got != want {
				t.Fatalf("plain8(%q) = %v", b, got)
			}
		}
	}
}

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
