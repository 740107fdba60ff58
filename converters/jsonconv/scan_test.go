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
