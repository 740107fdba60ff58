// Package jvm holds what the JVM does that Go's standard library does differently and that more than one
// layer must reproduce byte for byte: Jackson's JSON parsing with its exception texts, and Java's number
// formatting. It imports nothing of the module, so connect, connectors, converters and the REST API can all
// use it.
package jvm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the kind of a JSON value (Jackson's JsonToken family).
type Kind byte

const (
	Object Kind = 'o'
	Array  Kind = 'a'
	String Kind = 's'
	Number Kind = 'n'
	True   Kind = 't'
	False  Kind = 'f'
	Null   Kind = 'z'
)

// Value is a parsed JSON value with its position in the source.
type Value struct {
	Kind  Kind
	Text  string // string value, number text, "true"/"false"
	Keys  []string
	Vals  []*Value
	Elems []*Value
	Start int // offset of the value's first byte
	End   int // offset just after the value
}

// Get is the value of key in an object.
func (v *Value) Get(key string) (*Value, bool) {
	for i, k := range v.Keys {
		if k == key {
			return v.Vals[i], true
		}
	}
	return nil, false
}

// JacksonError is a parse or binding failure, already phrased as Jackson would.
type JacksonError struct {
	Msg      string
	AtStart  bool   // raised on the first token of a value (Jackson reads it before any deserializer runs)
	startOff int    // where that value starts
	TopKey   string // top-level property whose value was being read (bean deserializers add it as a chain)
}

func (e *JacksonError) Error() string { return e.Msg }

type parser struct {
	b   []byte
	pos int
	// fits, when set, is asked before each value whether a value starting with that byte can be bound where
	// stack says it stands; one that cannot ends the parse (see ParseJSONStreamFitting).
	fits func(stack []Frame, first byte) bool
	// stream is Jackson's byte-stream parser (a JAX-RS provider reading a request body): it reports an unexpected
	// character at its own column and an unrecognized token at its start, where the String parser reports the
	// position after them.
	stream bool
}

// RedactedSource starts a location in Jackson 2.16+ messages, which leave the source out.
const RedactedSource = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); "

// Location is Jackson's location of byte offset off in b, as its exception messages print it.
func Location(b []byte, off int) string { return (&parser{b: b}).loc(off) }

func (p *parser) loc(off int) string {
	line, rowStart := p.row(off)
	return fmt.Sprintf("%sline: %d, column: %d]", RedactedSource, line, off-rowStart+1)
}

// row is the line of byte offset off and the offset its line starts at; "\n", "\r" and "\r\n" end a line.
func (p *parser) row(off int) (line, rowStart int) {
	line = 1
	for i := 0; i < off && i < len(p.b); i++ {
		switch p.b[i] {
		case '\r':
			if i+1 < len(p.b) && p.b[i+1] == '\n' {
				i++
			}
			fallthrough
		case '\n':
			line++
			rowStart = i + 1
		}
	}
	return line, rowStart
}

// after is Jackson's location just past the byte at idx (that byte not counted as a line break).
func (p *parser) after(idx int) string {
	line, rowStart := p.row(idx)
	col := idx - rowStart + 2
	if p.stream {
		col--
	}
	return fmt.Sprintf("%sline: %d, column: %d]", RedactedSource, line, col)
}

// failPast reports an error found reading the byte before off: the String parser's location is off, the stream
// parser's that byte's.
func (p *parser) failPast(off int, format string, args ...any) error {
	if p.stream {
		off--
	}
	return p.fail(off, format, args...)
}

func (p *parser) fail(off int, format string, args ...any) error {
	return &JacksonError{Msg: fmt.Sprintf(format, args...) + "\n at " + p.loc(off)}
}

func charDesc(c rune) string {
	if unicode.IsControl(c) {
		return fmt.Sprintf("(CTRL-CHAR, code %d)", c)
	}
	if c > 255 {
		return fmt.Sprintf("'%c' (code %d / 0x%x)", c, c, c)
	}
	return fmt.Sprintf("'%c' (code %d)", c, c)
}

const validValues = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"

