package header

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

// Dates, times and timestamps as the JVM's Values handles them: java.text.SimpleDateFormat with the patterns
// yyyy-MM-dd, HH:mm:ss.SSS'Z' and yyyy-MM-dd'T'HH:mm:ss.SSS'Z' in the JVM's default time zone (UTC assumed, as
// Connect workers normally run), lenient (fields overflow into the next ones), over java.util.GregorianCalendar
// (Julian calendar before 1582-10-15).

const (
	epochFixed = 719163 // fixed date (days since 0001-01-01 Gregorian, day 1) of 1970-01-01
)

var cutoverFixed = gregFixed(1582, 10) + 14 // 1582-10-15

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// gregFixed is BaseCalendar.getFixedDate(year, month, 1) of the proleptic Gregorian calendar.
func gregFixed(year, month int64) int64 {
	prev := year - 1
	days := 1 + 365*prev + floorDiv(prev, 4) - floorDiv(prev, 100) + floorDiv(prev, 400) + floorDiv(367*month-362, 12)
	if month > 2 {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			days--
		} else {
			days -= 2
		}
	}
	return days
}

// julFixed is JulianCalendar.getFixedDate(year, month, 1) (astronomical years: 0 is 1 BC).
func julFixed(year, month int64) int64 {
	days := 365*(year-1) - 1 + floorDiv(year-1, 4) + floorDiv(367*month-362, 12)
	if month > 2 {
		if floorMod(year, 4) == 0 {
			days--
		} else {
			days -= 2
		}
	}
	return days
}

// pattern elements: a literal char, or a numeric field (letter)
var (
	datePattern      = []uint16{'y', 0, '-', 'M', 0, '-', 'd', 0}
	timePattern      = []uint16{'H', 0, ':', 'm', 0, ':', 's', 0, '.', 'S', 0, 'Z'}
	timestampPattern = []uint16{'y', 0, '-', 'M', 0, '-', 'd', 0, 'T', 'H', 0, ':', 'm', 0, ':', 's', 0, '.', 'S', 0, 'Z'}
)

// parseAsTemporal is ValueParser.parseAsTemporal(a+b): "\:" becomes ":", and the length in UTF-16 chars picks
// the pattern (10 date, 13 time, 24 timestamp).
func parseAsTemporal(a, b string) (sv, bool) {
	n := len(a) + len(b)
	if n < 10 || n > 72 {
		return sv{}, false
	}
	var u [25]uint16
	nu := 0
	put := func(c uint16) bool {
		if nu == len(u) {
			return false
		}
		u[nu] = c
		nu++
		return true
	}
	for part := 0; part < 2; part++ {
		s := a
		if part == 1 {
			s = b
		}
		for i := 0; i < len(s); {
			c := s[i]
			if c == '\\' {
				// "\:" may straddle a and b
				var nx byte
				if i+1 < len(s) {
					nx = s[i+1]
				} else if part == 0 && len(b) > 0 {
					nx = b[0]
				}
				if nx == ':' {
					if !put(':') {
						return sv{}, false
					}
					if i+1 < len(s) {
						i += 2
					} else {
						i = len(s)
						b = b[1:]
					}
					continue
				}
			}
			if c < 0x80 {
				if !put(uint16(c)) {
					return sv{}, false
				}
				i++
				continue
			}
			r, w := utf8.DecodeRuneInString(s[i:])
			i += w
			if r >= 0x10000 {
				r -= 0x10000
				if !put(uint16(0xD800+(r>>10))) || !put(uint16(0xDC00+(r&0x3FF))) {
					return sv{}, false
				}
				continue
			}
			if !put(uint16(r)) {
				return sv{}, false
			}
		}
	}
	var pat []uint16
	var schema *connect.Schema
	switch nu {
	case 13:
		pat, schema = timePattern, connect.TimeSchema
	case 24:
		pat, schema = timestampPattern, connect.TimestampSchema
	case 10:
		pat, schema = datePattern, connect.DateSchema
	default:
		return sv{}, false
	}
	ms, ok := simpleDateParse(u[:nu], pat)
	if !ok {
		return sv{}, false
	}
	return sv{schema: schema, value: time.UnixMilli(ms).UTC()}, true
}

func javaCharDigit(c uint16) int {
	if c >= '0' && c <= '9' {
		return int(c - '0')
	}
	if c < 0x80 || (c >= 0xD800 && c <= 0xDFFF) {
		return -1
	}
	return javaDigit(rune(c))
}

// simpleDateParse is SimpleDateFormat.parse(text, new ParsePosition(0)) for our patterns, returning epoch
// millis (UTC). Trailing text after the pattern is ignored, as the JVM does.
func simpleDateParse(u []uint16, pat []uint16) (int64, bool) {
	year, month, day := int32(1970), int32(0), int32(1)
	var hour, minute, second, milli int32
	pos := 0
	for i := 0; i < len(pat); i++ {
		if i+1 < len(pat) && pat[i+1] == 0 {
			// numeric field: skip spaces and tabs, then DecimalFormat.parse (integer only)
			for {
				if pos >= len(u) {
					return 0, false
				}
				if u[pos] != ' ' && u[pos] != '\t' {
					break
				}
				pos++
			}
			v, np, ok := decimalFormatParseInt(u, pos)
			if !ok {
				return 0, false
			}
			pos = np
			switch pat[i] {
			case 'y':
				year = v
			case 'M':
				month = v - 1
			case 'd':
				day = v
			case 'H':
				hour = v
			case 'm':
				minute = v
			case 's':
				second = v
			case 'S':
				milli = v
			}
			i++
			continue
		}
		if pos >= len(u) || u[pos] != pat[i] {
			return 0, false
		}
		pos++
	}
	// GregorianCalendar.computeTime (lenient)
	tod := ((int64(hour)*60+int64(minute))*60+int64(second))*1000 + int64(milli)
	fixed := tod / msPerDay
	tod %= msPerDay
	for tod < 0 {
		tod += msPerDay
		fixed--
	}
	y, m := year, month
	if m > 11 {
		y += m / 12
		m %= 12
	} else if m < 0 {
		y += int32(floorDiv(int64(m), 12))
		m = int32(floorMod(int64(m), 12))
	}
	g := fixed + gregFixed(int64(y), int64(m)+1) + int64(day) - 1
	if year >= 1582 && g >= cutoverFixed {
		fixed = g
	} else {
		fixed += julFixed(int64(y), int64(m)+1) + int64(day) - 1
	}
	return (fixed-epochFixed)*msPerDay + tod, true
}

