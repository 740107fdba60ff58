package header

import (
	"errors"
	"unicode"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/values"
)

// This file, schema_merge.go and numbers.go port Kafka's org.apache.kafka.connect.data.Values.parseString
// (connect-api 4.1.x; 4.3.x is identical): its tokenizer (Values.Parser), its recursive ValueParser, the
// SchemaMerger that infers a common element schema and the convertTo alignment of array and map entries. Quirks
// are kept on purpose (see the JVM golden cases in testdata/converters/header/fixtures.json).

var (
	// errParse is the JVM's DataException / NumberFormatException inside the parser: it is always caught, and the
	// input falls back to a STRING (or the enclosing embedded value fails).
	errParse = errors.New("header: not a value")
	// errTooDeep stands for the JVM's StackOverflowError on deeply nested input, which SimpleHeaderConverter
	// catches (as any Throwable) and answers with the raw bytes as BYTES.
	errTooDeep = errors.New("header: value nested too deeply")
)

// maxDepth bounds array/map nesting. The JVM has no explicit limit: a default 1 MiB thread stack overflows at
// roughly 1,300-1,400 nested arrays, and SimpleHeaderConverter then keeps the bytes as BYTES; we do the same
// from a fixed depth so that hostile input cannot grow the goroutine stack.
const maxDepth = 1000

var (
	arrayOfNullSchema = connect.ArrayBuilder(nil).MustBuild()
	mapOfNullSchema   = connect.MapBuilder(nil, nil).MustBuild()
)

// sv is a parse result; null reports the JVM's null (the literal null, or nothing left to parse).
type sv struct {
	schema *connect.Schema
	value  any
	null   bool
}

var nullSV = sv{null: true}

// tokenizer is Values.Parser over the (valid UTF-8) header string. Delimiters are ASCII, so byte offsets work
// like the JVM's char offsets.
type tokenizer struct {
	s      string
	pos    int
	tok    string // Parser.nextToken when hasTok
	hasTok bool
	depth  int
	// the last token scanned, by start offset: the parser rewinds and rescans the same token several times
	cacheStart, cacheEnd int
}

func (p *tokenizer) mark() int {
	if p.hasTok {
		return p.pos - len(p.tok)
	}
	return p.pos
}

func (p *tokenizer) rewindTo(pos int) {
	p.pos = pos
	p.hasTok = false
}

func (p *tokenizer) hasNext() bool { return p.hasTok || p.pos < len(p.s) }

func (p *tokenizer) next() string {
	if p.hasTok {
		p.hasTok = false
		return p.tok
	}
	return p.consumeNextToken()
}

// nextN is Parser.next(int): the text of the next n tokens, or ok=false (rewound) when there are fewer.
func (p *tokenizer) nextN(n int) (string, bool) {
	start := p.mark()
	for i := 0; i != n; i++ {
		if !p.hasNext() {
			p.rewindTo(start)
			return "", false
		}
		p.next()
	}
	return p.s[start:p.pos], true
}

func (p *tokenizer) consumeNextToken() string {
	if p.pos == p.cacheStart && p.cacheEnd > p.pos {
		p.pos = p.cacheEnd
		return p.s[p.cacheStart:p.cacheEnd]
	}
	start := p.pos
	t := p.scanToken()
	p.cacheStart, p.cacheEnd = start, p.pos
	return t
}

func (p *tokenizer) scanToken() string {
	escaped := false
	start := p.pos
	for p.pos < len(p.s) {
		switch c := p.s[p.pos]; c {
		case '\\':
			escaped = !escaped
		case ':', ',', '{', '}', '[', ']', '"':
			if !escaped {
				if start < p.pos {
					return p.s[start:p.pos]
				}
				p.pos++
				return p.s[start : start+1]
			}
			escaped = false
		default:
			escaped = false
		}
		p.pos++
	}
	return p.s[start:p.pos]
}

// canConsume is Parser.canConsume(expected) with whitespace ignored: blank tokens are skipped (and lost).
func (p *tokenizer) canConsume(expected string) bool {
	if !p.hasTok {
		if !p.hasNext() {
			return false
		}
		p.tok = p.consumeNextToken()
		p.hasTok = true
	}
	for isBlank(p.tok) && p.pos < len(p.s) {
		p.tok = p.consumeNextToken()
	}
	if values.JavaTrim(p.tok) == expected {
		p.hasTok = false
		return true
	}
	return false
}

