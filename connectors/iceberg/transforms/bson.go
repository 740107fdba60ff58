package transforms

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

type bType int

const (
	bDouble bType = iota
	bString
	bDocument
	bArray
	bBinary
	bUndefined
	bObjectID
	bBoolean
	bDateTime
	bNull
	bRegex
	bJavaScript
	bSymbol
	bJavaScriptWithScope
	bInt32
	bTimestamp
	bInt64
	bDecimal128
	bMinKey
	bMaxKey
)

func (t bType) String() string {
	return [...]string{"DOUBLE", "STRING", "DOCUMENT", "ARRAY", "BINARY", "UNDEFINED", "OBJECT_ID", "BOOLEAN", "DATE_TIME", "NULL",
		"REGULAR_EXPRESSION", "JAVASCRIPT", "SYMBOL", "JAVASCRIPT_WITH_SCOPE", "INT32", "TIMESTAMP", "INT64", "DECIMAL128", "MIN_KEY", "MAX_KEY"}[t]
}

type bVal struct {
	t    bType
	s    string // string, code, oid hex, decimal128 text, regex pattern
	opts string
	i    int64 // int32/int64/datetime millis/timestamp seconds
	d    float64
	b    bool
	bin  []byte
	doc  *bDoc
	arr  []*bVal
}

type bDoc struct {
	keys []string
	vals []*bVal
	idx  map[string]int // position of each key once the document is wide, so parsing stays linear
}

const bDocIndexFrom = 16

func (d *bDoc) find(k string) (int, bool) {
	if d.idx == nil && len(d.keys) >= bDocIndexFrom { // also after clone and remove, which drop it
		d.idx = make(map[string]int, 2*len(d.keys))
		for i, kk := range d.keys {
			d.idx[kk] = i
		}
	}
	if d.idx != nil {
		i, ok := d.idx[k]
		return i, ok
	}
	for i, kk := range d.keys {
		if kk == k {
			return i, true
		}
	}
	return 0, false
}

func (d *bDoc) get(k string) *bVal {
	if i, ok := d.find(k); ok {
		return d.vals[i]
	}
	return nil
}