// decimalFormatParseInt is DecimalFormat.parse with parseIntegerOnly and no grouping, then Number.intValue().
func decimalFormatParseInt(u []uint16, pos int) (int32, int, bool) {
	neg := false
	if pos < len(u) && u[pos] == '-' {
		neg = true
		pos++
	}
	if pos < len(u) && u[pos] == 0x221E { // ∞
		if neg {
			return math.MinInt32, pos + 1, true
		}
		return math.MaxInt32, pos + 1, true
	}
	var digits [32]byte
	nd, digitCount := 0, 0
	sawDigit := false
	var exponent int64
	for pos < len(u) {
		d := javaCharDigit(u[pos])
		if d >= 0 {
			sawDigit = true
			if d == 0 && nd == 0 {
				pos++
				continue
			}
			digitCount++
			if nd < len(digits) {
				digits[nd] = byte('0' + d)
				nd++
			}
			pos++
			continue
		}
		if u[pos] == 'E' {
			p := pos + 1
			eneg := false
			if p < len(u) && u[p] == '-' {
				eneg = true
				p++
			}
			var e int64
			ok := false
			for p < len(u) {
				ed := javaCharDigit(u[p])
				if ed < 0 {
					break
				}
				ok = true
				if e < 1e15 {
					e = e*10 + int64(ed)
				}
				p++
			}
			if ok {
				if eneg {
					e = -e
				}
				exponent = e
				pos = p
			}
		}
		break
	}
	if !sawDigit {
		return 0, 0, false
	}
	decimalAt := int64(digitCount) + exponent
	for nd > 0 && digits[nd-1] == '0' {
		nd--
	}
	if nd == 0 {
		return 0, pos, true
	}
	if decimalAt >= int64(nd) && decimalAt <= 18 {
		var v int64
		for i := int64(0); i < decimalAt; i++ {
			d := int64(0)
			if i < int64(nd) {
				d = int64(digits[i] - '0')
			}
			v = v*10 + d
		}
		if neg {
			v = -v
		}
		return int32(v), pos, true
	}
	// does not fit a long (or has a fraction): a double, then (int)
	b := make([]byte, 0, nd+24)
	b = append(b, '.')
	b = append(b, digits[:nd]...)
	b = append(b, 'e')
	b = strconv.AppendInt(b, decimalAt, 10)
	f, _ := strconv.ParseFloat(string(b), 64)
	if neg {
		f = -f
	}
	switch {
	case f != f:
		return 0, pos, true
	case f >= math.MaxInt32:
		return math.MaxInt32, pos, true
	case f <= math.MinInt32:
		return math.MinInt32, pos, true
	}
	return int32(f), pos, true
}

// ---- formatting: Values.dateFormatFor + SimpleDateFormat.format ----

// appendJavaDate renders a java.util.Date as Values.convertToString does: HH:mm:ss.SSS'Z' below one day of
// millis (negative ones too), yyyy-MM-dd on whole days, yyyy-MM-dd'T'HH:mm:ss.SSS'Z' otherwise.
func appendJavaDate(b []byte, ms int64) []byte {
	fixed := floorDiv(ms, msPerDay) + epochFixed
	tod := floorMod(ms, msPerDay)
	var year, month, dom int64
	if fixed >= cutoverFixed {
		t := time.UnixMilli(ms).UTC()
		year, month, dom = int64(t.Year()), int64(t.Month()), int64(t.Day())
	} else {
		year = floorDiv(4*(fixed+1)+1464, 1461)
		jan1 := julFixed(year, 1)
		prior := fixed - jan1
		leap := floorMod(year, 4) == 0
		mar1 := jan1 + 59
		if leap {
			mar1++
		}
		if fixed >= mar1 {
			if leap {
				prior++
			} else {
				prior += 2
			}
		}
		month = floorDiv(12*prior+373, 367)
		dom = fixed - julFixed(year, month) + 1
	}
	if year <= 0 {
		year = 1 - year // era BC, YEAR counts from 1
	}
	switch {
	case ms < msPerDay:
		return appendTime(b, tod)
	case ms%msPerDay == 0:
		return appendYMD(b, year, month, dom)
	}
	b = appendYMD(b, year, month, dom)
	b = append(b, 'T')
	return appendTime(b, tod)
}

func appendYMD(b []byte, y, m, d int64) []byte {
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, m, 2)
	b = append(b, '-')
	return appendPadded(b, d, 2)
}

func appendTime(b []byte, tod int64) []byte {
	b = appendPadded(b, tod/3600000, 2)
	b = append(b, ':')
	b = appendPadded(b, tod/60000%60, 2)
	b = append(b, ':')
	b = appendPadded(b, tod/1000%60, 2)
	b = append(b, '.')
	b = appendPadded(b, tod%1000, 3)
	return append(b, 'Z')
}

func appendPadded(b []byte, v int64, w int) []byte {
	var tmp [24]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < w; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