// unexpected reports the byte at p.pos (Jackson's location is just past it).
func (p *parser) unexpected(what string) error {
	c := rune(p.b[p.pos])
	if c >= utf8.RuneSelf {
		c, _ = utf8.DecodeRune(p.b[p.pos:])
	}
	return &JacksonError{Msg: fmt.Sprintf("Unexpected character (%s): %s\n at %s", charDesc(c), what, p.after(p.pos))}
}

func startErr(err error, start int) error {
	var je *JacksonError
	if errors.As(err, &je) {
		je.AtStart = true
		je.startOff = start
	}
	return err
}

// Frame is a container open while parsing.
type Frame struct {
	Kind  Kind
	Start int
	Key   string // object: the key whose value is being read
	Index int    // array: the index of the element being read
}

// MaxNestingDepth is Jackson's StreamReadConstraints default (2.15+): the 1001st nested array or object fails.
// It also bounds the parser's recursion, so a hostile body cannot exhaust the goroutine stack.
const MaxNestingDepth = 1000

// NestingError is Jackson's StreamConstraintsException for a too-deep document (its message has no location).
// Path is the stack of containers that were open, outermost first.
type NestingError struct {
	Depth int
	Path  []Frame
}

func (e *NestingError) Error() string {
	return fmt.Sprintf("Document nesting depth (%d) exceeds the maximum allowed (%d, from `StreamReadConstraints.getMaxNestingDepth()`)", e.Depth, MaxNestingDepth)
}

// ParseJSON reads the first JSON value of b as Jackson's ObjectMapper.readTree does with default features,
// so that callers can answer malformed JSON the way the JVM does: Jackson's exception text (its 1-based
// line/column, source redacted as in Jackson 2.16+), key order kept (LinkedHashMap: a repeated key keeps its
// first position and takes the last value), and anything after the first value ignored
// (FAIL_ON_TRAILING_TOKENS is off). Empty input gives nil, nil (ALLOW_EMPTY_INPUT: the entity is null).
func ParseJSON(b []byte) (*Value, error) { return parse(&parser{b: b}) }

// ParseJSONStream is ParseJSON with the locations of Jackson's byte-stream parser, which reads REST request bodies.
func ParseJSONStream(b []byte) (*Value, error) { return parse(&parser{b: b, stream: true}) }

// ErrStopped ends ParseJSONStreamFitting at the first value that does not fit.
var ErrStopped = errors.New("parse stopped at a value that does not fit")

// ParseJSONStreamFitting is ParseJSONStream for a body bound to a known type, as Jackson binds while it
// reads: the parse stops at the first value fits refuses, so a large body that cannot bind costs no more
// than its prefix. It then returns the tree read so far, ending with that value (a scalar whole, an
// object or array without its members), and ErrStopped; binding that tree reports the mismatch. Errors
// in the bytes after that value are not reported, as Jackson never reads them.
func ParseJSONStreamFitting(b []byte, fits func(stack []Frame, first byte) bool) (*Value, error) {
	return parse(&parser{b: b, stream: true, fits: fits})
}

func parse(p *parser) (*Value, error) {
	b := p.b
	p.skipWS()
	if p.pos >= len(b) {
		return nil, nil
	}
	v, err := p.value(nil)
	if err == errStopHere { // the root itself does not fit
		err = ErrStopped
	}
	return v, err
}

// errStopHere carries a value that does not fit up to its container, which keeps it as its last member.
var errStopHere = errors.New("stop here")

// refused is the value at p.pos that fits refused: scalars are read whole (their text is in binding
// messages), containers only to their first token.
func (p *parser) refused(stack []Frame) (*Value, error) {
	start := p.pos
	switch c := p.b[p.pos]; c {
	case '{', '[':
		p.pos++
		k := Object
		if c == '[' {
			k = Array
		}
		return &Value{Kind: k, Start: start, End: p.pos}, errStopHere
	}
	saved := p.fits
	p.fits = nil
	v, err := p.value(stack)
	p.fits = saved
	if err != nil {
		return nil, err
	}
	return v, errStopHere
}