func (d *bDoc) put(k string, v *bVal) {
	if i, ok := d.find(k); ok {
		d.vals[i] = v
		return
	}
	if d.idx != nil {
		d.idx[k] = len(d.keys)
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
}

// remove drops the named keys in one pass: one key at a time is quadratic in wide documents.
func (d *bDoc) remove(names map[string]bool) {
	keys, vals := make([]string, 0, len(d.keys)), make([]*bVal, 0, len(d.vals))
	for i, k := range d.keys {
		if !names[k] {
			keys, vals = append(keys, k), append(vals, d.vals[i])
		}
	}
	d.keys, d.vals = keys, vals
	d.idx = nil // positions moved; rebuilt by the next find
}

func (d *bDoc) clone() *bDoc {
	return &bDoc{keys: append([]string(nil), d.keys...), vals: append([]*bVal(nil), d.vals...)}
}

func bsonParseErr(msg string) error { return &jvmError{"org.bson.json.JsonParseException", msg} }

func parseBSONDocument(s string) (*bDoc, error) {
	p := &bsonScanner{s: s}
	v, err := bsonValue(p, 0)
	if err != nil {
		return nil, err
	}
	if v.t != bDocument {
		return nil, &jvmError{"org.bson.BsonInvalidOperationException",
			"readStartDocument can only be called when CurrentBSONType is DOCUMENT, not when CurrentBSONType is " + v.t.String() + "."}
	}
	return v.doc, nil
}

func bsonValue(p *bsonScanner, depth int) (*bVal, error) {
	if depth > 500 {
		return nil, bsonParseErr("too deep")
	}
	p.ws()
	if p.i >= len(p.s) {
		return nil, bsonParseErr("JSON reader was expecting a value but found '<eof>'.")
	}
	c := p.s[p.i]
	switch {
	case c == '{':
		p.i++
		d := &bDoc{}
		for {
			p.ws()
			if p.i >= len(p.s) {
				return nil, bsonParseErr("JSON reader was expecting a name but found '<eof>'.")
			}
			if p.s[p.i] == '}' {
				p.i++
				break
			}
			var k string
			var err error
			if p.s[p.i] == '"' || p.s[p.i] == '\'' {
				k, err = p.str()
			} else {
				k, err = bsonIdent(p)
			}
			if err != nil {
				return nil, err
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, bsonParseErr("JSON reader was expecting ':' but found something else.")
			}
			p.i++
			v, err := bsonValue(p, depth+1)
			if err != nil {
				return nil, err
			}
			d.put(k, v)
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				p.ws()
				if p.i >= len(p.s) {
					return nil, bsonParseErr("JSON reader was expecting a name but found '<eof>'.")
				}
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				break
			}
			return nil, bsonParseErr("JSON reader was expecting '}' but found something else.")
		}
		return extendedJSON(d)
	case c == '[':
		p.i++
		v := &bVal{t: bArray}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return v, nil
		}
		for {
			el, err := bsonValue(p, depth+1)
			if err != nil {
				return nil, err
			}
			v.arr = append(v.arr, el)
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				return v, nil
			}
			return nil, bsonParseErr("JSON reader was expecting ']' but found something else.")
		}
	case c == '"' || c == '\'':
		s, err := p.str()
		if err != nil {
			return nil, bsonParseErr("Invalid JSON string")
		}
		return &bVal{t: bString, s: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := p.number()
		if err != nil {
			return nil, bsonParseErr("Invalid JSON number")
		}
		switch n.kind {
		case jInt:
			return &bVal{t: bInt32, i: n.i}, nil
		case jLong:
			return &bVal{t: bInt64, i: n.i}, nil
		case jDouble:
			return &bVal{t: bDouble, d: n.d}, nil
		}
		return nil, bsonParseErr("Invalid JSON number")
	}
	id, err := bsonIdent(p)
	if err != nil {
		return nil, err
	}
	switch id {
	case "true":
		return &bVal{t: bBoolean, b: true}, nil
	case "false":
		return &bVal{t: bBoolean}, nil
	case "null":
		return &bVal{t: bNull}, nil
	case "undefined":
		return &bVal{t: bUndefined}, nil
	case "NaN":
		return &bVal{t: bDouble, d: math.NaN()}, nil
	case "Infinity":
		return &bVal{t: bDouble, d: math.Inf(1)}, nil
	case "new":
		p.ws()
		if id, err = bsonIdent(p); err != nil {
			return nil, err
		}
	}
	// shell-mode constructors: ObjectId("..."), NumberLong(..), NumberInt(..), NumberDecimal(".."), ISODate(".."), Date(..)
	p.ws()
	if p.i >= len(p.s) || p.s[p.i] != '(' || !shellConstructors[id] {
		return nil, bsonParseErr("JSON reader was expecting a value but found '" + id + "'.")
	}
	p.i++
	var args []*bVal
	for {
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ')' {
			p.i++
			break
		}
		a, err := bsonValue(p, depth+1)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
		}
	}
	arg := func() *bVal {
		if len(args) > 0 {
			return args[0]
		}
		return &bVal{t: bNull}
	}()
	switch id {
	case "ObjectId":
		return &bVal{t: bObjectID, s: strings.ToLower(arg.s)}, nil
	case "NumberLong":
		return toInt(arg, bInt64)
	case "NumberInt":
		return toInt(arg, bInt32)
	case "NumberDecimal":
		return parseDecimal128(arg.s)
	case "ISODate", "Date":
		if arg.t == bString {
			return isoDate(arg.s)
		}
		return &bVal{t: bDateTime, i: arg.i}, nil
	}
	return nil, bsonParseErr("JSON reader was expecting a value but found '" + id + "'.")
}

var shellConstructors = map[string]bool{"ObjectId": true, "NumberLong": true, "NumberInt": true, "NumberDecimal": true, "ISODate": true, "Date": true}

func bsonIdent(p *bsonScanner) (string, error) {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '$' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			p.i++
			continue
		}
		break
	}
	if p.i == start {
		if p.i >= len(p.s) {
			return "", bsonParseErr("JSON reader was expecting a value but found '<eof>'.")
		}
		return "", bsonParseErr(fmt.Sprintf("Invalid JSON input. Position: %d. Character: '%c'.", p.i, p.s[p.i]))
	}
	return p.s[start:p.i], nil
}

func toInt(v *bVal, t bType) (*bVal, error) {
	switch v.t {
	case bString:
		n, err := strconv.ParseInt(v.s, 10, 64)
		if err != nil {
			return nil, bsonParseErr("Invalid number " + v.s)
		}
		return &bVal{t: t, i: n}, nil
	case bInt32, bInt64:
		return &bVal{t: t, i: v.i}, nil
	}
	return nil, bsonParseErr("Invalid number")
}

func isoDate(s string) (*bVal, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return &bVal{t: bDateTime, i: t.UnixMilli()}, nil
		}
	}
	return nil, bsonParseErr("Invalid $date value: " + s)
}

// parseDecimal128 parses like Decimal128.parse and renders like Decimal128.toString.
func parseDecimal128(s string) (*bVal, error) {
	switch strings.ToLower(s) {
	case "nan", "-nan":
		return &bVal{t: bDecimal128, s: "NaN"}, nil
	case "inf", "infinity", "+inf", "+infinity":
		return &bVal{t: bDecimal128, s: "Infinity"}, nil
	case "-inf", "-infinity":
		return &bVal{t: bDecimal128, s: "-Infinity"}, nil
	}
	d, err := connect.ParseDecimal(s)
	if err != nil {
		return nil, bsonParseErr("Invalid $numberDecimal " + s)
	}
	out := connect.JavaBigDecimalString(d)
	if d.Unscaled.Sign() == 0 && strings.HasPrefix(strings.TrimSpace(s), "-") {
		out = "-" + out
	}
	return &bVal{t: bDecimal128, s: out}, nil
}

