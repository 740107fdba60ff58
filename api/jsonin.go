package api

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Request bodies are parsed here rather than with encoding/json so that the worker answers malformed or
// mistyped JSON the way the JVM does: Jackson's exception text (with its 1-based line/column, source redacted as
// in Jackson 2.16+) in a 500, scalars coerced to strings in string maps, key order kept (LinkedHashMap), and
// anything after the first value ignored (FAIL_ON_TRAILING_TOKENS is off).

type jkind byte

const (
	jObject jkind = 'o'
	jArray  jkind = 'a'
	jString jkind = 's'
	jNumber jkind = 'n'
	jTrue   jkind = 't'
	jFalse  jkind = 'f'
	jNull   jkind = 'z'
)

type jval struct {
	kind  jkind
	text  string // string value, number text, "true"/"false"
	keys  []string
	vals  []*jval
	elems []*jval
	start int // offset of the value's first byte
	end   int // offset just after the value
}

func (v *jval) get(key string) (*jval, bool) {
	for i, k := range v.keys {
		if k == key {
			return v.vals[i], true
		}
	}
	return nil, false
}

// jacksonError is a parse or binding failure, already phrased as Jackson would.
type jacksonError struct {
	msg     string
	atStart bool   // raised on the first token of a value (Jackson reads it before any deserializer runs)
	topKey  string // top-level property whose value was being read (bean deserializers add it as a chain)
}

func (e *jacksonError) Error() string { return e.msg }

// withChain appends the reference chain a bean deserializer adds to a parse error inside a property.
func withChain(err error, class string) error {
	var je *jacksonError
	if errors.As(err, &je) && je.topKey != "" {
		return &jacksonError{msg: fmt.Sprintf("%s (through reference chain: %s[%q])", je.msg, class, je.topKey)}
	}
	return err
}

// withOffsetsChain adds the reference chain Jackson's bean and collection deserializers put on a nesting error
// raised inside an offset's partition or offset map (the maps themselves pass it through unwrapped).
func withOffsetsChain(err error) error {
	var ne *nestingError
	if !errors.As(err, &ne) || len(ne.path) < 3 {
		return err
	}
	top, list, entry := ne.path[0], ne.path[1], ne.path[2]
	if top.kind != jObject || top.key != "offsets" || list.kind != jArray || entry.kind != jObject ||
		(entry.key != "partition" && entry.key != "offset") {
		return err
	}
	return &jacksonError{msg: fmt.Sprintf("%s (through reference chain: %s[\"offsets\"]->java.util.ArrayList[%d]->%s[%q])",
		ne.Error(), classOffsets, list.index, classOffset, entry.key)}
}

type jparser struct {
	b   []byte
	pos int
}

const redacted = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); "

func (p *jparser) loc(off int) string {
	line, rowStart := 1, 0
	for i := 0; i < off && i < len(p.b); i++ {
		if p.b[i] == '\n' {
			line++
			rowStart = i + 1
		}
	}
	return fmt.Sprintf("%sline: %d, column: %d]", redacted, line, off-rowStart+1)
}

// after is Jackson's location just past the byte at idx (that byte not counted as a line break).
func (p *jparser) after(idx int) string {
	line, rowStart := 1, 0
	for i := 0; i < idx && i < len(p.b); i++ {
		if p.b[i] == '\n' {
			line++
			rowStart = i + 1
		}
	}
	return fmt.Sprintf("%sline: %d, column: %d]", redacted, line, idx-rowStart+2)
}

