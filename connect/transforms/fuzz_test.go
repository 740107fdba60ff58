package transforms

import (
	"math"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// dateSeeds pair the patterns of the JVM fixtures (and common SimpleDateFormat ones) with record strings.
var dateSeeds = [][2]string{
	{"yyyy-MM-dd'T'HH:mm:ss.SSS", "2023-11-15T22:13:20.123"},
	{"yyyy-MM-dd HH:mm:ss", "2024-03-01 10:15:30"},
	{"yyyyMMdd HHmmss", "19700120 161320"},
	{"dd/MM/yyyy", "24/08/1994"},
	{"yyyy-MM-dd", "1994-08-24"},
	{"yyyy-MM-dd", "Alice"},
	{"yyyy-MM-dd'T'HH", "2023-11-14T22"},
	{"yyyyMMdd", "20240229"},
	{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-01-02T03:04:05.678+05:30"},
	{"yyyy-MM-dd'T'HH:mm:ssZ", "2024-01-02T03:04:05-0800"},
	{"EEE, dd MMM yyyy HH:mm:ss z", "Tue, 02 Jan 2024 03:04:05 GMT"},
	{"dd-MMM-yyyy hh:mm:ss a", "02-Jan-2024 03:04:05 PM"},
	{"MMMM d, yyyy", "January 2, 2024"},
	{"yy-M-d k:m:s", "24-1-2 24:0:0"},
	{"yyyy-MM-dd", ""},
	{"yyyy-MM-dd", "2024-01"},
	{"yyyy-MM-dd", "2024-13-45"},
	{"yyyy-MM-dd", "-2024-+1-01"},
	{"yyyy-MM-dd", "99999999999999999999-01-01"},
	{"yyyy-MM-dd HH:mm:ss.SSS", "2024-01-01 00:00:00.9223372036854775807"},
	{"yyyy-MM-dd", "\xff\xfe-01-01"},
	{"'unterminated", "x"},
	{"''yyyy''", "'2024'"},
	{"GyYMLdDEuaHkKhmsSzZXwWF", "AD2024"},
}

// FuzzJavaDatePattern: no pattern and no record string makes compiling, parsing or formatting panic.
func FuzzJavaDatePattern(f *testing.F) {
	for _, s := range dateSeeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		df, err := newJavaDateFormat(pattern)
		if err != nil {
			return
		}
		if tm, err := df.parse(s); err == nil {
			_ = df.format(tm)
		}
	})
}

// roundTripPatterns name every field down to the one they end with, so that the parse, lenient as the
// JVM's, cannot spill into fields the pattern does not format.
var roundTripPatterns = []string{"yyyy-MM-dd'T'HH:mm:ss.SSS", "yyyy-MM-dd HH:mm:ss", "yyyyMMdd HHmmss", "dd/MM/yyyy",
	"yyyy-MM-dd", "yyyyMMdd", "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "yyyy-MM-dd'T'HH:mm:ssZ", "EEE, dd MMM yyyy HH:mm:ss z",
	"dd-MMM-yyyy hh:mm:ss a", "MMMM d, yyyy"}

// FuzzJavaDateRoundTrip: an instant parsed with a complete pattern formats and parses back to itself.
func FuzzJavaDateRoundTrip(f *testing.F) {
	for _, s := range dateSeeds {
		f.Add(s[1])
	}
	fmts := make([]*javaDateFormat, len(roundTripPatterns))
	for i, p := range roundTripPatterns {
		var err error
		if fmts[i], err = newJavaDateFormat(p); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, df := range fmts {
			tm, err := df.parse(s)
			if err != nil || tm.Year() < 1 || tm.Year() > 9999 { // SimpleDateFormat writes an era, not a sign
				continue
			}
			out := df.format(tm)
			if back, err := df.parse(out); err != nil || !back.Equal(tm) {
				t.Fatalf("%q with %q: %v formats as %q, which parses as %v, %v", s, df.pattern, tm.Format(time.RFC3339Nano), out, back, err)
			}
		}
	})
}

// FuzzParseValueString: a replacement or literal parses without panic, into a value of its schema's type.
func FuzzParseValueString(f *testing.F) {
	for _, s := range []string{"42", "abc", "x", "persons", "$1$2_cdc", "", " ", "true", "NULL", "-128", "128",
		"2147483648", "9223372036854775808", "1.5", "-0.0", "1e3", "1E+3", "1.5e-7", "3.4e39", "1e400", "1e-400",
		"0e-2147483648", "1e-2147483648", "1e2147483647", "2024-01-02", "2024-13-02", "1 2", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sv, err := parseValueString(s)
		if err != nil || sv.Schema == nil {
			return
		}
		if err := connect.ValidateValue(sv.Schema, sv.Value); err != nil {
			t.Fatalf("parseValueString(%q) = %T %v: %v", s, sv.Value, sv.Value, err)
		}
		if f, ok := sv.Value.(float32); ok && math.IsInf(float64(f), 0) {
			t.Fatalf("parseValueString(%q) = %v", s, f)
		}
		if f, ok := sv.Value.(float64); ok && math.IsInf(f, 0) {
			t.Fatalf("parseValueString(%q) = %v", s, f)
		}
	})
}
