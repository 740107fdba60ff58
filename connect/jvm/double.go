package jvm

// Double.toString / Float.toString of JDK 17 (jdk.internal.math.FloatingDecimal, ported): the JVM that Connect
// 4.x runs on at minimum and that every JVM golden file of this project was generated with. Not always the
// shortest digits (4.35314208E8 for the float 435314208, 9.999999999999999E22 for 1e23, 4.9E-324); JDK 19+
// print the shortest.

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// insignificantDigitsNumber is FloatingDecimal's table (floor(p2*log10(2)) for the low-order binary digits
// that cannot matter).
var insignificantDigitsNumber = [...]int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7,
	7, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16,
	17, 17, 17, 18, 18, 18, 19}

// AppendDouble is Float.toString / Double.toString of JDK 17 (jdk.internal.math.FloatingDecimal, ported
// below): not always the shortest digits (e.g. 4.35314208E8 for the float 435314208, 9.999999999999999E22 for
// 1e23, 4.9E-324); JDK 19+ print the shortest. Plain notation for 1e-3 <= |v| < 1e7, else d.dddEn.
func AppendDouble(b []byte, f float64, single bool) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	// FloatingDecimal.getBinaryToASCIIConverter: normalized 53-bit fraction, binary exponent, significant bits
	var fract uint64
	var binExp, nSig int
	if single {
		fb := math.Float32bits(float32(f))
		e := int(fb>>23) & 0xff
		m := fb & 0x7fffff
		if e == 0 {
			lz := bits.LeadingZeros32(m)
			shift := lz - (31 - 23)
			m <<= uint(shift)
			binExp = 1 - shift
			nSig = 32 - lz
		} else {
			m |= 1 << 23
			nSig = 24
			binExp = e
		}
		binExp -= 127
		fract = uint64(m) << (52 - 23)
	} else {
		db := math.Float64bits(f)
		e := int(db>>52) & 0x7ff
		m := db & (1<<52 - 1)
		if e == 0 {
			lz := bits.LeadingZeros64(m)
			shift := lz - (63 - 52)
			m <<= uint(shift)
			binExp = 1 - shift
			nSig = 64 - lz
		} else {
			m |= 1 << 52
			nSig = 53
			binExp = e
		}
		binExp -= 1023
		fract = m
	}
	var digBuf [32]byte
	var digits []byte
	var decExp int
	nFractBits := 53 - bits.TrailingZeros64(fract)
	nTinyBits := nFractBits - binExp - 1
	if nTinyBits < 0 {
		nTinyBits = 0
	}
	if binExp <= 62 && binExp >= -21 && nTinyBits == 0 {
		insignificant := 0
		if binExp > nSig {
			if p2 := binExp - nSig - 1; p2 > 1 && p2 < len(insignificantDigitsNumber) {
				insignificant = insignificantDigitsNumber[p2]
			}
		}
		lv := fract
		if binExp >= 52 {
			lv <<= uint(binExp - 52)
		} else {
			lv >>= uint(52 - binExp)
		}
		decExp = insignificant
		if insignificant != 0 {
			p10 := uint64(1)
			for i := 0; i < insignificant; i++ {
				p10 *= 10
			}
			residue := lv % p10
			lv /= p10
			if residue >= p10>>1 {
				lv++
			}
		}
		digits = strconv.AppendUint(digBuf[:0], lv, 10)
		decExp += len(digits)
		for len(digits) > 1 && digits[len(digits)-1] == '0' {
			digits = digits[:len(digits)-1]
		}
	} else {
		digits, decExp = fdDtoa(digBuf[:0], binExp, fract, nSig, nFractBits, nTinyBits)
	}
	nd := len(digits)
	switch {
	case decExp > 0 && decExp < 8:
		n := min(nd, decExp)
		b = append(b, digits[:n]...)
		if n < decExp {
			for i := n; i < decExp; i++ {
				b = append(b, '0')
			}
			return append(b, '.', '0')
		}
		b = append(b, '.')
		if n < nd {
			return append(b, digits[n:]...)
		}
		return append(b, '0')
	case decExp <= 0 && decExp > -3:
		b = append(b, '0', '.')
		for i := decExp; i < 0; i++ {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	b = append(b, digits[0], '.')
	if nd > 1 {
		b = append(b, digits[1:]...)
	} else {
		b = append(b, '0')
	}
	b = append(b, 'E')
	if decExp <= 0 {
		b = append(b, '-')
		return strconv.AppendInt(b, int64(-decExp+1), 10)
	}
	return strconv.AppendInt(b, int64(decExp-1), 10)
}

var (
	n5Bits   [27]int
	long5Pow [27]int64
)

func init() {
	p := int64(1)
	for i := range long5Pow {
		long5Pow[i] = p
		n5Bits[i] = bits.Len64(uint64(p))
		p *= 5
	}
	n5Bits[0] = 0
}

func n5(i int) int {
	if i < len(n5Bits) {
		return n5Bits[i]
	}
	return i * 3
}

// estimateDecExp is FloatingDecimal.BinaryToASCIIBuffer.estimateDecExp.
func estimateDecExp(fractBits uint64, binExp int) int {
	d2 := math.Float64frombits(0x3ff0000000000000 | (fractBits & (1<<52 - 1)))
	d := float64(float64(d2-1.5)*0.289529654) + 0.176091259 + float64(float64(binExp)*0.301029995663981)
	db := math.Float64bits(d)
	exponent := int((db>>52)&0x7ff) - 1023
	neg := db>>63 != 0
	switch {
	case exponent >= 0 && exponent < 52:
		mask := uint64(1<<52-1) >> uint(exponent)
		r := int(((db & (1<<52 - 1)) | 1<<52) >> uint(52-exponent))
		if neg {
			if mask&db == 0 {
				return -r
			}
			return -r - 1
		}
		return r
	case exponent < 0:
		if db&^(1<<63) == 0 {
			return 0
		}
		if neg {
			return -1
		}
		return 0
	}
	return int(d)
}

// fdDtoa is the general case of FloatingDecimal.BinaryToASCIIBuffer.dtoa (isCompatibleFormat=true): digits
// and decExponent (value = 0.digits x 10^decExponent).
func fdDtoa(buf []byte, binExp int, fractBits uint64, nSig, nFractBits, nTinyBits int) ([]byte, int) {
	decExp := estimateDecExp(fractBits, binExp)
	B5 := max(0, -decExp)
	B2 := B5 + nTinyBits + binExp
	S5 := max(0, decExp)
	S2 := S5 + nTinyBits
	M5 := B5
	M2 := B2 - nSig
	fractBits >>= uint(bits.TrailingZeros64(fractBits))
	B2 -= nFractBits - 1
	common := min(B2, S2)
	B2 -= common
	S2 -= common
	M2 -= common
	if nFractBits == 1 {
		M2--
	}
	if M2 < 0 {
		B2 -= M2
		S2 -= M2
		M2 = 0
	}
	digits := buf
	var low, high bool
	var lowDigitDifference int64
	Bbits := nFractBits + B2 + n5(B5)
	tenSbits := S2 + 1 + n5(S5+1)
	compat := func() {
		if decExp < -3 || decExp >= 8 {
			high, low = false, false
		}
	}
	if Bbits < 64 && tenSbits < 64 {
		if Bbits < 32 && tenSbits < 32 {
			b := (int32(fractBits) * int32(long5Pow[B5])) << uint(B2)
			s := int32(long5Pow[S5]) << uint(S2)
			m := int32(long5Pow[M5]) << uint(M2)
			tens := s * 10
			q := b / s
			b = 10 * (b % s)
			m *= 10
			low = b < m
			high = b+m > tens
			if q == 0 && !high {
				decExp--
			} else {
				digits = append(digits, byte('0'+q))
			}
			compat()
			for !low && !high {
				q = b / s
				b = 10 * (b % s)
				m *= 10
				if m > 0 {
					low = b < m
					high = b+m > tens
				} else {
					low, high = true, true
				}
				digits = append(digits, byte('0'+q))
			}
			lowDigitDifference = int64(b<<1) - int64(tens)
		} else {
			b := (int64(fractBits) * long5Pow[B5]) << uint(B2)
			s := long5Pow[S5] << uint(S2)
			m := long5Pow[M5] << uint(M2)
			tens := s * 10
			q := b / s
			b = 10 * (b % s)
			m *= 10
			low = b < m
			high = b+m > tens
			if q == 0 && !high {
				decExp--
			} else {
				digits = append(digits, byte('0'+q))
			}
			compat()
			for !low && !high {
				q = b / s
				b = 10 * (b % s)
				m *= 10
				if m > 0 {
					low = b < m
					high = b+m > tens
				} else {
					low, high = true, true
				}
				digits = append(digits, byte('0'+q))
			}
			lowDigitDifference = (b << 1) - tens
		}
	} else {
		pow52 := func(p5, p2 int) *big.Int {
			v := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(p5)), nil)
			return v.Lsh(v, uint(p2))
		}
		S := pow52(S5, S2)
		B := pow52(B5, B2)
		B.Mul(B, new(big.Int).SetUint64(fractBits))
		M := pow52(M5+1, M2+1)
		tenS := pow52(S5+1, S2+1)
		q, r, sum := new(big.Int), new(big.Int), new(big.Int)
		ten := big.NewInt(10)
		quoRem := func() int {
			q.QuoRem(B, S, r)
			B.Mul(r, ten)
			return int(q.Int64())
		}
		qd := quoRem()
		low = B.Cmp(M) < 0
		high = tenS.Cmp(sum.Add(B, M)) <= 0
		if qd == 0 && !high {
			decExp--
		} else {
			digits = append(digits, byte('0'+qd))
		}
		compat()
		for !low && !high {
			qd = quoRem()
			M.Mul(M, ten)
			low = B.Cmp(M) < 0
			high = tenS.Cmp(sum.Add(B, M)) <= 0
			digits = append(digits, byte('0'+qd))
		}
		if high && low {
			lowDigitDifference = int64(new(big.Int).Lsh(B, 1).Cmp(tenS))
		}
	}
	decExponent := decExp + 1
	if high {
		if low {
			if lowDigitDifference == 0 {
				if digits[len(digits)-1]&1 != 0 {
					digits, decExponent = fdRoundup(digits, decExponent)
				}
			} else if lowDigitDifference > 0 {
				digits, decExponent = fdRoundup(digits, decExponent)
			}
		} else {
			digits, decExponent = fdRoundup(digits, decExponent)
		}
	}
	return digits, decExponent
}

func fdRoundup(d []byte, decExponent int) ([]byte, int) {
	i := len(d) - 1
	q := d[i]
	if q == '9' {
		for q == '9' && i > 0 {
			d[i] = '0'
			i--
			q = d[i]
		}
		if q == '9' {
			d[0] = '1'
			return d, decExponent + 1
		}
	}
	d[i] = q + 1
	return d, decExponent
}