func isBlank(s string) bool { return len(values.JavaTrim(s)) == 0 }

func (p *tokenizer) canParseSingleTokenLiteral(embedded bool, lit string) bool {
	start := p.mark()
	if p.canConsume(lit) && (embedded || !p.hasNext()) {
		return true
	}
	p.rewindTo(start)
	return false
}

var (
	trueSV  = sv{schema: connect.BoolSchema, value: true}
	falseSV = sv{schema: connect.BoolSchema, value: false}
)

func (p *tokenizer) parse(embedded bool) (sv, error) {
	if !p.hasNext() {
		return nullSV, nil
	}
	if embedded && p.canConsume(`"`) {
		return p.parseQuotedString(), nil
	}
	if p.canParseSingleTokenLiteral(embedded, "null") {
		return nullSV, nil
	}
	if p.canParseSingleTokenLiteral(embedded, "true") {
		return trueSV, nil
	}
	if p.canParseSingleTokenLiteral(embedded, "false") {
		return falseSV, nil
	}
	start := p.mark()
	var (
		r   sv
		err error
		try bool
	)
	if p.canConsume("[") {
		r, err, try = p.parseArray()
	} else if p.canConsume("{") {
		r, err, try = p.parseMap()
	}
	if try {
		if err == nil {
			return r, nil
		}
		if err == errTooDeep {
			return sv{}, err
		}
		p.rewindTo(start)
	}
	tok := p.next()
	if isBlank(tok) {
		return sv{schema: connect.StringSchema, value: tok}, nil
	}
	return p.parseNextToken(embedded, values.JavaTrim(tok))
}

func (p *tokenizer) parseNextToken(embedded bool, token string) (sv, error) {
	first, _ := utf8.DecodeRuneInString(token)
	digit := isJavaDigit(first)
	if digit {
		if t, ok := p.parseMultipleTokensAsTemporal(token); ok {
			return t, nil
		}
	}
	if digit || first == '+' || first == '-' {
		if n, ok := parseAsNumber(token); ok {
			return n, nil
		}
	}
	if embedded {
		return sv{}, errParse
	}
	return sv{schema: connect.StringSchema, value: p.s}, nil
}

// isJavaDigit is Character.isDigit on one UTF-16 char (supplementary characters are surrogates there).
func isJavaDigit(r rune) bool {
	if r < 0x80 {
		return r >= '0' && r <= '9'
	}
	return r <= 0xFFFF && unicode.IsDigit(r)
}

// javaDigit is Character.digit(c, 10): the value of a Unicode decimal digit, or -1.
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || r > 0xFFFF || !unicode.IsDigit(r) {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10
		}
	}
	return -1
}

func (p *tokenizer) parseQuotedString() sv {
	start, end := -1, -1
	var buf []byte // only when the content is split by skipped blank tokens
	for p.hasNext() {
		if p.canConsume(`"`) {
			break
		}
		from := p.mark()
		t := p.next()
		if buf != nil {
			buf = append(buf, t...)
			continue
		}
		if start < 0 {
			start, end = from, from+len(t)
		} else if from == end {
			end += len(t)
		} else {
			buf = append(append([]byte(nil), p.s[start:end]...), t...)
		}
	}
	var content string
	switch {
	case buf != nil:
		content = string(buf)
	case start >= 0:
		content = p.s[start:end]
	}
	if t, ok := parseAsTemporal(content, ""); ok {
		return t
	}
	return sv{schema: connect.StringSchema, value: content}
}

func (p *tokenizer) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return errTooDeep
	}
	return nil
}

