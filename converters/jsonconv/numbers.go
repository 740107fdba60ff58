// Number tokens read as Jackson reads them: int fit, 64-bit two's-complement truncation, float rounding.

package jsonconv

import (
	"math"
	"math/big"
	"strconv"

	"github.com/connectd/connectd/connect"
)

// isInt is Jackson's isInt(): an integral token that fits an int.
func isInt(b []byte, i int) (int32, bool) {
	if !isNumber(b, i) {
		return 0, false
	}
	tok, integral := numberToken(b, i)
	if !integral {
		return 0, false
	}
	v, err := strconv.ParseInt(string(tok), 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(v), true
}

// numBits is intValue()/longValue() of any node: the low 64 bits of the number truncated toward zero,
// 0 for non-numbers.
func numBits(b []byte, i int) uint64 {
	if !isNumber(b, i) {
		return 0
	}
	tok, integral := numberToken(b, i)
	return intBits(tok, integral)
}

func intBits(tok []byte, integral bool) uint64 {
	if integral {
		if v, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
			return uint64(v)
		}
		n, ok := new(big.Int).SetString(string(tok), 10)
		if !ok {
			return 0
		}
		return lowBits(n)
	}
	d, err := connect.ParseDecimal(string(tok))
	if err != nil {
		return 0
	}
	if d.Scale <= -64 { // a multiple of 10^64, so of 2^64
		return 0
	}
	if d.Scale > 0 {
		if int(d.Scale) > len(tok) { // |value| < 1
			return 0
		}
		q := new(big.Int).Quo(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
		return lowBits(q)
	}
	return lowBits(new(big.Int).Mul(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil)))
}

// lowBits is BigInteger.longValue(): the low 64 bits of the two's complement.
func lowBits(n *big.Int) uint64 {
	m := new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64))
	return m.Uint64()
}

func numFloat(b []byte, i int, bits int) float64 {
	if !isNumber(b, i) {
		return 0
	}
	tok, _ := numberToken(b, i)
	return parseFloat(tok, bits)
}

// parseFloat converts like BigDecimal.doubleValue()/floatValue(): correctly rounded, overflow to infinity,
// and no negative zero (BigDecimal has none).
func parseFloat(tok []byte, bits int) float64 {
	f, err := strconv.ParseFloat(string(tok), bits)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return 0
	}
	if f == 0 {
		return 0
	}
	return f
}
