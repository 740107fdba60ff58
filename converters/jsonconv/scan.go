package jsonconv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connect/jvm"
)

// The decoder works in two passes over the record bytes, without building a tree: validate checks the
// syntax of the first JSON value (as Jackson's readTree would, before any conversion happens), then the
// conversion walks the same bytes guided by the schema, skipping what it does not need.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// validate checks the first JSON value starting at i (after whitespace) and returns its start and end.
// start == -1 means the input holds no value at all (Jackson's MissingNode). Trailing bytes after the
// first value are ignored, as readTree does, except that a root-level number or literal must be followed
// by whitespace or the end.
func validate(b []byte) (start, end int, err error) {
	i := skipWS(b, 0)
	if i == len(b) {
		return -1, -1, nil
	}
	e, err := validValue(b, i, 0)
	if err != nil {
		return 0, 0, err
	}
	if c := b[i]; c != '{' && c != '[' && c != '"' && e < len(b) && !isSpace(b[e]) {
		return 0, 0, fmt.Errorf("unexpected character %q after root-level value at offset %d", b[e], e)
	}
	return i, e, nil
}

func validValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, fmt.Errorf("unexpected end-of-input")
	}
	switch c := b[i]; {
	case c == '{':
		_, e, err := validObject(b, i, depth, nil, false)
		return e, err
	case c == '[':
		if depth >= jvm.MaxNestingDepth {
			return 0, fmt.Errorf("document nesting depth exceeds the maximum allowed (%d)", jvm.MaxNestingDepth)
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = validValue(b, i, depth+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, fmt.Errorf("unexpected end-of-input: expected close marker for Array")
			}
			if b[i] == ']' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return 0, fmt.Errorf("unexpected character %q at offset %d: was expecting comma to separate Array entries", b[i], i)
			}
			i = skipWS(b, i+1)
		}
	case c == '"':
		e, _, err := validString(b, i)
		return e, err
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		e, _, err := validNumber(b, i)
		return e, err
	default:
		return 0, fmt.Errorf("unexpected character %q at offset %d", c, i)
	}
}

// validObject checks the object at i (at depth) and returns its end; with list, it appends to members
// where each member lies (jsonvalue.Member).
func validObject(b []byte, i, depth int, members []jsonvalue.Member, list bool) ([]jsonvalue.Member, int, error) {
	if depth >= jvm.MaxNestingDepth {
		return members, 0, fmt.Errorf("document nesting depth exceeds the maximum allowed (%d)", jvm.MaxNestingDepth)
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return members, i + 1, nil
	}
	for {
		if i >= len(b) {
			return members, 0, fmt.Errorf("unexpected end-of-input within/between Object entries")
		}
		if b[i] != '"' {
			return members, 0, fmt.Errorf("unexpected character %q at offset %d: was expecting double-quote to start field name", b[i], i)
		}
		name := i
		e, nameEsc, err := validString(b, i)
		if err != nil {
			return members, 0, err
		}
		nameEnd := e
		i = skipWS(b, e)
		if i >= len(b) || b[i] != ':' {
			return members, 0, fmt.Errorf("was expecting a colon to separate field name and value at offset %d", i)
		}
		i = skipWS(b, i+1)
		v := i
		if !list {
			if i, err = validValue(b, i, depth+1); err != nil {
				return members, 0, err
			}
		} else {
			var flags jsonvalue.MemberFlags
			if nameEsc {
				flags = jsonvalue.NameEscaped
			}
			switch {
			case i < len(b) && b[i] == '"':
				var esc bool
				if i, esc, err = validString(b, i); esc {
					flags |= jsonvalue.ValueEscaped
				}
			case i < len(b) && (b[i] == '-' || (b[i] >= '0' && b[i] <= '9')):
				var frac bool
				if i, frac, err = validNumber(b, i); frac {
					flags |= jsonvalue.ValueFraction
				}
			default:
				i, err = validValue(b, i, depth+1)
			}
			if err != nil {
				return members, 0, err
			}
			members = append(members, jsonvalue.Member{Name: int32(name), NameEnd: int32(nameEnd), Value: int32(v), ValueEnd: int32(i), Flags: flags})
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return members, 0, fmt.Errorf("unexpected end-of-input within/between Object entries")
		}
		if b[i] == '}' {
			return members, i + 1, nil
		}
		if b[i] != ',' {
			return members, 0, fmt.Errorf("unexpected character %q at offset %d: was expecting comma to separate Object entries", b[i], i)
		}
		i = skipWS(b, i+1)
	}
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80
}

