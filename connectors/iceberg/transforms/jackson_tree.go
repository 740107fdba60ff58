package transforms

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

// Jackson tree node (ObjectMapper.readTree with default features).
type jKind int

const (
	jNull jKind = iota
	jBool
	jText
	jInt
	jLong
	jBigInt
	jDouble
	jArray
	jObject
)

type jNode struct {
	kind jKind
	text string // text, or the number literal
	b    bool
	i    int64
	big  *big.Int
	d    float64
	keys []string
	vals []*jNode // object values (parallel to keys) or array elements
}

func (n *jNode) get(k string) *jNode {
	for i, kk := range n.keys {
		if kk == k {
			return n.vals[i]
		}
	}
	return nil
}

func schemaFromNode(n *jNode) *connect.Schema {
	switch n.kind {
	case jNull:
		return nil
	case jArray:
		return arraySchema(n)
	case jObject:
		if len(n.vals) == 0 {
			return nil
		}
		return jsonMapSchema
	}
	return nodeSchema(n.kind)
}

func nodeSchema(k jKind) *connect.Schema {
	switch k {
	case jBool:
		return connect.OptionalBoolSchema
	case jText, jArray:
		return connect.OptionalStringSchema
	case jInt:
		return connect.OptionalInt32Schema
	case jLong:
		return connect.OptionalInt64Schema
	case jDouble:
		return connect.OptionalFloat64Schema
	case jObject:
		return jsonMapSchema
	case jBigInt:
		return jsonBigIntegerSchema
	}
	return nil
}

func arraySchema(n *jNode) *connect.Schema {
	if len(n.vals) == 0 {
		return nil
	}
	kind := n.vals[0].kind
	for _, e := range n.vals[1:] {
		if e.kind != kind {
			return arrayOptionalString // inconsistent element types
		}
	}
	switch kind {
	case jNull:
		return arrayOptionalString
	case jObject:
		return arrayMapOptionalStr
	case jArray:
		var set []*connect.Schema // a HashSet<Schema> (null included)
		for _, e := range n.vals {
			s := schemaFromNode(e)
			found := false
			for _, x := range set {
				if x.Equal(s) {
					found = true
					break
				}
			}
			if !found {
				set = append(set, s)
			}
		}
		if len(set) > 1 {
			return connect.ArrayBuilder(arrayOptionalString).Optional().MustBuild()
		}
		if set[0] == nil {
			return nil
		}
		return connect.ArrayBuilder(set[0]).Optional().MustBuild()
	}
	return connect.ArrayBuilder(nodeSchema(kind)).Optional().MustBuild()
}

func extractValue(n *jNode, t connect.Type) any {
	switch t {
	case connect.TypeString:
		return nodeToText(n)
	case connect.TypeBoolean:
		return n.b
	case connect.TypeInt32:
		return int32(n.i)
	case connect.TypeInt64:
		return n.i
	case connect.TypeFloat64:
		return n.d
	case connect.TypeMap:
		return populateMap(n)
	case connect.TypeBytes:
		return connect.Decimal{Unscaled: n.big, Scale: 0}
	}
	return nil
}

func populateArray(n *jNode, s *connect.Schema) []any {
	out := make([]any, 0, len(n.vals))
	for _, e := range n.vals {
		if s.Type == connect.TypeArray {
			out = append(out, populateArray(e, s.ValueSchema()))
		} else {
			out = append(out, extractValue(e, s.Type))
		}
	}
	return out
}

func populateMap(n *jNode) map[string]any {
	m := make(map[string]any, len(n.keys))
	if n.kind != jObject {
		return m
	}
	for i, k := range n.keys {
		m[k] = nodeToText(n.vals[i])
	}
	return m
}

func nodeToText(n *jNode) string {
	if n.kind == jText {
		return n.text
	}
	var sb strings.Builder
	writeJackson(&sb, n)
	return sb.String()
}

