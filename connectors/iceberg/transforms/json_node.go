package transforms

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jvm"
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

// parseJackson reads the first JSON value of s as readTree does (trailing content is ignored); nil, nil for
// blank input (MissingNode).
func parseJackson(s string) (*jNode, error) {
	v, err := jvm.ParseJSON([]byte(s))
	if err != nil || v == nil {
		return nil, err
	}
	return nodeOf(v), nil
}

// nodeOf is the JsonNode Jackson builds for a parsed value.
func nodeOf(v *jvm.Value) *jNode {
	switch v.Kind {
	case jvm.Object:
		n := &jNode{kind: jObject, keys: v.Keys, vals: make([]*jNode, len(v.Vals))}
		for i, e := range v.Vals {
			n.vals[i] = nodeOf(e)
		}
		return n
	case jvm.Array:
		n := &jNode{kind: jArray, vals: make([]*jNode, len(v.Elems))}
		for i, e := range v.Elems {
			n.vals[i] = nodeOf(e)
		}
		return n
	case jvm.String:
		return &jNode{kind: jText, text: v.Text}
	case jvm.Number:
		return numberNode(v.Text, strings.ContainsAny(v.Text, ".eE"))
	case jvm.True:
		return &jNode{kind: jBool, b: true}
	case jvm.False:
		return &jNode{kind: jBool}
	}
	return &jNode{kind: jNull}
}

// numberNode is the node of a valid number literal: IntNode, LongNode or BigIntegerNode for integers by
// size, DoubleNode (infinite when out of range) for the rest.
func numberNode(lit string, isFloat bool) *jNode {
	if isFloat {
		f, _ := strconv.ParseFloat(lit, 64)
		return &jNode{kind: jDouble, d: f, text: lit}
	}
	if v, err := strconv.ParseInt(lit, 10, 64); err == nil {
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			return &jNode{kind: jInt, i: v, text: lit}
		}
		return &jNode{kind: jLong, i: v, text: lit}
	}
	b, _ := new(big.Int).SetString(lit, 10)
	return &jNode{kind: jBigInt, big: b, text: lit}
}
