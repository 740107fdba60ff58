package header

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

// This file is a port of Kafka's org.apache.kafka.connect.data.Values.parseString (connect-api 4.1.x; 4.3.x is
// identical): its tokenizer (Values.Parser), its recursive ValueParser, the SchemaMerger that infers a common
// element schema and the convertTo alignment of array and map entries. Quirks are kept on purpose (see the JVM
// golden cases in testdata/converters/header/fixtures.json).

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
	if javaTrim(p.tok) == expected {
		p.hasTok = false
		return true
	}
	return false
}

// javaTrim is String.trim: it strips every char <= U+0020 at both ends.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

func isBlank(s string) bool { return len(javaTrim(s)) == 0 }

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
	return p.parseNextToken(embedded, javaTrim(tok))
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

// schemaMerger is Values.SchemaMerger: common stays nil while only nulls were seen or once no common schema
// exists.
type schemaMerger struct {
	common       *connect.Schema
	incompatible bool
}

func (m *schemaMerger) merge(latest sv) {
	if latest.null || latest.schema == nil || m.incompatible {
		return
	}
	if m.common == nil {
		m.common = latest.schema
		return
	}
	m.common = mergeSchemas(m.common, latest.schema)
	m.incompatible = m.common == nil
}

func numericRank(t connect.Type) int {
	switch t {
	case connect.TypeInt8:
		return 1
	case connect.TypeInt16:
		return 2
	case connect.TypeInt32:
		return 3
	case connect.TypeInt64:
		return 4
	case connect.TypeFloat32:
		return 5
	case connect.TypeFloat64:
		return 6
	}
	return 0
}

// mergeSchemas is Values.mergeSchemas: numeric types widen (logical INT32/INT64 schemas included, as the JVM
// compares types only), same types keep the newer schema, anything else has no common schema.
func mergeSchemas(prev, next *connect.Schema) *connect.Schema {
	if prev.Type != next.Type {
		a, b := numericRank(prev.Type), numericRank(next.Type)
		if a == 0 || b == 0 {
			return nil
		}
		if b > a {
			return next
		}
		return prev
	}
	if prev.Optional == next.Optional {
		if prev.Optional {
			return prev
		}
		return next
	}
	if !prev.Equal(next) {
		return nil
	}
	return prev
}

func alignList(elem *connect.Schema, in []any) ([]any, error) {
	for i, v := range in {
		c, err := convertTo(elem, v)
		if err != nil {
			return nil, err
		}
		in[i] = c
	}
	return in, nil
}

const msPerDay = 86400000

// convertTo is Values.convertTo(toSchema, null, value) for the values the parser produces.
func convertTo(to *connect.Schema, v any) (any, error) {
	if v == nil {
		if to.Optional {
			return nil, nil
		}
		return nil, errParse
	}
	switch to.Type {
	case connect.TypeBytes:
		if d, ok := v.(connect.Decimal); ok && to.Name == connect.DecimalName {
			return d, nil
		}
		if b, ok := v.([]byte); ok && to.Name != connect.DecimalName {
			return b, nil
		}
		return nil, errParse
	case connect.TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, errParse
	case connect.TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, errParse
	case connect.TypeInt8:
		n, err := asLong(v)
		return int8(n), err
	case connect.TypeInt16:
		n, err := asLong(v)
		return int16(n), err
	case connect.TypeInt32:
		switch to.Name {
		case connect.DateName:
			if t, ok := v.(time.Time); ok {
				return t, nil
			}
			n, err := asLong(v)
			if err != nil {
				return nil, err
			}
			return time.UnixMilli(int64(int32(n)) * msPerDay).UTC(), nil
		case connect.TimeName:
			if t, ok := v.(time.Time); ok {
				return t, nil
			}
			n, err := asLong(v)
			if err != nil {
				return nil, err
			}
			ms := int32(n)
			if ms < 0 || ms > msPerDay {
				return nil, errParse
			}
			return time.UnixMilli(int64(ms)).UTC(), nil
		}
		n, err := asLong(v)
		return int32(n), err
	case connect.TypeInt64:
		if to.Name == connect.TimestampName {
			if t, ok := v.(time.Time); ok {
				return t, nil
			}
			n, err := asLong(v)
			if err != nil {
				return nil, err
			}
			return time.UnixMilli(n).UTC(), nil
		}
		return asLong(v)
	case connect.TypeFloat32:
		if f, ok := v.(float32); ok {
			return f, nil
		}
		d, err := asDouble(v)
		return float32(d), err
	case connect.TypeFloat64:
		return asDouble(v)
	case connect.TypeArray:
		if l, ok := v.([]any); ok {
			return l, nil
		}
		return nil, errParse
	case connect.TypeMap:
		if m, ok := v.(map[any]any); ok {
			return m, nil
		}
		return nil, errParse
	}
	return nil, errParse
}

func asLong(v any) (int64, error) {
	switch n := v.(type) {
	case int8:
		return int64(n), nil
	case int16:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case int64:
		return n, nil
	case float32:
		return javaD2L(float64(n)), nil
	case float64:
		return javaD2L(n), nil
	}
	// a Decimal never meets an integer or float common schema (BYTES merges with nothing else)
	return 0, errParse
}

// javaD2L is Java's (long) cast of a double.
var javaD2L = connect.JavaDoubleToLong

func asDouble(v any) (float64, error) {
	switch n := v.(type) {
	case int8:
		return float64(n), nil
	case int16:
		return float64(n), nil
	case int32:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case float32:
		return float64(n), nil
	case float64:
		return n, nil
	}
	return 0, errParse
}

