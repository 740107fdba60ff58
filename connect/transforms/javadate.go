package transforms

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// javaDateFormat is a java.text.SimpleDateFormat in UTC for the common pattern letters
// (G y Y M L d D E u a H k K h m s S z Z X and 'quoted' text).
type javaDateFormat struct {
	pattern string
	tokens  []dfToken
}

type dfToken struct {
	letter byte // 0 for literal text
	n      int
	lit    string
}

func newJavaDateFormat(p string) (*javaDateFormat, error) {
	f := &javaDateFormat{pattern: p}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			j := i + 1
			var lit strings.Builder
			for {
				if j >= len(p) {
					return nil, fmt.Errorf("Unterminated quote")
				}
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				lit.WriteByte(p[j])
				j++
			}
			if j == i+1 {
				lit.WriteByte('\'')
			}
			f.tokens = append(f.tokens, dfToken{lit: lit.String()})
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune("GyYMLdDEuaHkKhmsSzZXwWF", rune(c)) {
				return nil, fmt.Errorf("Illegal pattern character '%c'", c)
			}
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			f.tokens = append(f.tokens, dfToken{letter: c, n: j - i})
			i = j
		default:
			f.tokens = append(f.tokens, dfToken{lit: string(c)})
			i++
		}
	}
	return f, nil
}

func pad(v, n int) string {
	s := strconv.Itoa(v)
	neg := v < 0
	if neg {
		s = s[1:]
	}
	for len(s) < n {
		s = "0" + s
	}
	if neg {
		s = "-" + s
	}
	return s
}

func (f *javaDateFormat) format(t time.Time) string {
	t = t.UTC()
	var b strings.Builder
	for _, tk := range f.tokens {
		if tk.letter == 0 {
			b.WriteString(tk.lit)
			continue
		}
		switch tk.letter {
		case 'G':
			if t.Year() > 0 {
				b.WriteString("AD")
			} else {
				b.WriteString("BC")
			}
		case 'y', 'Y', 'u':
			if tk.letter == 'u' {
				b.WriteString(pad(int(t.Weekday()+6)%7+1, tk.n))
				continue
			}
			y := t.Year()
			if tk.letter == 'Y' {
				y, _ = t.ISOWeek()
			}
			if tk.n == 2 {
				b.WriteString(pad(y%100, 2))
			} else {
				b.WriteString(pad(y, tk.n))
			}
		case 'M', 'L':
			switch {
			case tk.n >= 4:
				b.WriteString(t.Month().String())
			case tk.n == 3:
				b.WriteString(t.Month().String()[:3])
			default:
				b.WriteString(pad(int(t.Month()), tk.n))
			}
		case 'd':
			b.WriteString(pad(t.Day(), tk.n))
		case 'D':
			b.WriteString(pad(t.YearDay(), tk.n))
		case 'E':
			if tk.n >= 4 {
				b.WriteString(t.Weekday().String())
			} else {
				b.WriteString(t.Weekday().String()[:3])
			}
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'H':
			b.WriteString(pad(t.Hour(), tk.n))
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b.WriteString(pad(h, tk.n))
		case 'K':
			b.WriteString(pad(t.Hour()%12, tk.n))
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b.WriteString(pad(h, tk.n))
		case 'm':
			b.WriteString(pad(t.Minute(), tk.n))
		case 's':
			b.WriteString(pad(t.Second(), tk.n))
		case 'S':
			b.WriteString(pad(t.Nanosecond()/1e6, tk.n))
		case 'z':
			if tk.n >= 4 {
				b.WriteString("Coordinated Universal Time")
			} else {
				b.WriteString("UTC")
			}
		case 'Z':
			b.WriteString("+0000")
		case 'X':
			b.WriteString("Z")
		case 'w':
			_, w := t.ISOWeek()
			b.WriteString(pad(w, tk.n))
		case 'W', 'F':
			b.WriteString(pad((t.Day()-1)/7+1, tk.n))
		}
	}
	return b.String()
}

