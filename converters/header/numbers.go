package header

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

// Numbers in header values: new BigDecimal(token) and ValueParser.parseAsNumber.

// parseAsNumber parses as java.math.BigDecimal does and picks INT8..INT64 for exact whole numbers up to 1e19,
// FLOAT32 when the float is finite and the scale is not 0, then FLOAT64, else a Decimal.
func parseAsNumber(tok string) (sv, bool) {
	// syntax: [+-] digits [. digits] [eE [+-] digits]; Unicode decimal digits count as digits
	i := 0
	neg := false
	if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
		neg = tok[i] == '-'
		i++
	}
	ascii := true
	intStart := i
	nInt, nFrac := 0, 0
	dot := -1
	for i < len(tok) {
		c := tok[i]
		if c >= '0' && c <= '9' {
			if dot < 0 {
				nInt++
			} else {
				nFrac++
			}
			i++
			continue
		}
		if c == '.' {
			if dot >= 0 {
				return sv{}, false
			}
			dot = i
			i++
			continue
		}
		if c == 'e' || c == 'E' {
			break
		}
		r, w := utf8.DecodeRuneInString(tok[i:])
		if javaDigit(r) < 0 {
			return sv{}, false
		}
		ascii = false
		if dot < 0 {
			nInt++
		} else {
			nFrac++
		}
		i += w
	}
	mantEnd := i
	if nInt+nFrac == 0 {
		return sv{}, false
	}
	var exp int64
	if i < len(tok) {
		// exponent
		i++
		eneg := false
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			eneg = tok[i] == '-'
			i++
		}
		if i >= len(tok) {
			return sv{}, false
		}
		// at most 10 digits after leading zeros (BigDecimal.parseExp)
		sig := 0
		for i < len(tok) {
			r, w := utf8.DecodeRuneInString(tok[i:])
			d := javaDigit(r)
			if d < 0 {
				return sv{}, false
			}
			if r >= 0x80 {
				ascii = false
			}
			if sig > 0 || d != 0 {
				sig++
				if sig > 10 {
					return sv{}, false
				}
				exp = exp*10 + int64(d)
			}
			i += w
		}
		if eneg {
			exp = -exp
		}
		if exp != int64(int32(exp)) {
			return sv{}, false
		}
	}
	scale := int64(nFrac) - exp
	if scale != int64(int32(scale)) {
		return sv{}, false
	}

	// significant digits (ASCII), leading zeros dropped
	var dbuf [40]byte
	digits := dbuf[:0]
	for j := intStart; j < mantEnd; {
		r, w := utf8.DecodeRuneInString(tok[j:])
		j += w
		if r == '.' {
			continue
		}
		d := javaDigit(r)
		if len(digits) == 0 && d == 0 {
			continue
		}
		digits = append(digits, byte('0'+d))
	}
	nd := len(digits)
	if nd == 0 {
		return sv{schema: connect.Int8Schema, value: int8(0)}, true // BigDecimal zero (any scale) is whole
	}
	tz := 0
	for tz < nd && digits[nd-1-tz] == '0' {
		tz++
	}
	adjusted := int64(nd-1) - scale // floor(log10(|v|))
	// parseAsExactDecimal
	exact := true
	if adjusted > 19 || (adjusted == 19 && !(digits[0] == '1' && tz == nd-1)) || adjusted < 0 {
		exact = false
	}
	if exact && scale-int64(tz) <= 0 {
		// whole number with at most 20 digits
		var u uint64
		overflow := false
		n := int(adjusted) + 1
		for j := 0; j < n; j++ {
			d := uint64(0)
			if j < nd {
				d = uint64(digits[j] - '0')
			}
			if u > (math.MaxUint64-d)/10 {
				overflow = true
				break
			}
			u = u*10 + d
		}
		if !overflow && (u <= math.MaxInt64 || (neg && u == 1<<63)) {
			var v int64
			if neg {
				v = int64(-u)
			} else {
				v = int64(u)
			}
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return sv{schema: connect.Int8Schema, value: int8(v)}, true
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return sv{schema: connect.Int16Schema, value: int16(v)}, true
			case v >= math.MinInt32 && v <= math.MaxInt32:
				return sv{schema: connect.Int32Schema, value: int32(v)}, true
			}
			return sv{schema: connect.Int64Schema, value: v}, true
		}
	}
	if scale != 0 {
		num := tok
		if !ascii {
			num = asciiNumber(tok, neg, digits, scale)
		}
		if f, err := strconv.ParseFloat(num, 32); !math.IsInf(f, 0) && (err == nil || !errors.Is(err, strconv.ErrRange) || f == 0) {
			return sv{schema: connect.Float32Schema, value: float32(f)}, true
		}
		if f, err := strconv.ParseFloat(num, 64); !math.IsInf(f, 0) && (err == nil || !errors.Is(err, strconv.ErrRange) || f == 0) {
			return sv{schema: connect.Float64Schema, value: f}, true
		}
	}
	u, _ := new(big.Int).SetString(string(digits), 10)
	if neg {
		u.Neg(u)
	}
	return sv{schema: connect.DecimalSchema(int32(scale)), value: connect.Decimal{Unscaled: u, Scale: int32(scale)}}, true
}

func asciiNumber(_ string, neg bool, digits []byte, scale int64) string {
	b := make([]byte, 0, len(digits)+24)
	if neg {
		b = append(b, '-')
	}
	b = append(b, digits...)
	b = append(b, 'e')
	b = strconv.AppendInt(b, -scale, 10)
	return string(b)
}