// parseArray returns try=true always (the caller consumed '['); err is errParse when the JVM throws.
func (p *tokenizer) parseArray() (sv, error, bool) {
	if err := p.enter(); err != nil {
		return sv{}, err, true
	}
	defer func() { p.depth-- }()
	var result []any
	var merger schemaMerger
	for p.hasNext() {
		if p.canConsume("]") {
			if merger.common != nil {
				schema := connect.ArrayBuilder(merger.common).MustBuild()
				aligned, err := alignList(merger.common, result)
				if err != nil {
					return sv{}, err, true
				}
				if aligned == nil {
					aligned = []any{}
				}
				return sv{schema: schema, value: aligned}, nil, true
			}
			if result == nil {
				result = []any{}
			}
			return sv{schema: arrayOfNullSchema, value: result}, nil, true
		}
		if p.canConsume(",") {
			return sv{}, errParse, true
		}
		elem, err := p.parse(true)
		if err != nil {
			return sv{}, err, true
		}
		merger.merge(elem)
		if elem.null {
			result = append(result, nil)
		} else {
			result = append(result, elem.value)
		}
		cur := p.mark()
		if p.canConsume("]") {
			p.rewindTo(cur)
		} else if !p.canConsume(",") {
			return sv{}, errParse, true
		}
	}
	return sv{}, errParse, true
}

// mapEntry keeps the JVM's LinkedHashMap insertion order until the map is built.
type mapEntry struct{ k, v any }

func (p *tokenizer) parseMap() (sv, error, bool) {
	if err := p.enter(); err != nil {
		return sv{}, err, true
	}
	defer func() { p.depth-- }()
	var entries []mapEntry
	var keys, vals schemaMerger
	for p.hasNext() {
		if p.canConsume("}") {
			var schema *connect.Schema
			switch {
			case keys.common != nil && vals.common != nil:
				schema = connect.MapBuilder(keys.common, vals.common).MustBuild()
				for i := range entries {
					k, err := convertTo(keys.common, entries[i].k)
					if err != nil {
						return sv{}, err, true
					}
					v, err := convertTo(vals.common, entries[i].v)
					if err != nil {
						return sv{}, err, true
					}
					entries[i] = mapEntry{k, v}
				}
			case keys.common != nil:
				schema = connect.MapBuilder(keys.common, nil).MustBuild()
				for i := range entries {
					k, err := convertTo(keys.common, entries[i].k)
					if err != nil {
						return sv{}, err, true
					}
					entries[i].k = k
				}
			default:
				schema = mapOfNullSchema
			}
			m := make(map[any]any, len(entries))
			for _, e := range entries {
				if !hashable(e.k) {
					// A list or map as a key: Go maps cannot hold it (the JVM can). Not a value for us.
					return sv{}, errParse, true
				}
				m[e.k] = e.v
			}
			return sv{schema: schema, value: m}, nil, true
		}
		if p.canConsume(",") {
			return sv{}, errParse, true
		}
		key, err := p.parse(true)
		if err != nil {
			return sv{}, err, true
		}
		if key.null || key.value == nil {
			return sv{}, errParse, true
		}
		if !p.canConsume(":") {
			return sv{}, errParse, true
		}
		val, err := p.parse(true)
		if err != nil {
			return sv{}, err, true
		}
		var v any
		if !val.null {
			v = val.value
		}
		entries = putEntry(entries, key.value, v)
		p.canConsume(",")
		keys.merge(key)
		vals.merge(val)
	}
	return sv{}, errParse, true
}

// putEntry is LinkedHashMap.put: an equal key keeps its place and takes the new value.
func putEntry(entries []mapEntry, k, v any) []mapEntry {
	if hashable(k) {
		for i := range entries {
			if hashable(entries[i].k) && keyEqual(entries[i].k, k) {
				entries[i].v = v
				return entries
			}
		}
	}
	return append(entries, mapEntry{k, v})
}

func hashable(k any) bool {
	switch k.(type) {
	case []any, map[any]any:
		return false
	}
	return true
}

func keyEqual(a, b any) bool {
	if da, ok := a.(connect.Decimal); ok {
		db, ok := b.(connect.Decimal)
		return ok && da.Scale == db.Scale && da.Unscaled.Cmp(db.Unscaled) == 0
	}
	return a == b
}

func (p *tokenizer) parseMultipleTokensAsTemporal(token string) (sv, bool) {
	pos := p.mark()
	if rem, ok := p.nextN(4); ok {
		if t, ok := parseAsTemporal(token, rem); ok {
			return t, true
		}
	}
	p.rewindTo(pos)
	return parseAsTemporal(token, "")
}
