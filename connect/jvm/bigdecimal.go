package jvm

import (
	"math/big"
	"strconv"
	"strings"
)

// BigDecimalString is java.math.BigDecimal.toString of unscaled × 10^-scale (scientific notation when the scale is negative or
// the adjusted exponent is below -6).
func BigDecimalString(unscaled *big.Int, scale int64) string {
	u := unscaled
	if u == nil {
		u = new(big.Int)
	}
	coeff := new(big.Int).Abs(u).String()
	neg := u.Sign() < 0
	adjusted := -scale + int64(len(coeff)-1)
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	if scale >= 0 && adjusted >= -6 {
		if scale == 0 {
			sb.WriteString(coeff)
			return sb.String()
		}
		if int64(len(coeff)) > scale {
			p := int64(len(coeff)) - scale
			sb.WriteString(coeff[:p])
			sb.WriteByte('.')
			sb.WriteString(coeff[p:])
			return sb.String()
		}
		sb.WriteString("0.")
		for k := int64(0); k < scale-int64(len(coeff)); k++ {
			sb.WriteByte('0')
		}
		sb.WriteString(coeff)
		return sb.String()
	}
	sb.WriteByte(coeff[0])
	if len(coeff) > 1 {
		sb.WriteByte('.')
		sb.WriteString(coeff[1:])
	}
	sb.WriteByte('E')
	if adjusted >= 0 {
		sb.WriteByte('+')
	}
	sb.WriteString(strconv.FormatInt(adjusted, 10))
	return sb.String()
}
