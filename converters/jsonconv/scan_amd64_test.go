package jsonconv

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// plainASCII32 stops at the first byte that is not plain, or at a multiple of 32 where fewer than 32
// bytes are left, for every byte value at every place of inputs of every length up to 100.
func TestPlainASCII32(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 on this machine")
	}
	want := func(b []byte) int {
		k := 0
		for ; len(b)-k >= 32; k += 32 {
			for j, c := range b[k : k+32] {
				if !plainByte[c] {
					return k + j
				}
			}
		}
		return k
	}
	for n := range 101 {
		b := make([]byte, n)
		for p := range n {
			for c := range 256 {
				for j := range b {
					b[j] = 'a' + byte(j%26)
				}
				b[p] = byte(c)
				if got, w := plainASCII32(b), want(b); got != w {
					t.Fatalf("%d bytes, 0x%02x at %d: %d, want %d", n, c, p, got, w)
				}
			}
		}
		for j := range b {
			b[j] = 'a'
		}
		if got, w := plainASCII32(b), want(b); got != w {
			t.Fatalf("%d plain bytes: %d, want %d", n, got, w)
		}
	}
}

// The check takes the same objects, lists the same members and gives the same errors with and
// without its 32-byte string steps, for random objects of long strings.
func TestValidStringStepsAgree(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 on this machine")
	}
	defer func() { hasAVX2 = true }()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	alphabet := []string{"a", "b", " ", "\"", "\\\"", "\\u00e9", "\\x", "\x1f", "\x7f", "é", "\xff", "\xe2\x82", "€", "\\n"}
	str := func() string {
		s := `"`
		for range r.IntN(120) {
			if r.IntN(20) == 0 {
				s += alphabet[r.IntN(len(alphabet))]
			} else {
				s += string(rune('a' + r.IntN(26)))
			}
		}
		return s + `"`
	}
	for range 50_000 {
		b := []byte("{")
		for k := range r.IntN(5) {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, str()...)
			b = append(b, ':')
			b = append(b, str()...)
		}
		b = append(b, '}')
		hasAVX2 = true
		m1, e1, err1 := validObject(b, 0, 0, nil, true)
		hasAVX2 = false
		m2, e2, err2 := validObject(b, 0, 0, nil, true)
		if e1 != e2 || fmt.Sprint(err1) != fmt.Sprint(err2) || fmt.Sprint(m1) != fmt.Sprint(m2) {
			t.Fatalf("%q: with 32-byte steps %v %d %v, without %v %d %v", b, m1, e1, err1, m2, e2, err2)
		}
	}
}