func (p *parser) skipWS() {
	for p.pos < len(p.b) {
		switch p.b[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) eof(stack []Frame, what string) error {
	if what == "" && len(stack) > 0 {
		f := stack[len(stack)-1]
		name := "Object"
		if f.Kind == Array {
			name = "Array"
		}
		what = fmt.Sprintf(": expected close marker for %s (start marker at %s)", name, p.loc(f.Start))
	}
	return p.fail(len(p.b), "Unexpected end-of-input%s", what)
}

func isIdentStart(c rune) bool {
	return unicode.IsLetter(c) || c == '_' || c == '$'
}

func isIdentPart(c rune) bool {
	return isIdentStart(c) || unicode.IsDigit(c)
}

func (p *parser) value(stack []Frame) (*Value, error) {
	p.skipWS()
	if p.pos >= len(p.b) {
		return nil, p.eof(stack, "")
	}
	start := p.pos
	if p.fits != nil && !p.fits(stack, p.b[p.pos]) {
		return p.refused(stack)
	}
	switch c := p.b[p.pos]; {
	case (c == '{' || c == '[') && len(stack) >= MaxNestingDepth:
		return nil, &NestingError{Depth: len(stack) + 1, Path: append([]Frame(nil), stack...)}
	case c == '{':
		return p.object(append(stack, Frame{Kind: Object, Start: start}))
	case c == '[':
		return p.array(append(stack, Frame{Kind: Array, Start: start}))
	case c == '"':
		s, err := p.str(false)
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Text: s, Start: start, End: p.pos}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '/':
		return nil, startErr(p.unexpected("maybe a (non-standard) comment? (not recognized as one since Feature 'ALLOW_COMMENTS' not enabled for parser)"), start)
	default:
		r, _ := utf8.DecodeRune(p.b[p.pos:])
		if isIdentStart(r) {
			tok := p.ident()
			switch tok {
			case "true":
				return &Value{Kind: True, Text: tok, Start: start, End: p.pos}, nil
			case "false":
				return &Value{Kind: False, Text: tok, Start: start, End: p.pos}, nil
			case "null":
				return &Value{Kind: Null, Start: start, End: p.pos}, nil
			}
			// Jackson's String parser reads the token and the character after it before reporting; its stream
			// parser reports the token's start.
			end := p.pos
			if end < len(p.b) {
				end++
			}
			if p.stream {
				end = start
			}
			return nil, startErr(p.fail(end, "Unrecognized token '%s': was expecting %s", tok, validValues), start)
		}
		return nil, startErr(p.unexpected("expected a valid value "+validValues), start)
	}
}

func (p *parser) ident() string {
	start := p.pos
	for p.pos < len(p.b) {
		r, n := utf8.DecodeRune(p.b[p.pos:])
		if !isIdentPart(r) {
			break
		}
		p.pos += n
	}
	return string(p.b[start:p.pos])
}

func (p *parser) number() (*Value, error) {
	start := p.pos
	if p.b[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.b) && p.b[p.pos] >= '0' && p.b[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	intStart := p.pos
	if digits() == 0 {
		if p.pos >= len(p.b) {
			return nil, p.fail(len(p.b), "Unexpected end-of-input in a Number value")
		}
		return nil, p.unexpected("expected digit (0-9) to follow minus sign, for valid numeric value")
	}
	if p.b[intStart] == '0' && p.pos-intStart > 1 {
		return nil, p.failPast(p.pos, "Invalid numeric value: Leading zeroes not allowed")
	}
	if p.pos < len(p.b) && p.b[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			if p.pos >= len(p.b) {
				return nil, p.fail(len(p.b), "Unexpected end-of-input in a Number value")
			}
			return nil, p.unexpected("Decimal point not followed by a digit")
		}
	}
	if p.pos < len(p.b) && (p.b[p.pos] == 'e' || p.b[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.b) && (p.b[p.pos] == '+' || p.b[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			if p.pos >= len(p.b) {
				return nil, p.fail(len(p.b), "Unexpected end-of-input in a Number value")
			}
			return nil, p.unexpected("Exponent indicator not followed by a digit")
		}
	}
	return &Value{Kind: Number, Text: string(p.b[start:p.pos]), Start: start, End: p.pos}, nil
}

func (p *parser) str(fieldName bool) (string, error) {
	p.pos++ // opening quote
	// most strings have no escape: one copy of their bytes
	for i := p.pos; i < len(p.b); i++ {
		if c := p.b[i]; c == '"' {
			s := string(p.b[p.pos:i])
			p.pos = i + 1
			return s, nil
		} else if c == '\\' || c < 0x20 {
			break
		}
	}
	var sb strings.Builder
	for {
		if p.pos >= len(p.b) {
			if fieldName {
				return "", p.fail(len(p.b), "Unexpected end-of-input in field name")
			}
			return "", p.fail(len(p.b), "Unexpected end-of-input: was expecting closing quote for a string value")
		}
		c := p.b[p.pos]
		switch {
		case c == '"':
			p.pos++
			return sb.String(), nil
		case c < 0x20:
			what := "string value"
			if fieldName {
				what = "name"
			}
			return "", &JacksonError{Msg: fmt.Sprintf("Illegal unquoted character (%s): has to be escaped using backslash to be included in %s\n at %s", charDesc(rune(c)), what, p.after(p.pos))}
		case c == '\\':
			p.pos++
			if p.pos >= len(p.b) {
				return "", p.fail(len(p.b), "Unexpected end-of-input in character escape sequence")
			}
			e := p.b[p.pos]
			p.pos++
			switch e {
			case '"', '\\', '/':
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
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) && p.pos+6 <= len(p.b) && p.b[p.pos] == '\\' && p.b[p.pos+1] == 'u' {
					save := p.pos
					p.pos += 2
					r2, err := p.hex4()
					if err == nil {
						if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
							sb.WriteRune(d)
							continue
						}
					}
					p.pos = save
				}
				sb.WriteRune(r)
			default:
				return "", p.failPast(p.pos, "Unrecognized character escape %s", charDesc(rune(e)))
			}
		default:
			sb.WriteByte(c)
			p.pos++
		}
	}
}

