package icerow

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect/jsonvalue"
)

// jsonKind is the type of a JSON member as the schemaless converter types it (inferType).
type jsonKind uint8

const (
	kindAbsent jsonKind = iota // missing or null: not part of the record's shape
	kindLong                   // an integral number
	kindDouble                 // a number with a fraction or an exponent
	kindString
	kindBool
)

// MemberScan checks a JSON object against a record shape (the inferred struct type of a schemaless
// value): its non-null members are exactly these names with these kinds. It notes where each member's
// value starts.
type MemberScan struct {
	names  map[string]int // member name → index
	member []string       // index → member name
	kinds  []jsonKind
	// per place in the object, the member last found there (-1: none): records of one producer
	// repeat the order of their members, so a name is checked against it before the map
	order []int
	plain []bool // per member: its name has no quote or backslash (the bytes of its token are the name)
	// per member whose plain name is of 1 to 8 bytes: the name as a little-endian word, and the
	// mask of its bytes (0: compared as a string)
	word, mask []uint64
	// scratch for one record, per member
	Pos  []int // where its value starts (-1: null)
	End  []int // where its value ends
	seen []bool
}

// orderedName is the member whose name is the string token at i when it is the member last found
// n-th in an object, and the token's end (-1: not that name, which lookup then looks up).
func (ms *MemberScan) orderedName(b []byte, i, n int) (int, int) {
	if n >= len(ms.order) {
		return 0, -1
	}
	m := ms.order[n]
	if m < 0 || !ms.plain[m] {
		return 0, -1
	}
	name := ms.member[m]
	e := i + 1 + len(name)
	if mask := ms.mask[m]; mask != 0 && i+9 <= len(b) {
		// one compare of a word rather than a call per name
		if binary.LittleEndian.Uint64(b[i+1:])&mask != ms.word[m] || e >= len(b) || b[e] != '"' {
			return 0, -1
		}
		return m, e + 1
	}
	if e >= len(b) || b[e] != '"' || string(b[i+1:e]) != name {
		return 0, -1
	}
	return m, e + 1
}

// lookup is the member named by key, the n-th of the object.
func (ms *MemberScan) lookup(key []byte, n int) (int, bool) {
	if n < len(ms.order) {
		if m := ms.order[n]; m >= 0 && ms.member[m] == string(key) {
			return m, true
		}
	}
	m, ok := ms.names[string(key)]
	if ok && n < len(ms.order) {
		ms.order[n] = m
	}
	return m, ok
}

// NewMemberScan compiles st's members, or nil when one is of a type the bytes are not read from
// (nested values, timestamps, narrower numbers, ...) or is named op (the record could be a Debezium
// envelope, DebeziumEnvelope: that is Record.Change's to say).
func NewMemberScan(st *ice.StructType) *MemberScan {
	n := len(st.FieldList)
	ms := &MemberScan{names: map[string]int{}, Pos: make([]int, n), End: make([]int, n), seen: make([]bool, n)}
	for _, f := range st.FieldList {
		if f.Name == "op" {
			return nil
		}
		var k jsonKind
		switch f.Type {
		case ice.PrimitiveTypes.Int64:
			k = kindLong
		case ice.PrimitiveTypes.Float64:
			k = kindDouble
		case ice.PrimitiveTypes.String:
			k = kindString
		case ice.PrimitiveTypes.Bool:
			k = kindBool
		default:
			return nil
		}
		ms.names[f.Name] = len(ms.kinds)
		ms.member = append(ms.member, f.Name)
		ms.kinds = append(ms.kinds, k)
		ms.order = append(ms.order, -1)
		plain := !strings.ContainsAny(f.Name, "\"\\")
		ms.plain = append(ms.plain, plain)
		var word, mask uint64
		if plain && len(f.Name) >= 1 && len(f.Name) <= 8 {
			var w [8]byte
			copy(w[:], f.Name)
			word, mask = binary.LittleEndian.Uint64(w[:]), ^uint64(0)>>(64-8*len(f.Name))
		}
		ms.word, ms.mask = append(ms.word, word), append(ms.mask, mask)
	}
	return ms
}

// Scan reports whether the (valid) JSON object b is of the shape, noting where each member's value
// starts and ends. With the members the converter listed (jsonvalue.Value.Members), it reads them
// instead of finding them in b.
func (ms *MemberScan) Scan(b []byte, members []jsonvalue.Member) bool {
	ms.reset()
	if members != nil {
		return ms.scanListed(b, members)
	}
	n := 0
	i := jsonWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = jsonWS(b, i+1)
	for at := 0; i < len(b) && b[i] != '}'; at++ {
		m, ke := ms.orderedName(b, i, at)
		ok := ke >= 0
		if !ok {
			var plain bool
			if ke, plain = jsonStringEnd(b, i); !plain {
				return false
			}
			m, ok = ms.lookup(b[i+1:ke-1], at)
		}
		i = jsonWS(b, ke)
		i = jsonWS(b, i+1) // ':'
		vk, ve := jsonMember(b, i)
		if !ms.note(m, ok, vk, i, ve, &n) {
			return false
		}
		i = jsonWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i = jsonWS(b, i+1)
		}
	}
	return n == len(ms.kinds)
}

