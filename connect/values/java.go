package values

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// JavaTrim is String.trim: it strips every byte up to U+0020 at both ends, and no other space.
func JavaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// ParseJavaFloat is Double.parseDouble (bitSize 64) or Float.parseFloat (32): String.trim, one trailing f/d
// suffix, hexadecimal literals, NaN and Infinity, and ±Infinity or zero beyond the range. strconv.ParseFloat
// alone would also take Go's '_' separators and its inf and nan spellings.
func ParseJavaFloat(s string, bitSize int) (float64, error) {
	t := JavaTrim(s)
	switch t {
	case "NaN", "+NaN", "-NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if n := len(t); n > 0 && strings.IndexByte("fFdD", t[n-1]) >= 0 {
		t = t[:n-1]
	}
	if strings.ContainsAny(t, "_iInN") {
		return 0, fmt.Errorf("not a Java floating-point literal: %q", s)
	}
	f, err := strconv.ParseFloat(t, bitSize)
	if errors.Is(err, strconv.ErrRange) {
		return f, nil
	}
	return f, err
}