func (p *jparser) fail(off int, format string, args ...any) error {
	return &jacksonError{msg: fmt.Sprintf(format, args...) + "\n at " + p.loc(off)}
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
func (p *jparser) unexpected(what string) error {
	c := rune(p.b[p.pos])
	if c >= utf8.RuneSelf {
		c, _ = utf8.DecodeRune(p.b[p.pos:])
	}
	return &jacksonError{msg: fmt.Sprintf("Unexpected character (%s): %s\n at %s", charDesc(c), what, p.after(p.pos))}
}

func startErr(err error) error {
	var je *jacksonError
	if errors.As(err, &je) {
		je.atStart = true
	}
	return err
}

type frame struct {
	kind  jkind
	start int
	key   string // object: the key whose value is being read
	index int    // array: the index of the element being read
}

// maxNestingDepth is Jackson's StreamReadConstraints default (2.15+): the 1001st nested array or object fails.
// It also bounds the parser's recursion, so a hostile body cannot exhaust the goroutine stack.
const maxNestingDepth = 1000

// nestingError is Jackson's StreamConstraintsException for a too-deep document (its message has no location).
// path is the stack of containers that were open, outermost first.
type nestingError struct {
	depth int
	path  []frame
}

func (e *nestingError) Error() string {
	return fmt.Sprintf("Document nesting depth (%d) exceeds the maximum allowed (%d, from `StreamReadConstraints.getMaxNestingDepth()`)", e.depth, maxNestingDepth)
}

// parseJSON returns nil, nil for an empty body (Jackson's ALLOW_EMPTY_INPUT: the entity is null).
func parseJSON(b []byte) (*jval, error) {
	p := &jparser{b: b}
	p.skipWS()
	if p.pos >= len(b) {
		return nil, nil
	}
	return p.value(nil)
}

func (p *jparser) skipWS() {
	for p.pos < len(p.b) {
		switch p.b[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jparser) eof(stack []frame, what string) error {
	if what == "" && len(stack) > 0 {
		f := stack[len(stack)-1]
		name := "Object"
		if f.kind == jArray {
			name = "Array"
		}
		what = fmt.Sprintf(": expected close marker for %s (start marker at %s)", name, p.loc(f.start))
	}
	return p.fail(len(p.b), "Unexpected end-of-input%s", what)
}

func isIdentStart(c rune) bool {
	return unicode.IsLetter(c) || c == '_' || c == '$'
}

func isIdentPart(c rune) bool {
	return isIdentStart(c) || unicode.IsDigit(c)
}

func (p *jparser) value(stack []frame) (*jval, error) {
	p.skipWS()
	if p.pos >= len(p.b) {
		return nil, p.eof(stack, "")
	}
	start := p.pos
	switch c := p.b[p.pos]; {
	case (c == '{' || c == '[') && len(stack) >= maxNestingDepth:
		return nil, &nestingError{depth: len(stack) + 1, path: append([]frame(nil), stack...)}
	case c == '{':
		return p.object(append(stack, frame{kind: jObject, start: start}))
	case c == '[':
		return p.array(append(stack, frame{kind: jArray, start: start}))
	case c == '"':
		s, err := p.str(false)
		if err != nil {
			return nil, err
		}
		return &jval{kind: jString, text: s, start: start, end: p.pos}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '/':
		return nil, startErr(p.unexpected("maybe a (non-standard) comment? (not recognized as one since Feature 'ALLOW_COMMENTS' not enabled for parser)"))
	default:
		r, _ := utf8.DecodeRune(p.b[p.pos:])
		if isIdentStart(r) {
			tok := p.ident()
			switch tok {
			case "true":
				return &jval{kind: jTrue, text: tok, start: start, end: p.pos}, nil
			case "false":
				return &jval{kind: jFalse, text: tok, start: start, end: p.pos}, nil
			case "null":
				return &jval{kind: jNull, start: start, end: p.pos}, nil
			}
			// Jackson reads the token and the character after it before reporting.
			end := p.pos
			if end < len(p.b) {
				end++
			}
			return nil, startErr(p.fail(end, "Unrecognized token '%s': was expecting %s", tok, validValues))
		}
		return nil, startErr(p.unexpected("expected a valid value " + validValues))
	}
}

func (p *jparser) ident() string {
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

func (p *jparser) number() (*jval, error) {
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
		return nil, p.fail(p.pos, "Invalid numeric value: Leading zeroes not allowed")
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
	return &jval{kind: jNumber, text: string(p.b[start:p.pos]), start: start, end: p.pos}, nil
}

func (p *jparser) str(fieldName bool) (string, error) {
	p.pos++ // opening quote
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
			return "", &jacksonError{msg: fmt.Sprintf("Illegal unquoted character (%s): has to be escaped using backslash to be included in %s\n at %s", charDesc(rune(c)), what, p.after(p.pos))}
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
				return "", p.fail(p.pos, "Unrecognized character escape %s", charDesc(rune(e)))
			}
		default:
			sb.WriteByte(c)
			p.pos++
		}
	}
}

func (p *jparser) hex4() (rune, error) {
	var r rune
	for i := 0; i < 4; i++ {
		if p.pos >= len(p.b) {
			return 0, p.fail(len(p.b), "Unexpected end-of-input in character escape sequence")
		}
		c := p.b[p.pos]
		p.pos++
		d, err := strconv.ParseUint(string(c), 16, 8)
		if err != nil {
			return 0, p.fail(p.pos, "Unexpected character (%s): expected a hex-digit for character escape sequence", charDesc(rune(c)))
		}
		r = r<<4 | rune(d)
	}
	return r, nil
}

func (p *jparser) object(stack []frame) (*jval, error) {
	v := &jval{kind: jObject, start: p.pos}
	p.pos++
	p.skipWS()
	if p.pos < len(p.b) && p.b[p.pos] == '}' {
		p.pos++
		v.end = p.pos
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
		stack[len(stack)-1].key = key
		val, err := p.value(stack)
		if err != nil {
			var je *jacksonError
			if len(stack) == 1 && errors.As(err, &je) && !je.atStart {
				je.topKey = key
			}
			return nil, err
		}
		replaced := false
		for i, k := range v.keys {
			if k == key {
				v.vals[i] = val
				replaced = true
			}
		}
		if !replaced {
			v.keys = append(v.keys, key)
			v.vals = append(v.vals, val)
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
			v.end = p.pos
			return v, nil
		default:
			return nil, p.unexpected("was expecting comma to separate Object entries")
		}
	}
}

func (p *jparser) array(stack []frame) (*jval, error) {
	v := &jval{kind: jArray, start: p.pos}
	p.pos++
	p.skipWS()
	if p.pos < len(p.b) && p.b[p.pos] == ']' {
		p.pos++
		v.end = p.pos
		return v, nil
	}
	for {
		stack[len(stack)-1].index = len(v.elems)
		el, err := p.value(stack)
		if err != nil {
			return nil, err
		}
		v.elems = append(v.elems, el)
		p.skipWS()
		if p.pos >= len(p.b) {
			return nil, p.eof(stack, "")
		}
		switch p.b[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			v.end = p.pos
			return v, nil
		default:
			return nil, p.unexpected("was expecting comma to separate Array entries")
		}
	}
}

// ---- binding (Jackson databind's messages for the few types the REST API reads) ----

const (
	classCreateRequest = "org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest"
	classOffsets       = "org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets"
	classOffset        = "org.apache.kafka.connect.runtime.rest.entities.ConnectorOffset"
	typeStringMap      = "java.util.LinkedHashMap<java.lang.String,java.lang.String>"
)

func tokenName(v *jval) (desc, token string) {
	switch v.kind {
	case jObject:
		return "Object value", "START_OBJECT"
	case jArray:
		return "Array value", "START_ARRAY"
	case jString:
		return "String value", "VALUE_STRING"
	case jNumber:
		if strings.ContainsAny(v.text, ".eE") {
			return "Floating-point value", "VALUE_NUMBER_FLOAT"
		}
		return "Integer value", "VALUE_NUMBER_INT"
	case jTrue:
		return "Boolean value", "VALUE_TRUE"
	case jFalse:
		return "Boolean value", "VALUE_FALSE"
	}
	return "Null value", "VALUE_NULL"
}

// tokenLoc is where Jackson's parser stands once it has read the token starting v.
func (p *jparser) tokenLoc(v *jval) string { return p.loc(v.start) }

func (p *jparser) mismatch(v *jval, javaType, chain string) error {
	desc, tok := tokenName(v)
	if v.kind == jString && javaType != "java.lang.String" {
		raw := javaType
		if i := strings.IndexByte(raw, '<'); i >= 0 {
			raw = raw[:i]
		}
		msg := fmt.Sprintf("Cannot construct instance of `%s` (although at least one Creator exists): no String-argument constructor/factory method to deserialize from String value ('%s')\n at %s", raw, v.text, p.tokenLoc(v))
		if chain != "" {
			msg += " (through reference chain: " + chain + ")"
		}
		return &jacksonError{msg: msg}
	}
	msg := fmt.Sprintf("Cannot deserialize value of type `%s` from %s (token `JsonToken.%s`)\n at %s", javaType, desc, tok, p.tokenLoc(v))
	if chain != "" {
		msg += " (through reference chain: " + chain + ")"
	}
	return &jacksonError{msg: msg}
}

// orderedMap is a string map that remembers key order (nil value = JSON null).
type orderedMap struct {
	keys []string
	vals map[string]*string
}

// bindStringMap reads Map<String,String>; a JSON null root gives nil.
func (p *jparser) bindStringMap(v *jval, chain string) (*orderedMap, error) {
	if v == nil || v.kind == jNull {
		return nil, nil
	}
	if v.kind != jObject {
		return nil, p.mismatch(v, typeStringMap, chain)
	}
	m := &orderedMap{vals: map[string]*string{}}
	for i, k := range v.keys {
		el := v.vals[i]
		c := chain
		if c != "" {
			c += "->"
		}
		c += fmt.Sprintf("java.util.LinkedHashMap[%q]", k)
		_ = i
		switch el.kind {
		case jObject, jArray:
			return nil, p.mismatch(el, "java.lang.String", c)
		case jNull:
			m.vals[k] = nil
		default:
			s := el.text
			m.vals[k] = &s
		}
		m.keys = append(m.keys, k)
	}
	return m, nil
}

func (m *orderedMap) plain() map[string]string {
	out := make(map[string]string, len(m.keys))
	for _, k := range m.keys {
		if v := m.vals[k]; v != nil {
			out[k] = *v
		}
	}
	return out
}

type createRequest struct {
	name         *string
	config       *orderedMap
	initialState string
}

func (p *jparser) bindCreate(v *jval) (*createRequest, error) {
	if v == nil || v.kind == jNull {
		return nil, nil
	}
	if v.kind != jObject {
		return nil, p.mismatch(v, classCreateRequest, "")
	}
	req := &createRequest{}
	seen := map[string]bool{}
	for i, k := range v.keys {
		seen[k] = true
		el := v.vals[i]
		chain := fmt.Sprintf("%s[%q]", classCreateRequest, k)
		switch k {
		case "name":
			switch el.kind {
			case jObject, jArray:
				return nil, p.mismatch(el, "java.lang.String", chain)
			case jNull:
				req.name = nil
			default:
				s := el.text
				req.name = &s
			}
		case "config":
			m, err := p.bindStringMap(el, chain)
			if err != nil {
				return nil, err
			}
			req.config = m
		case "initial_state":
			switch el.kind {
			case jObject, jArray:
				return nil, p.mismatch(el, classCreateRequest+"$InitialState", chain)
			case jNull:
				req.initialState = ""
			default:
				st := strings.ToUpper(el.text)
				if st != "RUNNING" && st != "PAUSED" && st != "STOPPED" {
					return nil, &jacksonError{msg: fmt.Sprintf("Cannot construct instance of `%s$InitialState`, problem: No enum constant %s.InitialState.%s\n at %s (through reference chain: %s)",
						classCreateRequest, classCreateRequest, st, p.tokenLoc(el), chain)}
				}
				req.initialState = st
			}
		default:
			at := v.end // creator properties still missing: Jackson reports once the object is read
			if seen["name"] && seen["config"] && seen["initial_state"] {
				at = el.end
			}
			return nil, &jacksonError{msg: fmt.Sprintf("Unrecognized field %q (class %s), not marked as ignorable (3 known properties: \"config\", \"name\", \"initial_state\"])\n at %s (through reference chain: %s)",
				k, classCreateRequest, p.loc(at), chain)}
		}
	}
	return req, nil
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

// bindOffsets reads ConnectorOffsets; offsets==nil means the field was absent or null.
func (p *jparser) bindOffsets(v *jval) (offsets []offsetEntry, present bool, err error) {
	if v == nil || v.kind == jNull {
		return nil, false, nil
	}
	if v.kind != jObject {
		return nil, true, p.mismatch(v, classOffsets, "")
	}
	for i, k := range v.keys {
		el := v.vals[i]
		chain := fmt.Sprintf("%s[%q]", classOffsets, k)
		if k != "offsets" {
			at := v.end
			if _, ok := v.get("offsets"); ok && indexOf(v.keys, "offsets") < i {
				at = el.end
			}
			return nil, true, &jacksonError{msg: fmt.Sprintf("Unrecognized field %q (class %s), not marked as ignorable (one known property: \"offsets\"])\n at %s (through reference chain: %s)",
				k, classOffsets, p.loc(at), chain)}
		}
		if el.kind == jNull {
			offsets = nil
			continue
		}
		if el.kind != jArray {
			return nil, true, p.mismatch(el, "java.util.ArrayList<"+classOffset+">", chain)
		}
		offsets = []offsetEntry{}
		for j, item := range el.elems {
			ichain := fmt.Sprintf("%s->java.util.ArrayList[%d]", chain, j)
			if item.kind == jNull {
				offsets = append(offsets, offsetEntry{})
				continue
			}
			if item.kind != jObject {
				return nil, true, p.mismatch(item, classOffset, ichain)
			}
			var e offsetEntry
			for n, ik := range item.keys {
				iv := item.vals[n]
				fchain := fmt.Sprintf("%s->%s[%q]", ichain, classOffset, ik)
				if ik != "partition" && ik != "offset" {
					at := item.end
					if a, b := indexOf(item.keys, "partition"), indexOf(item.keys, "offset"); a >= 0 && a < n && b >= 0 && b < n {
						at = iv.end
					}
					return nil, true, &jacksonError{msg: fmt.Sprintf("Unrecognized field %q (class %s), not marked as ignorable (2 known properties: \"partition\", \"offset\"])\n at %s (through reference chain: %s)",
						ik, classOffset, p.loc(at), fchain)}
				}
				if iv.kind == jNull {
					continue
				}
				if iv.kind != jObject {
					return nil, true, p.mismatch(iv, "java.util.LinkedHashMap<java.lang.String,java.lang.Object>", fchain)
				}
				m := map[string]any{}
				for q, mk := range iv.keys {
					m[mk] = iv.vals[q].native()
				}
				if ik == "partition" {
					e.Partition = m
				} else {
					e.Offset = m
				}
			}
			offsets = append(offsets, e)
		}
	}
	return offsets, true, nil
}

type offsetEntry struct {
	Partition map[string]any
	Offset    map[string]any
}

// native converts to Go values (numbers as json.Number-like strings converted to int64/float64).
func (v *jval) native() any {
	switch v.kind {
	case jObject:
		m := map[string]any{}
		for i, k := range v.keys {
			m[k] = v.vals[i].native()
		}
		return m
	case jArray:
		out := make([]any, len(v.elems))
		for i, e := range v.elems {
			out[i] = e.native()
		}
		return out
	case jString:
		return v.text
	case jNumber:
		if n, err := strconv.ParseInt(v.text, 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(v.text, 64)
		return f
	case jTrue:
		return true
	case jFalse:
		return false
	}
	return nil
}

// bindTaskConfigs reads List<Map<String,String>> (internal task-config POST).
func (p *jparser) bindTaskConfigs(v *jval) ([]map[string]string, error) {
	if v == nil {
		return nil, &jacksonError{msg: "No content to map due to end-of-input\n at " + redacted + "line: 1]"}
	}
	if v.kind == jNull {
		return nil, nil
	}
	if v.kind != jArray {
		return nil, p.mismatch(v, "java.util.ArrayList<java.util.Map<java.lang.String,java.lang.String>>", "")
	}
	out := make([]map[string]string, 0, len(v.elems))
	for i, el := range v.elems {
		m, err := p.bindStringMap(el, fmt.Sprintf("java.util.ArrayList[%d]", i))
		if err != nil {
			return nil, err
		}
		if m == nil {
			out = append(out, nil)
			continue
		}
		out = append(out, m.plain())
	}
	return out, nil
}