// scanListed is scan over the listed members of b.
func (ms *MemberScan) scanListed(b []byte, members []jsonvalue.Member) bool {
	n := 0
	for at := range members {
		mb := &members[at]
		m, ke := ms.orderedName(b, int(mb.Name), at)
		ok := ke >= 0
		if !ok {
			if mb.Flags&jsonvalue.NameEscaped != 0 {
				return false
			}
			m, ok = ms.lookup(b[mb.Name+1:mb.NameEnd-1], at)
		}
		vk, ve := listedMember(b, mb)
		if !ms.note(m, ok, vk, int(mb.Value), ve, &n) {
			return false
		}
	}
	return n == len(ms.kinds)
}

func (ms *MemberScan) reset() {
	for i := range ms.Pos {
		ms.Pos[i] = -1
	}
	clear(ms.seen)
}

// note takes the member found at i..ve (of kind vk) as member m (ok: a member of the shape), counting
// those of the shape in n; false: the object is not of the shape.
func (ms *MemberScan) note(m int, ok bool, vk jsonKind, i, ve int, n *int) bool {
	switch {
	case ve < 0:
		return false
	case ok && ms.seen[m]:
		return false // a repeated name: the map keeps the last, let the converter say which
	case vk == kindAbsent: // null: not part of the shape
		if ok {
			ms.seen[m] = true
		}
	case !ok || vk != ms.kinds[m]:
		return false
	default:
		ms.seen[m] = true
		*n++
		ms.Pos[m], ms.End[m] = i, ve
	}
	return true
}

// JSONShape is a record shape that a table covers, compiled against the table's Arrow columns: for
// each member, the column it fills (-1: none, ignored as the map's extra keys are). A JSON object of
// the shape converts to a map of that shape, and the row AppendValue builds from that map is the row
// AppendRow builds from the bytes.
type JSONShape struct {
	*MemberScan
	Struct   *ice.StructType
	SchemaID int
	cols     []int // per member: column, or -1
	from     []int // per column: the member whose value fills it, or -1
}

// CompileShape builds the JSONShape of st for the columns fields (of table schema schemaID), or nil
// when a member's type, or its column's, is one the bytes are not appended from.
func CompileShape(st *ice.StructType, schemaID int, fields []arrow.Field) *JSONShape {
	ms := NewMemberScan(st)
	if ms == nil {
		return nil
	}
	col := map[string]int{}
	for i, f := range fields {
		col[f.Name] = i
	}
	js := &JSONShape{MemberScan: ms, Struct: st, SchemaID: schemaID, cols: make([]int, len(ms.kinds)), from: make([]int, len(fields))}
	for _, f := range st.FieldList {
		m := ms.names[f.Name]
		c, ok := col[f.Name]
		if !ok {
			c = -1
		} else if !appendsFrom(fields[c].Type, ms.kinds[m]) {
			return nil
		}
		js.cols[m] = c
	}
	for c := range js.from {
		js.from[c] = -1
	}
	for m, c := range js.cols {
		if c >= 0 {
			js.from[c] = m
		}
	}
	return js
}

// appendsFrom reports whether appendRow fills a column of type dt from a member of kind k (as
// AppendValue does from the converted value).
func appendsFrom(dt arrow.DataType, k jsonKind) bool {
	switch dt.ID() {
	case arrow.INT64:
		return k == kindLong
	case arrow.FLOAT64:
		return k == kindLong || k == kindDouble
	case arrow.STRING:
		return k == kindString
	case arrow.BOOL:
		return k == kindBool
	}
	return false
}

// AppendRow appends the (valid) JSON object b, of the listed members (nil: not listed), to the builders
// of the shape's columns when it is of the shape, else appends nothing and reports false.
func (js *JSONShape) AppendRow(blds []array.Builder, b []byte, members []jsonvalue.Member) bool {
	if !js.Scan(b, members) {
		return false
	}
	js.AppendScanned(blds, b)
	return true
}

// AppendScanned appends the JSON object b, which the shape's last Scan found of the shape, to the
// builders of the shape's columns: every value already known to fit and where it ends.
func (js *JSONShape) AppendScanned(blds []array.Builder, b []byte) {
	for c, m := range js.from {
		bld := blds[c]
		if m < 0 || js.Pos[m] < 0 {
			bld.AppendNull()
			continue
		}
		p, e := js.Pos[m], js.End[m]
		// the segment reserves its batch's rows: the unchecked appends skip a capacity check and a
		// call per value
		switch x := bld.(type) {
		case *array.Int64Builder:
			if v := jsonInt(b, p); x.Len() < x.Cap() {
				x.UnsafeAppend(v)
			} else {
				x.Append(v)
			}
		case *array.Float64Builder:
			if v := jsonNumber(b, p, e, js.kinds[m]); x.Len() < x.Cap() {
				x.UnsafeAppend(v)
			} else {
				x.Append(v)
			}
		case *array.StringBuilder:
			v := b[p+1 : e-1] // a string without escapes (scan)
			if x.Len() < x.Cap() && x.DataLen()+len(v) <= x.DataCap() {
				x.BinaryBuilder.UnsafeAppend(v)
			} else {
				x.BinaryBuilder.Append(v)
			}
		case *array.BooleanBuilder:
			if x.Len() < x.Cap() {
				x.UnsafeAppend(b[p] == 't')
			} else {
				x.Append(b[p] == 't')
			}
		}
	}
}

func jsonWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonStringEnd is the end of the string token at i and whether it has no escapes.
func jsonStringEnd(b []byte, i int) (int, bool) {
	// most names and many values are short: a loop ends them sooner than IndexByte's set-up
	for j := i + 1; j < len(b) && j <= i+16; j++ {
		switch b[j] {
		case '"':
			return j + 1, true
		case '\\':
			return 0, false
		}
	}
	q := bytes.IndexByte(b[i+1:], '"')
	if q < 0 {
		return len(b), false
	}
	if bytes.IndexByte(b[i+1:i+1+q], '\\') >= 0 {
		return 0, false
	}
	return i + 1 + q + 1, true
}

// jsonMember is the kind of the member value at i and its end (-1: a value appendJSON does not take:
// a nested value, a string with escapes, an integer of more than 18 digits).
func jsonMember(b []byte, i int) (jsonKind, int) {
	if i >= len(b) {
		return kindAbsent, -1
	}
	switch b[i] {
	case '"':
		e, plain := jsonStringEnd(b, i)
		if !plain {
			return kindAbsent, -1
		}
		return kindString, e
	case 't':
		return kindBool, i + 4
	case 'f':
		return kindBool, i + 5
	case 'n':
		return kindAbsent, i + 4
	case '{', '[':
		return kindAbsent, -1
	}
	j, integral, digits := i, true, 0
	for ; j < len(b); j++ {
		c := b[j]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || c == 'e' || c == 'E':
			integral = false
		case c == '-' || c == '+':
		default:
			goto end
		}
	}
end:
	if integral {
		if digits > 18 {
			return kindAbsent, -1
		}
		return kindLong, j
	}
	return kindDouble, j
}

// listedMember is jsonMember for a member the converter listed.
func listedMember(b []byte, mb *jsonvalue.Member) (jsonKind, int) {
	i, e := int(mb.Value), int(mb.ValueEnd)
	switch b[i] {
	case '"':
		if mb.Flags&jsonvalue.ValueEscaped != 0 {
			return kindAbsent, -1
		}
		return kindString, e
	case 't', 'f':
		return kindBool, e
	case 'n':
		return kindAbsent, e
	case '{', '[':
		return kindAbsent, -1
	}
	if mb.Flags&jsonvalue.ValueFraction != 0 {
		return kindDouble, e
	}
	if digits := e - i; digits > 18 && (b[i] != '-' || digits > 19) {
		return kindAbsent, -1
	}
	return kindLong, e
}

// jsonInt is the integral number at i (at most 18 digits, leading zeros allowed).
func jsonInt(b []byte, i int) int64 {
	neg := b[i] == '-'
	if neg {
		i++
	}
	var v int64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + int64(b[i]-'0')
	}
	if neg {
		return -v
	}
	return v
}

// jsonNumber is the number b[i:e], of kind k (kindLong or kindDouble), as the schemaless converter
// reads it into a double column: an integral one as its int64 (as AppendValue widens it), else Java's
// double parsing, with -0.0 as 0.
func jsonNumber(b []byte, i, e int, k jsonKind) float64 {
	if k == kindLong {
		return float64(jsonInt(b, i))
	}
	if f, ok := jsonDecimal(b[i:e]); ok {
		return f
	}
	f, err := strconv.ParseFloat(string(b[i:e]), 64)
	if (err != nil && !math.IsInf(f, 0) && f != 0) || f == 0 {
		return 0
	}
	return f
}

// float64pow10 are the powers of ten a float64 holds exactly.
var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// jsonDecimal is the number n, of the form [-]digits[.digits], when its digits make an integer below
// 2^52 and it has at most 22 of them after the point: that integer and that power of ten are exact
// doubles, so their quotient is the correctly rounded value, as strconv.ParseFloat computes it for
// such a number. ok is false for any other number, and for zero (the caller's -0.0 rule).
func jsonDecimal(n []byte) (f float64, ok bool) {
	i, neg := 0, len(n) > 0 && n[0] == '-'
	if neg {
		i++
	}
	var m uint64
	frac, point := 0, false
	for ; i < len(n); i++ {
		switch c := n[i]; {
		case c >= '0' && c <= '9':
			if m = m*10 + uint64(c-'0'); m >= 1<<52 {
				return 0, false
			}
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if m == 0 || frac > 22 {
		return 0, false
	}
	f = float64(m) / float64pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}