func (p *parser) hex4() (rune, error) {
	var r rune
	for i := 0; i < 4; i++ {
		if p.pos >= len(p.b) {
			return 0, p.fail(len(p.b), "Unexpected end-of-input in character escape sequence")
		}
		c := p.b[p.pos]
		p.pos++
		d, err := strconv.ParseUint(string(c), 16, 8)
		if err != nil {
			return 0, p.failPast(p.pos, "Unexpected character (%s): expected a hex-digit for character escape sequence", charDesc(rune(c)))
		}
		r = r<<4 | rune(d)
	}
	return r, nil
}

// keyIndex finds an object's repeated keys in linear time overall: a scan while the object is narrow, a map
// once it grows (hostile bodies carry tens of thousands of members).
type keyIndex struct{ m map[string]int }

const keyIndexFrom = 16

func (x *keyIndex) find(keys []string, key string) (int, bool) {
	if x.m != nil {
		i, ok := x.m[key]
		return i, ok
	}
	for i, k := range keys {
		if k == key {
			return i, true
		}
	}
	return 0, false
}

// add records key, about to be appended at len(keys).
func (x *keyIndex) add(keys []string, key string) {
	switch {
	case x.m != nil:
		x.m[key] = len(keys)
	case len(keys) >= keyIndexFrom:
		x.m = make(map[string]int, 2*len(keys))
		for i, k := range keys {
			x.m[k] = i
		}
		x.m[key] = len(keys)
	}
}