// parse is SimpleDateFormat.parse (lenient number widths, UTC).
func (f *javaDateFormat) parse(s string) (time.Time, error) {
	year, month, day, hour, min, sec, ms := 1970, 1, 1, 0, 0, 0, 0
	pm, hasAmPm := false, false
	offset := 0
	pos := 0
	fail := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("Unparseable date: \"%s\"", s)
	}
	for ti, tk := range f.tokens {
		if tk.letter == 0 {
			if !strings.HasPrefix(s[pos:], tk.lit) {
				return fail()
			}
			pos += len(tk.lit)
			continue
		}
		// numeric field: when the next token is also a letter, take exactly n digits (abutting fields)
		readNum := func() (int, bool) {
			maxw := len(s) - pos
			if ti+1 < len(f.tokens) && f.tokens[ti+1].letter != 0 {
				maxw = tk.n
			}
			j := pos
			if j < len(s) && (s[j] == '-' || s[j] == '+') {
				j++
			}
			for j < len(s) && j-pos < maxw && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == pos {
				return 0, false
			}
			v, err := strconv.ParseInt(s[pos:j], 10, 32) // Calendar fields are ints; beyond, time.Date overflows
			if err != nil {
				return 0, false
			}
			pos = j
			return int(v), true
		}
		var ok bool
		switch tk.letter {
		case 'y', 'Y', 'u':
			start := pos
			year, ok = readNum()
			if ok && tk.n <= 2 && pos-start == 2 {
				year += 2000
				if year > time.Now().Year()+20 {
					year -= 100
				}
			}
		case 'M', 'L':
			if tk.n >= 3 {
				ok = false
				for m := time.January; m <= time.December; m++ {
					for _, name := range []string{m.String(), m.String()[:3]} {
						if strings.HasPrefix(strings.ToLower(s[pos:]), strings.ToLower(name)) {
							month, pos, ok = int(m), pos+len(name), true
							break
						}
					}
					if ok {
						break
					}
				}
			} else {
				month, ok = readNum()
			}
		case 'd':
			day, ok = readNum()
		case 'H', 'k':
			hour, ok = readNum()
			if tk.letter == 'k' && hour == 24 {
				hour = 0
			}
		case 'h', 'K':
			hour, ok = readNum()
			hour %= 12
		case 'a':
			up := strings.ToUpper(s[pos:])
			switch {
			case strings.HasPrefix(up, "AM"):
				ok, hasAmPm = true, true
			case strings.HasPrefix(up, "PM"):
				ok, hasAmPm, pm = true, true, true
			}
			pos += 2
		case 'm':
			min, ok = readNum()
		case 's':
			sec, ok = readNum()
		case 'S':
			ms, ok = readNum()
		case 'E':
			ok = false
			for d := time.Sunday; d <= time.Saturday; d++ {
				for _, name := range []string{d.String(), d.String()[:3]} {
					if strings.HasPrefix(strings.ToLower(s[pos:]), strings.ToLower(name)) {
						pos, ok = pos+len(name), true
						break
					}
				}
				if ok {
					break
				}
			}
		case 'Z', 'X', 'z':
			rest := s[pos:]
			switch {
			case strings.HasPrefix(rest, "Z"):
				pos++
				ok = true
			case strings.HasPrefix(rest, "UTC") || strings.HasPrefix(rest, "GMT"):
				pos += 3
				ok = true
			case len(rest) >= 3 && (rest[0] == '+' || rest[0] == '-'):
				sign := 1
				if rest[0] == '-' {
					sign = -1
				}
				digits := strings.ReplaceAll(rest[1:min2(len(rest), 6)], ":", "")
				if len(digits) >= 4 {
					h, _ := strconv.Atoi(digits[:2])
					m, _ := strconv.Atoi(digits[2:4])
					offset = sign * (h*3600 + m*60)
					pos += 1 + len(digits)
					if strings.Contains(rest[1:min2(len(rest), 6)], ":") {
						pos++
					}
				} else if len(digits) >= 2 {
					h, _ := strconv.Atoi(digits[:2])
					offset = sign * h * 3600
					pos += 3
				}
				ok = len(digits) >= 2
			}
		default:
			_, ok = readNum()
		}
		if !ok {
			return fail()
		}
	}
	if hasAmPm && pm {
		hour += 12
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, ms*1e6, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), nil
}

func min2(a, b int) int {
	if a < b {
		return a
	}
	return b
}
