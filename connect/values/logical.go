package values

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// The Connect logical types' Go values and their wire forms: Decimal (unscaled big-endian two's complement
// bytes + the schema's scale), Date (int32 days since the epoch), Time (int32 milliseconds since midnight)
// and Timestamp (int64 milliseconds since the epoch), as the JVM's Decimal, Date, Time and Timestamp classes.

// Decimal is an arbitrary-precision decimal: Unscaled × 10^-Scale, like java.math.BigDecimal.
type Decimal struct {
	Unscaled *big.Int
	Scale    int32
}

// NewDecimal builds a Decimal from an unscaled int64.
func NewDecimal(unscaled int64, scale int32) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

// ParseDecimal parses a plain or exponent decimal string ("12.340", "-1E+3") keeping its scale.
func ParseDecimal(s string) (Decimal, error) {
	s = strings.TrimSpace(s)
	exp := int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return Decimal{}, fmt.Errorf("invalid decimal %q", s)
		}
		exp, s = e, s[:i]
	}
	scale := int64(0)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		scale = int64(len(s) - i - 1)
		s = s[:i] + s[i+1:]
	}
	u, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return Decimal{}, fmt.Errorf("invalid decimal %q", s)
	}
	if scale -= exp; scale > math.MaxInt32 || scale < math.MinInt32 {
		return Decimal{}, fmt.Errorf("invalid decimal %q: scale out of range", s)
	}
	return Decimal{Unscaled: u, Scale: int32(scale)}, nil
}

// String renders like BigDecimal.toPlainString.
func (d Decimal) String() string {
	if d.Unscaled == nil {
		return "0"
	}
	if d.Scale <= 0 {
		return new(big.Int).Mul(d.Unscaled, pow10(-d.Scale)).String()
	}
	neg := d.Unscaled.Sign() < 0
	digits := new(big.Int).Abs(d.Unscaled).String()
	for len(digits) <= int(d.Scale) {
		digits = "0" + digits
	}
	p := len(digits) - int(d.Scale)
	out := digits[:p] + "." + digits[p:]
	if neg {
		out = "-" + out
	}
	return out
}

// Rescale returns d with the given scale, failing if digits would be lost.
func (d Decimal) Rescale(scale int32) (Decimal, error) {
	if d.Scale == scale {
		return d, nil
	}
	if scale > d.Scale {
		return Decimal{Unscaled: new(big.Int).Mul(d.Unscaled, pow10(scale-d.Scale)), Scale: scale}, nil
	}
	q, r := new(big.Int).QuoRem(d.Unscaled, pow10(d.Scale-scale), new(big.Int))
	if r.Sign() != 0 {
		return Decimal{}, fmt.Errorf("decimal %s cannot be rescaled to scale %d without rounding", d, scale)
	}
	return Decimal{Unscaled: q, Scale: scale}, nil
}

// Float64 is a lossy conversion. A value far outside float64's range is ±Inf or ±0 without computing
// 10^scale, which for a scale near 2^31 would take gigabytes.
func (d Decimal) Float64() float64 {
	if d.Unscaled == nil {
		return 0
	}
	switch exp := d.Magnitude(); {
	case d.Unscaled.Sign() == 0:
		return 0
	case exp > 400:
		return math.Inf(d.Unscaled.Sign())
	case exp < -400:
		return math.Copysign(0, float64(d.Unscaled.Sign()))
	}
	f, _ := new(big.Rat).SetFrac(d.Unscaled, pow10(d.Scale)).Float64()
	if d.Scale < 0 {
		f, _ = new(big.Rat).SetInt(new(big.Int).Mul(d.Unscaled, pow10(-d.Scale))).Float64()
	}
	return f
}

// Magnitude is about the power of ten of d's absolute value (within one), found without computing 10^scale.
func (d Decimal) Magnitude() int64 {
	return int64(float64(d.Unscaled.BitLen())*math.Log10(2)) - int64(d.Scale)
}

func pow10(n int32) *big.Int {
	if n < 0 {
		n = -n
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// DecimalFromBytes decodes the big-endian two's-complement unscaled value, as the JVM's Decimal.toLogical.
func DecimalFromBytes(b []byte, scale int32) Decimal {
	u := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return Decimal{Unscaled: u, Scale: scale}
}

// DecimalToBytes encodes the unscaled value as minimal big-endian two's complement (BigInteger.toByteArray).
func DecimalToBytes(d Decimal) []byte {
	u := d.Unscaled
	if u == nil {
		return []byte{0}
	}
	if u.Sign() >= 0 {
		b := u.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// Negative: invert the bytes of (-u-1), adding a 0xff sign byte when its top bit is clear.
	m := new(big.Int).Sub(new(big.Int).Neg(u), big.NewInt(1)).Bytes()
	if len(m) == 0 || m[0]&0x80 != 0 {
		m = append([]byte{0}, m...)
	}
	for i := range m {
		m[i] = ^m[i]
	}
	return m
}

// DecimalToFixed is d's unscaled value as the big-endian two's complement of exactly size bytes (an Avro
// fixed, as Java writes a decimal's), failing when it does not fit.
func DecimalToFixed(d Decimal, size int) ([]byte, error) {
	b, err := SignExtend(DecimalToBytes(d), size)
	if err != nil {
		return nil, fmt.Errorf("decimal %v does not fit %d bytes", d.Unscaled, size)
	}
	return b, nil
}

// SignExtend widens a big-endian two's complement value to size bytes; b is returned as it is when it has
// size bytes, and a longer b is an error.
func SignExtend(b []byte, size int) ([]byte, error) {
	if len(b) == size {
		return b, nil
	}
	if len(b) > size {
		return nil, fmt.Errorf("%d bytes do not fit %d", len(b), size)
	}
	out := make([]byte, size)
	if len(b) > 0 && b[0]&0x80 != 0 {
		for i := range out[:size-len(b)] {
			out[i] = 0xff
		}
	}
	copy(out[size-len(b):], b)
	return out, nil
}

// MillisPerDay is the length of a Date unit.
const MillisPerDay = 24 * 60 * 60 * 1000

// DateFromDays converts days since the epoch (the Date wire value) to time.Time.
func DateFromDays(days int32) time.Time { return time.UnixMilli(int64(days) * MillisPerDay).UTC() }

// DateToDays converts a time.Time that must be midnight UTC.
func DateToDays(t time.Time) (int32, error) {
	ms := t.UnixMilli()
	if ms%MillisPerDay != 0 {
		return 0, fmt.Errorf("kafka connect Date type should not have any time fields set to non-zero values")
	}
	return int32(ms / MillisPerDay), nil
}

// TimeFromMillis converts milliseconds since midnight (the Time wire value) to time.Time on 1970-01-01.
func TimeFromMillis(ms int32) time.Time { return time.UnixMilli(int64(ms)).UTC() }

// TimeToMillis converts a time.Time that must be on 1970-01-01 UTC.
func TimeToMillis(t time.Time) (int32, error) {
	ms := t.UnixMilli()
	if ms < 0 || ms >= MillisPerDay {
		return 0, fmt.Errorf("kafka connect Time type should not have any date fields set to non-zero values")
	}
	return int32(ms), nil
}

// TimestampFromMillis converts milliseconds since the epoch (the Timestamp wire value) to time.Time in UTC.
func TimestampFromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