// ---- numbers: new BigDecimal(token) and ValueParser.parseAsNumber ----

// parseAsNumber parses as java.math.BigDecimal does and picks INT8..INT64 for exact whole numbers up to 1e19,
// FLOAT32 when the float is finite and the scale is not 0, then FLOAT64, else a Decimal.
func parseAsNumber(tok string) (sv, bool) {
	// syntax: [+-] digits [. digits] [eE [+-] digits]; Unicode decimal digits count as digits
	i := 0
	neg := false
	if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
		neg = tok[i] == '-'
		i++
	}
	ascii := true
	intStart := i
	nInt, nFrac := 0, 0
	dot := -1
	for i < len(tok) {
		c := tok[i]
		if c >= '0' && c <= '9' {
			if dot < 0 {
				nInt++
			} else {
				nFrac++
			}
			i++
			continue
		}
		if c == '.' {
			if dot >= 0 {
				return sv{}, false
			}
			dot = i
			i++
			continue
		}
		if c == 'e' || c == 'E' {
			break
		}
		r, w := utf8.DecodeRuneInString(tok[i:])
		if javaDigit(r) < 0 {
			return sv{}, false
		}
		ascii = false
		if dot < 0 {
			nInt++
		} else {
			nFrac++
		}
		i += w
	}
	mantEnd := i
	if nInt+nFrac == 0 {
		return sv{}, false
	}
	var exp int64
	if i < len(tok) {
		// exponent
		i++
		eneg := false
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			eneg = tok[i] == '-'
			i++
		}
		if i >= len(tok) {
			return sv{}, false
		}
		// at most 10 digits after leading zeros (BigDecimal.parseExp)
		sig := 0
		for i < len(tok) {
			r, w := utf8.DecodeRuneInString(tok[i:])
			d := javaDigit(r)
			if d < 0 {
				return sv{}, false
			}
			if r >= 0x80 {
				ascii = false
			}
			if sig > 0 || d != 0 {
				sig++
				if sig > 10 {
					return sv{}, false
				}
				exp = exp*10 + int64(d)
			}
			i += w
		}
		if eneg {
			exp = -exp
		}
		if exp != int64(int32(exp)) {
			return sv{}, false
		}
	}
	scale := int64(nFrac) - exp
	if scale != int64(int32(scale)) {
		return sv{}, false
	}

	// significant digits (ASCII), leading zeros dropped
	var dbuf [40]byte
	digits := dbuf[:0]
	for j := intStart; j < mantEnd; {
		r, w := utf8.DecodeRuneInString(tok[j:])
		j += w
		if r == '.' {
			continue
		}
		d := javaDigit(r)
		if len(digits) == 0 && d == 0 {
			continue
		}
		digits = append(digits, byte('0'+d))
	}
	nd := len(digits)
	if nd == 0 {
		return sv{schema: connect.Int8Schema, value: int8(0)}, true // BigDecimal zero (any scale) is whole
	}
	tz := 0
	for tz < nd && digits[nd-1-tz] == '0' {
		tz++
	}
	adjusted := int64(nd-1) - scale // floor(log10(|v|))
	// parseAsExactDecimal
	exact := true
	if adjusted > 19 || (adjusted == 19 && !(digits[0] == '1' && tz == nd-1)) || adjusted < 0 {
		exact = false
	}
	if exact && scale-int64(tz) <= 0 {
		// whole number with at most 20 digits
		var u uint64
		overflow := false
		n := int(adjusted) + 1
		for j := 0; j < n; j++ {
			d := uint64(0)
			if j < nd {
				d = uint64(digits[j] - '0')
			}
			if u > (math.MaxUint64-d)/10 {
				overflow = true
				break
			}
			u = u*10 + d
		}
		if !overflow && (u <= math.MaxInt64 || (neg && u == 1<<63)) {
			var v int64
			if neg {
				v = int64(-u)
			} else {
				v = int64(u)
			}
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return sv{schema: connect.Int8Schema, value: int8(v)}, true
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return sv{schema: connect.Int16Schema, value: int16(v)}, true
			case v >= math.MinInt32 && v <= math.MaxInt32:
				return sv{schema: connect.Int32Schema, value: int32(v)}, true
			}
			return sv{schema: connect.Int64Schema, value: v}, true
		}
	}
	if scale != 0 {
		num := tok
		if !ascii {
			num = asciiNumber(tok, neg, digits, scale)
		}
		if f, err := strconv.ParseFloat(num, 32); !math.IsInf(f, 0) && (err == nil || !errors.Is(err, strconv.ErrRange) || f == 0) {
			return sv{schema: connect.Float32Schema, value: float32(f)}, true
		}
		if f, err := strconv.ParseFloat(num, 64); !math.IsInf(f, 0) && (err == nil || !errors.Is(err, strconv.ErrRange) || f == 0) {
			return sv{schema: connect.Float64Schema, value: f}, true
		}
	}
	u, _ := new(big.Int).SetString(string(digits), 10)
	if neg {
		u.Neg(u)
	}
	return sv{schema: connect.DecimalSchema(int32(scale)), value: connect.Decimal{Unscaled: u, Scale: int32(scale)}}, true
}

func asciiNumber(_ string, neg bool, digits []byte, scale int64) string {
	b := make([]byte, 0, len(digits)+24)
	if neg {
		b = append(b, '-')
	}
	b = append(b, digits...)
	b = append(b, 'e')
	b = strconv.AppendInt(b, -scale, 10)
	return string(b)
}
