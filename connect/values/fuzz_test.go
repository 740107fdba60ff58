package values

import (
	"encoding/json"
	"math"
	"regexp"
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

// javaFloatLiteral is the grammar of Double.valueOf's Javadoc (after String.trim).
var javaFloatLiteral = regexp.MustCompile(`^[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?|` +
	`0[xX]([0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?)$`)

// FuzzParseJavaFloat: a string parses exactly when Java's grammar accepts it, to the
// nearest float of the requested size (±Infinity or zero out of range).
func FuzzParseJavaFloat(f *testing.F) {
	for _, s := range []string{"1.5", " -12 ", "1e3", "1.0E10", "12.5f", "3D", ".5", "5.", "+.5e-3", "NaN", "-NaN",
		"-Infinity", "0x1.8p1", "0x10", "1ff", "1_0", "inf", "1e400", "-1e-400", "1e", ".", "", "\x00 7\t",
		"\u00a01", "3.4028236e38", "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792", "\xff1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lit := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
		javaOK := javaFloatLiteral.MatchString(lit)
		switch {
		case strings.HasSuffix(lit, "NaN"):
			lit = "NaN"
		case javaOK && strings.ContainsAny(lit[len(lit)-1:], "fFdD"):
			lit = lit[:len(lit)-1]
		}
		for _, bits := range []int{32, 64} {
			got, err := ParseJavaFloat(s, bits)
			if (err == nil) != javaOK {
				t.Fatalf("ParseJavaFloat(%q, %d) = %v, %v; Java accepts: %v", s, bits, got, err, javaOK)
			}
			want, _ := strconv.ParseFloat(lit, bits)
			if javaOK && got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("ParseJavaFloat(%q, %d) = %v, want %v", s, bits, got, want)
			}
		}
	})
}