// writeJackson is JsonNode.toString(): compact JSON, Jackson's escaping, Java's Double.toString.
func writeJackson(sb *strings.Builder, n *jNode) {
	switch n.kind {
	case jNull:
		sb.WriteString("null")
	case jBool:
		sb.WriteString(strconv.FormatBool(n.b))
	case jText:
		writeJacksonString(sb, n.text)
	case jInt, jLong:
		sb.WriteString(strconv.FormatInt(n.i, 10))
	case jBigInt:
		sb.WriteString(n.big.String())
	case jDouble:
		if math.IsInf(n.d, 0) || math.IsNaN(n.d) {
			writeJacksonString(sb, connect.JavaDouble(n.d, 64))
		} else {
			sb.WriteString(connect.JavaDouble(n.d, 64))
		}
	case jArray:
		sb.WriteByte('[')
		for i, e := range n.vals {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeJackson(sb, e)
		}
		sb.WriteByte(']')
	case jObject:
		sb.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeJacksonString(sb, k)
			sb.WriteByte(':')
			writeJackson(sb, n.vals[i])
		}
		sb.WriteByte('}')
	}
}

func writeJacksonString(sb *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	sb.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c == '\b':
			sb.WriteString(`\b`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\f':
			sb.WriteString(`\f`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c < 0x20:
			sb.WriteString(`\u00`)
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&0xF])
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte('"')
}

// parseJackson reads the first JSON value of s (trailing content is ignored, as readTree does);
// nil, nil for blank input (MissingNode).
func parseJackson(s string) (*jNode, error) {
	p := &jParser{s: s}
	p.ws()
	if p.i >= len(s) {
		return nil, nil
	}
	return p.value(0)
}

type jParser struct {
	s string
	i int
}

var errJSON = fmt.Errorf("invalid json")

func (p *jParser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *jParser) lit(w string) bool {
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

func (p *jParser) value(depth int) (*jNode, error) {
	if depth > 1000 {
		return nil, errJSON
	}
	p.ws()
	if p.i >= len(p.s) {
		return nil, errJSON
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		n := &jNode{kind: jObject}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return n, nil
		}
		for {
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, errJSON
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, errJSON
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			replaced := false
			for j, kk := range n.keys { // LinkedHashMap.put: a duplicate keeps its position
				if kk == k {
					n.vals[j], replaced = v, true
				}
			}
			if !replaced {
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, v)
			}
			p.ws()
			if p.i >= len(p.s) {
				return nil, errJSON
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.s[p.i] == '}' {
				p.i++
				return n, nil
			}
			return nil, errJSON
		}
	case c == '[':
		p.i++
		n := &jNode{kind: jArray}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return n, nil
		}
		for {
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
			p.ws()
			if p.i >= len(p.s) {
				return nil, errJSON
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.s[p.i] == ']' {
				p.i++
				return n, nil
			}
			return nil, errJSON
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &jNode{kind: jText, text: s}, nil
	case p.lit("true"):
		return &jNode{kind: jBool, b: true}, nil
	case p.lit("false"):
		return &jNode{kind: jBool}, nil
	case p.lit("null"):
		return &jNode{kind: jNull}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, errJSON
}

func (p *jParser) number() (*jNode, error) {
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
	lit := p.s[start:p.i]
	if isFloat {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !isRangeErr(err) {
			return nil, errJSON
		}
		return &jNode{kind: jDouble, d: f, text: lit}, nil
	}
	if v, err := strconv.ParseInt(lit, 10, 64); err == nil {
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			return &jNode{kind: jInt, i: v, text: lit}, nil
		}
		return &jNode{kind: jLong, i: v, text: lit}, nil
	}
	b, _ := new(big.Int).SetString(lit, 10)
	return &jNode{kind: jBigInt, big: b, text: lit}, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (p *jParser) str() (string, error) {
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

func (p *jParser) hex4() (rune, bool) {
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