// extendedJSON turns {"$oid": ..}-style documents into their BSON values (canonical and relaxed modes).
func extendedJSON(d *bDoc) (*bVal, error) {
	doc := &bVal{t: bDocument, doc: d}
	if len(d.keys) == 0 || !strings.HasPrefix(d.keys[0], "$") {
		return doc, nil
	}
	v0 := d.vals[0]
	str := func(v *bVal) string {
		if v == nil {
			return ""
		}
		return v.s
	}
	switch {
	case len(d.keys) == 1 && d.keys[0] == "$oid" && v0.t == bString:
		if _, err := hex.DecodeString(v0.s); err != nil || len(v0.s) != 24 {
			return nil, bsonParseErr("Invalid $oid " + v0.s)
		}
		return &bVal{t: bObjectID, s: strings.ToLower(v0.s)}, nil
	case len(d.keys) == 1 && d.keys[0] == "$numberLong":
		return toInt(v0, bInt64)
	case len(d.keys) == 1 && d.keys[0] == "$numberInt":
		return toInt(v0, bInt32)
	case len(d.keys) == 1 && d.keys[0] == "$numberDouble" && v0.t == bString:
		switch v0.s {
		case "NaN":
			return &bVal{t: bDouble, d: math.NaN()}, nil
		case "Infinity":
			return &bVal{t: bDouble, d: math.Inf(1)}, nil
		case "-Infinity":
			return &bVal{t: bDouble, d: math.Inf(-1)}, nil
		}
		f, err := strconv.ParseFloat(v0.s, 64)
		if err != nil {
			return nil, bsonParseErr("Invalid $numberDouble " + v0.s)
		}
		return &bVal{t: bDouble, d: f}, nil
	case len(d.keys) == 1 && d.keys[0] == "$numberDecimal" && v0.t == bString:
		return parseDecimal128(v0.s)
	case len(d.keys) == 1 && d.keys[0] == "$date":
		switch v0.t {
		case bString:
			return isoDate(v0.s)
		case bInt32, bInt64:
			return &bVal{t: bDateTime, i: v0.i}, nil
		}
	case len(d.keys) == 1 && d.keys[0] == "$binary" && v0.t == bDocument:
		b, err := base64.StdEncoding.DecodeString(str(v0.doc.get("base64")))
		if err != nil {
			return nil, bsonParseErr("Invalid $binary")
		}
		return &bVal{t: bBinary, bin: b}, nil
	case len(d.keys) == 2 && d.keys[0] == "$binary" && d.keys[1] == "$type":
		b, err := base64.StdEncoding.DecodeString(v0.s)
		if err != nil {
			return nil, bsonParseErr("Invalid $binary")
		}
		return &bVal{t: bBinary, bin: b}, nil
	case len(d.keys) == 1 && d.keys[0] == "$regularExpression" && v0.t == bDocument:
		return &bVal{t: bRegex, s: str(v0.doc.get("pattern")), opts: str(v0.doc.get("options"))}, nil
	case len(d.keys) == 2 && d.keys[0] == "$regex" && d.keys[1] == "$options":
		return &bVal{t: bRegex, s: v0.s, opts: d.vals[1].s}, nil
	case len(d.keys) == 1 && d.keys[0] == "$timestamp" && v0.t == bDocument:
		t := v0.doc.get("t")
		if t == nil {
			return nil, bsonParseErr("Invalid $timestamp")
		}
		return &bVal{t: bTimestamp, i: t.i}, nil
	case len(d.keys) == 1 && d.keys[0] == "$code":
		return &bVal{t: bJavaScript, s: v0.s}, nil
	case len(d.keys) == 2 && d.keys[0] == "$code" && d.keys[1] == "$scope":
		if d.vals[1].t != bDocument {
			return nil, bsonParseErr("Invalid $scope")
		}
		return &bVal{t: bJavaScriptWithScope, s: v0.s, doc: d.vals[1].doc}, nil
	case len(d.keys) == 1 && d.keys[0] == "$symbol":
		return &bVal{t: bSymbol, s: v0.s}, nil
	case len(d.keys) == 1 && d.keys[0] == "$undefined":
		return &bVal{t: bUndefined}, nil
	case len(d.keys) == 1 && d.keys[0] == "$minKey":
		return &bVal{t: bMinKey}, nil
	case len(d.keys) == 1 && d.keys[0] == "$maxKey":
		return &bVal{t: bMaxKey}, nil
	case d.keys[0] == "$dbPointer":
		return &bVal{t: bUndefined}, nil
	}
	return doc, nil
}
