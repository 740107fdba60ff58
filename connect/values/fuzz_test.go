package values

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseText feeds arbitrary text to every conversion that parses text: none may panic, and what one
// accepts must agree with the others (a long reads back as the same double and decimal).
func FuzzParseText(f *testing.F) {
	for _, s := range []string{"0", " -12 ", "1.5", "1e3", "-1E+3", "9223372036854775808", "NaN", "true",
		"2024-01-02T03:04:05Z", "2024-01-02", "13:14:15.5", "", "1.2.3", "0x10", "+7", "1e99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, lerr := ToLong(s)
		if lerr == nil {
			d, err := ToDecimal(s, 0)
			if err != nil || !d.Unscaled.IsInt64() || d.Unscaled.Int64() != n {
				t.Fatalf("ToLong(%q) = %d but ToDecimal = %v, %v", s, n, d, err)
			}
			if jn, err := ToLong(json.Number(s)); err != nil || jn != n {
				t.Fatalf("ToLong(json.Number(%q)) = %d, %v; want %d", s, jn, err, n)
			}
		}
		if fl, err := ToDouble(s); err == nil && lerr == nil && float64(n) != fl {
			t.Fatalf("ToDouble(%q) = %v, ToLong = %d", s, fl, n)
		}
		if d, err := ToDecimal(s, 2); err == nil {
			if d.Scale != 2 {
				t.Fatalf("ToDecimal(%q, 2) has scale %d", s, d.Scale)
			}
			back, err := ParseDecimal(d.String())
			if err != nil || back.Scale != 2 || back.Unscaled.Cmp(d.Unscaled) != 0 {
				t.Fatalf("ToDecimal(%q, 2) = %s does not read back: %v, %v", s, d, back, err)
			}
		}
		if _, err := ToBoolean(s); err != nil && lerr == nil && (n == 0 || n == 1) && strings.TrimSpace(s) == strconv.FormatInt(n, 10) {
			t.Fatalf("ToBoolean(%q): %v", s, err)
		}
		_, _ = ToTimestamp(s, time.UTC)
		_, _ = ToDate(s)
		if d, err := ToTime(s); err == nil && (d < 0 || d >= 24*time.Hour) {
			t.Fatalf("ToTime(%q) = %v", s, d)
		}
	})
}
