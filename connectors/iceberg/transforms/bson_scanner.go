package transforms

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// bsonScanner reads the tokens of MongoDB's JSON dialect (org.bson.json.JsonScanner): single- or
// double-quoted strings, numbers, and identifiers read by bson.go.
type bsonScanner struct {
	s string
	i int
}

var errJSON = fmt.Errorf("invalid json")

func (p *bsonScanner) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *bsonScanner) number() (*jNode, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if digits() == 0 || (p.s[intStart] == '0' && p.i-intStart > 1) {
		return nil, errJSON
	}
	isFloat := false
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		isFloat = true
		if digits() == 0 {
			return nil, errJSON
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		isFloat = true
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, errJSON
		}
	}
	return numberNode(p.s[start:p.i], isFloat), nil
}

func (p *bsonScanner) str() (string, error) {
	q := p.s[p.i]
	p.i++
	var sb strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return sb.String(), nil
		case c < 0x20:
			return "", errJSON
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", errJSON
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/', '\'':
				if e == '\'' && q != '\'' {
					return "", errJSON
				}
				sb.WriteByte(e)
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", errJSON
				}
				if r >= 0xD800 && r < 0xDC00 && strings.HasPrefix(p.s[p.i:], `\u`) {
					save := p.i
					p.i += 2
					if r2, ok := p.hex4(); ok && r2 >= 0xDC00 && r2 < 0xE000 {
						r = (r-0xD800)<<10 + (r2 - 0xDC00) + 0x10000
					} else {
						p.i = save
					}
				}
				sb.WriteRune(r)
			default:
				return "", errJSON
			}
		default:
			_, size := utf8.DecodeRuneInString(p.s[p.i:])
			sb.WriteString(p.s[p.i : p.i+size])
			p.i += size
		}
	}
	return "", errJSON
}

func (p *bsonScanner) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}