func validLiteral(b []byte, i int, lit string) (int, error) {
	e := i + len(lit)
	if e > len(b) || string(b[i:e]) != lit || (e < len(b) && isIdent(b[e])) {
		j := i
		for j < len(b) && isIdent(b[j]) && j-i < 256 {
			j++
		}
		return 0, fmt.Errorf("unrecognized token '%s': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')", b[i:max(j, i+1)])
	}
	return e, nil
}

// validNumber accepts JSON numbers plus leading zeros (ALLOW_LEADING_ZEROS_FOR_NUMBERS); it returns the
// number's end and whether it has a fraction or an exponent.
func validNumber(b []byte, i int) (int, bool, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	d := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == d {
		return 0, false, fmt.Errorf("invalid numeric value: missing integer part at offset %d", start)
	}
	frac := false
	if i < len(b) && b[i] == '.' {
		frac = true
		i++
		d = i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, false, fmt.Errorf("unexpected character in number at offset %d: decimal point not followed by a digit", i)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		frac = true
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d = i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, false, fmt.Errorf("unexpected character in number at offset %d: exponent indicator not followed by a digit", i)
		}
	}
	if i-start > 1000 {
		return 0, false, fmt.Errorf("number value length (%d) exceeds the maximum allowed (1000)", i-start)
	}
	return i, frac, nil
}

// validString checks a string token starting at the opening quote; it returns the index after the closing
// quote and whether the token has a backslash escape.
func validString(b []byte, i int) (int, bool, error) {
	i++
	esc := false
	for i < len(b) {
		if hasAVX2 && len(b)-i >= 48 {
			// a string of more than 16 plain bytes goes on 32 bytes per step
			if m := plainMask(b, i); m != 0 {
				i += bits.TrailingZeros64(m) / 8
			} else if m = plainMask(b, i+8); m != 0 {
				i += 8 + bits.TrailingZeros64(m)/8
			} else {
				i = plainASCII(b, i+16+plainASCII32(b[i+16:]))
			}
		} else {
			i = plainASCII(b, i)
		}
		if i+8 > len(b) {
			for i < len(b) && plainByte[b[i]] {
				i++
			}
			if i >= len(b) {
				break
			}
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, esc, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return 0, false, fmt.Errorf("unexpected end-of-input in string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, false, fmt.Errorf("unexpected end-of-input in character escape sequence")
				}
				for _, h := range b[i+2 : i+6] {
					if hexVal(h) < 0 {
						return 0, false, fmt.Errorf("unexpected character %q: expected a hex-digit for character escape sequence", h)
					}
				}
				i += 6
			default:
				return 0, false, fmt.Errorf("unrecognized character escape %q", b[i+1])
			}
		case c < 0x20:
			return 0, false, fmt.Errorf("illegal unquoted character ((CTRL-CHAR, code %d)): has to be escaped using backslash to be included in string value", c)
		case c < 0x80:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				return 0, false, fmt.Errorf("invalid UTF-8 start byte 0x%02x", c)
			}
			i += n
		}
	}
	return 0, false, fmt.Errorf("unexpected end-of-input: was expecting closing quote for a string value")
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// ---- helpers over validated input ---------------------------------------------------------------------

// skip returns the end of the (valid) value starting at i.
func skip(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		return i
	}
}

func skipString(b []byte, i int) int {
	end, _ := scanString(b, i)
	return end
}

// scanString returns the end of the (valid) string token at i and whether it has no escapes. The quote is
// found with IndexByte; only a string with an escape is walked byte by byte, from its first backslash.
func scanString(b []byte, i int) (int, bool) {
	i++
	q := bytes.IndexByte(b[i:], '"')
	if q < 0 {
		return len(b), true
	}
	bs := bytes.IndexByte(b[i:i+q], '\\')
	if bs < 0 {
		return i + q + 1, true
	}
	for i += bs; i < len(b); {
		switch b[i] {
		case '"':
			return i + 1, false
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return len(b), false
}

// stringAt decodes the (valid) string token at i. It returns the string and the index after it. Strings
// without escapes are sliced; the conversion to string is the one allocation.
func stringAt(b []byte, i int) (string, int) {
	end, plain := scanString(b, i)
	raw := b[i+1 : end-1]
	if !plain {
		return unescape(raw), end
	}
	return string(raw), end
}

// rawString returns the bytes of a string token without escapes and whether it had none (for lookups).
func rawString(b []byte, i int) ([]byte, int, bool) {
	end, plain := scanString(b, i)
	return b[i+1 : end-1], end, plain
}

func unescape(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		e := raw[i+1]
		i += 2
		switch e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(hex4(raw[i:]))
			i += 4
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 := rune(hex4(raw[i+2:]))
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError // a lone surrogate cannot be represented in a Go string
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, e)
		}
	}
	return string(out)
}