func (p *parser) object(stack []Frame) (*Value, error) {
	v := &Value{Kind: Object, Start: p.pos}
	var idx keyIndex
	p.pos++
	p.skipWS()
	if p.pos < len(p.b) && p.b[p.pos] == '}' {
		p.pos++
		v.End = p.pos
		return v, nil
	}
	for {
		p.skipWS()
		if p.pos >= len(p.b) {
			return nil, p.eof(stack, "")
		}
		if p.b[p.pos] != '"' {
			return nil, p.unexpected("was expecting double-quote to start field name")
		}
		key, err := p.str(true)
		if err != nil {
			return nil, err
		}
		p.skipWS()
		if p.pos >= len(p.b) {
			return nil, p.eof(stack, " within/between Object entries")
		}
		if p.b[p.pos] != ':' {
			return nil, p.unexpected("was expecting a colon to separate field name and value")
		}
		p.pos++
		p.skipWS()
		if p.pos >= len(p.b) {
			return nil, p.eof(stack, " within/between Object entries")
		}
		stack[len(stack)-1].Key = key
		valStart := p.pos
		val, err := p.value(stack)
		if err == errStopHere || err == ErrStopped {
			v.Keys, v.Vals = append(v.Keys, key), append(v.Vals, val) // the last member, so binding meets it
			v.End = p.pos
			return v, ErrStopped
		}
		if err != nil {
			// A top-level property's deserializer adds the reference chain, unless the error was raised on the
			// property value's own first token (read before any deserializer runs).
			var je *JacksonError
			if len(stack) == 1 && errors.As(err, &je) && !(je.AtStart && je.startOff == valStart) {
				je.TopKey = key
			}
			return nil, err
		}
		if i, ok := idx.find(v.Keys, key); ok {
			v.Vals[i] = val
		} else {
			idx.add(v.Keys, key)
			v.Keys = append(v.Keys, key)
			v.Vals = append(v.Vals, val)
		}
		p.skipWS()
		if p.pos >= len(p.b) {
			return nil, p.eof(stack, "")
		}
		switch p.b[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			v.End = p.pos
			return v, nil
		default:
			return nil, p.unexpected("was expecting comma to separate Object entries")
		}
	}
}

func (p *parser) array(stack []Frame) (*Value, error) {
	v := &Value{Kind: Array, Start: p.pos}
	p.pos++
	p.skipWS()
	if p.pos < len(p.b) && p.b[p.pos] == ']' {
		p.pos++
		v.End = p.pos
		return v, nil
	}
	for {
		stack[len(stack)-1].Index = len(v.Elems)
		el, err := p.value(stack)
		if err == errStopHere || err == ErrStopped {
			v.Elems = append(v.Elems, el)
			v.End = p.pos
			return v, ErrStopped
		}
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, el)
		p.skipWS()
		if p.pos >= len(p.b) {
			return nil, p.eof(stack, "")
		}
		switch p.b[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			v.End = p.pos
			return v, nil
		default:
			return nil, p.unexpected("was expecting comma to separate Array entries")
		}
	}
}

// TrailingTokens is Jackson's FAIL_ON_TRAILING_TOKENS check after a request body's first value (ending at end) was
// bound as boundAs, as the JVM's REST provider reads bodies: nil when only white space follows; the error of the
// next token when it is malformed; else "Trailing token (of type …) found after value". Locations are the byte
// stream parser's (the token's start).
func TrailingTokens(b []byte, end int, boundAs string) error {
	p := &parser{b: b, pos: end, stream: true}
	p.skipWS()
	if p.pos >= len(b) {
		return nil
	}
	start := p.pos
	var typ string
	switch c := b[p.pos]; c {
	case '{':
		typ = "START_OBJECT"
	case '[':
		typ = "START_ARRAY"
	case '"':
		typ = "VALUE_STRING"
	case '}', ']':
		kind := map[byte]string{'}': "Object", ']': "Array"}[c]
		return p.fail(start, "Unexpected close marker '%c': no open %s to close", c, kind)
	default:
		r, _ := utf8.DecodeRune(b[p.pos:])
		if c != '-' && (c < '0' || c > '9') && !isIdentStart(r) {
			return p.unexpected("expected a value")
		}
		v, err := p.value(nil)
		if err != nil {
			return err
		}
		switch {
		case v.Kind == True:
			typ = "VALUE_TRUE"
		case v.Kind == False:
			typ = "VALUE_FALSE"
		case v.Kind == Null:
			typ = "VALUE_NULL"
		case strings.ContainsAny(v.Text, ".eE"):
			typ = "VALUE_NUMBER_FLOAT"
		default:
			typ = "VALUE_NUMBER_INT"
		}
	}
	return &JacksonError{Msg: fmt.Sprintf("Trailing token (of type %s) found after value (bound as `%s`): not allowed as per `DeserializationFeature.FAIL_ON_TRAILING_TOKENS`\n at %s", typ, boundAs, p.loc(start))}
}
