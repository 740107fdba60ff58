package icerow

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// parseDouble is jsonNumber's reading of a number with a fraction, through strconv alone.
func parseDouble(n []byte) float64 {
	f, err := strconv.ParseFloat(string(n), 64)
	if (err != nil && f != 0) || f == 0 {
		return 0
	}
	return f
}

// TestJSONDecimal: random decimals of every length around the bounds of its fast path (2^52, 22
// digits after the point, leading and trailing zeros, signs) read as strconv reads them (seed printed).
func TestJSONDecimal(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, n := range []string{"4503599627370495.5", "450359962737049.5", "0.0000000000000000000001", "0.00000000000000000000001",
		"-0.0", "0.0", "-12.50", "00012.5", "9007199254740993.0", "1.7976931348623157", "123.456e2"} {
		checkDecimal(t, []byte(n))
	}
	for range 200_000 {
		var b []byte
		if rng.IntN(2) == 0 {
			b = append(b, '-')
		}
		for range rng.IntN(18) {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		if len(b) == 0 || b[len(b)-1] == '-' {
			b = append(b, '0')
		}
		b = append(b, '.')
		for range 1 + rng.IntN(25) {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		checkDecimal(t, b)
	}
}

func checkDecimal(t testing.TB, n []byte) {
	t.Helper()
	want := parseDouble(n)
	if got := jsonNumber(n, 0, len(n), kindDouble); got != want {
		t.Fatalf("%s: %v, strconv %v", n, got, want)
	}
	if f, ok := jsonDecimal(n); ok && f != want {
		t.Fatalf("%s: fast path %v, strconv %v", n, f, want)
	}
}

// FuzzJSONDecimal: any number jsonDecimal takes it reads as strconv does.
func FuzzJSONDecimal(f *testing.F) {
	for _, n := range []string{"1.5", "-0.25", "4503599627370495.5", "0.0000000000000000000001", "12"} {
		f.Add([]byte(n))
	}
	f.Fuzz(func(t *testing.T, n []byte) {
		got, ok := jsonDecimal(n)
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(string(n), 64)
		if err != nil || got != want {
			t.Fatalf("%q: %v, strconv %v (%v)", n, got, want, err)
		}
	})
}