func hex4(b []byte) int {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// nodeType names the Jackson JsonNodeType of the value at i (i < 0: MISSING).
func nodeType(b []byte, i int) string {
	if i < 0 {
		return "MISSING"
	}
	switch b[i] {
	case '{':
		return "OBJECT"
	case '[':
		return "ARRAY"
	case '"':
		return "STRING"
	case 't', 'f':
		return "BOOLEAN"
	case 'n':
		return "NULL"
	}
	return "NUMBER"
}

func isNull(b []byte, i int) bool { return i < 0 || b[i] == 'n' }

func isNumber(b []byte, i int) bool { return i >= 0 && (b[i] == '-' || (b[i] >= '0' && b[i] <= '9')) }

// numberToken returns the number's text and whether it is integral (no fraction, no exponent: Jackson's
// IntNode/LongNode/BigIntegerNode as opposed to a DecimalNode).
func numberToken(b []byte, i int) ([]byte, bool) {
	j := i
	integral := true
	for j < len(b) {
		c := b[j]
		if c == '.' || c == 'e' || c == 'E' {
			integral = false
		} else if !(c == '-' || c == '+' || (c >= '0' && c <= '9')) {
			break
		}
		j++
	}
	return b[i:j], integral
}

// objectFields calls fn for each member of the (valid) object at i with the key bytes (escapes decoded
// only when present) and the value's start; fn returns false to stop.
func objectFields(b []byte, i int, fn func(key []byte, val int) bool) {
	i = skipWS(b, i+1)
	if b[i] == '}' {
		return
	}
	for {
		raw, e, plain := rawString(b, i)
		key := raw
		if !plain {
			key = []byte(unescape(raw))
		}
		i = skipWS(b, e)
		i = skipWS(b, i+1) // ':'
		if !fn(key, i) {
			return
		}
		i = skipWS(b, skip(b, i))
		if b[i] == '}' {
			return
		}
		i = skipWS(b, i+1) // ','
	}
}

// arrayElems calls fn for each element start of the (valid) array at i.
func arrayElems(b []byte, i int, fn func(val int) error) error {
	i = skipWS(b, i+1)
	if b[i] == ']' {
		return nil
	}
	for {
		if err := fn(i); err != nil {
			return err
		}
		i = skipWS(b, skip(b, i))
		if b[i] == ']' {
			return nil
		}
		i = skipWS(b, i+1)
	}
}

// objectGet returns the start of the last value of key in the (valid) object at i, or -1 (Jackson's get).
func objectGet(b []byte, i int, key string) int {
	at := -1
	objectFields(b, i, func(k []byte, v int) bool {
		if string(k) == key {
			at = v
		}
		return true
	})
	return at
}

// plainByte marks the bytes validString takes as they are.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainMask has the high bit set of each of the 8 bytes from i that is not plain (plainByte): (x -
// n*ones) &^ x sets it for a byte below n, and only above such a byte otherwise, so the lowest bit
// set is the first byte that is not plain.
func plainMask(b []byte, i int) uint64 {
	const (
		ones   = 0x0101010101010101
		highs  = 0x8080808080808080
		quote  = '"' * ones
		bslash = '\\' * ones
		space  = 0x20 * ones
	)
	w := binary.LittleEndian.Uint64(b[i:])
	q, s := w^quote, w^bslash
	return ((w-space)&^w | (q-ones)&^q | (s-ones)&^s | w) & highs
}

// plainASCII skips, 8 bytes at a time, the bytes from i that validString takes as they are: ASCII
// from 0x20 on, other than '"' and '\\'. It stops at the first byte that is not such a byte, or where
// fewer than 8 bytes are left.
func plainASCII(b []byte, i int) int {
	for ; len(b)-i >= 8; i += 8 {
		if m := plainMask(b, i); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}
