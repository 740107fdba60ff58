package apacheevents

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/connectd/connectd/connect/avrotype"
)

// kind is an Avro schema type.
type kind = avrotype.Kind

// prop is a schema property other than the ones Avro defines ("logicalType", "field-id", "element-id" ...);
// a slice, not a map, because Java writes them in insertion order.
type prop struct {
	key string
	val any // string, int, bool
}

// node is an Avro schema.
type node struct {
	kind      kind
	name      string // named types: the simple name
	namespace string // "" is Avro's null namespace
	doc       string
	fields    []*field // record
	items     *node    // array items, map values
	branches  []*node  // union
	symbols   []string // enum
	size      int      // fixed
	props     []prop
}

type field struct {
	name       string
	typ        *node
	doc        string
	hasDefault bool // the only default these schemas have is null
	props      []prop
	id         int // the "field-id" property, -1 if absent
}

func (n *node) fullName() string {
	if n.namespace == "" {
		return n.name
	}
	return n.namespace + "." + n.name
}

func (n *node) prop(key string) any {
	for _, p := range n.props {
		if p.key == key {
			return p.val
		}
	}
	return nil
}

func (n *node) logical() string {
	s, _ := n.prop("logicalType").(string)
	return s
}

func (f *field) prop(key string) any {
	for _, p := range f.props {
		if p.key == key {
			return p.val
		}
	}
	return nil
}

// fieldByID returns the position of the record field with the given field id, or -1.
func (n *node) fieldByID(id int) int {
	for i, f := range n.fields {
		if f.id == id {
			return i
		}
	}
	return -1
}

// optionOf returns the non-null branch of a union with null, or n itself when n is not such a union.
func (n *node) optionOf() (*node, bool) {
	if n.kind != avrotype.Union || len(n.branches) != 2 {
		return n, false
	}
	if n.branches[0].kind == avrotype.Null {
		return n.branches[1], true
	}
	if n.branches[1].kind == avrotype.Null {
		return n.branches[0], true
	}
	return n, false
}

// schemaJSON writes n as Java's Avro Schema.toString() does: named types are defined where they first occur
// and referred to by name afterwards (Java's parser rejects a redefinition), a name in the enclosing
// namespace is written without it, and a null namespace inside a non-null one is written as "".
func schemaJSON(n *node) []byte {
	w := jsonWriter{names: map[string]bool{}}
	w.schema(n)
	return w.b.Bytes()
}

type jsonWriter struct {
	b     bytes.Buffer
	names map[string]bool
	space string
}

func (w *jsonWriter) schema(n *node) {
	switch n.kind {
	case avrotype.Record, avrotype.Enum, avrotype.Fixed:
		full := n.fullName()
		if w.names[full] {
			w.str(w.qualified(n))
			return
		}
		w.names[full] = true
		w.b.WriteString(`{"type":`)
		w.str(n.kind.String())
		w.b.WriteString(`,"name":`)
		w.str(n.name)
		if n.namespace != "" {
			if n.namespace != w.space {
				w.b.WriteString(`,"namespace":`)
				w.str(n.namespace)
			}
		} else if w.space != "" {
			w.b.WriteString(`,"namespace":""`)
		}
		switch n.kind {
		case avrotype.Record:
			saved := w.space
			w.space = n.namespace
			if n.doc != "" {
				w.b.WriteString(`,"doc":`)
				w.str(n.doc)
			}
			w.b.WriteString(`,"fields":[`)
			for i, f := range n.fields {
				if i > 0 {
					w.b.WriteByte(',')
				}
				w.field(f)
			}
			w.b.WriteByte(']')
			w.props(n.props)
			w.b.WriteByte('}')
			w.space = saved
			return
		case avrotype.Enum:
			w.b.WriteString(`,"symbols":[`)
			for i, s := range n.symbols {
				if i > 0 {
					w.b.WriteByte(',')
				}
				w.str(s)
			}
			w.b.WriteByte(']')
		case avrotype.Fixed:
			w.b.WriteString(`,"size":`)
			w.b.WriteString(strconv.Itoa(n.size))
		}
		w.props(n.props)
		w.b.WriteByte('}')
	case avrotype.Array, avrotype.Map:
		w.b.WriteString(`{"type":`)
		if n.kind == avrotype.Array {
			w.b.WriteString(`"array","items":`)
		} else {
			w.b.WriteString(`"map","values":`)
		}
		w.schema(n.items)
		w.props(n.props)
		w.b.WriteByte('}')
	case avrotype.Union:
		w.b.WriteByte('[')
		for i, b := range n.branches {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.schema(b)
		}
		w.b.WriteByte(']')
	default:
		if len(n.props) == 0 {
			w.str(n.kind.String())
			return
		}
		w.b.WriteString(`{"type":`)
		w.str(n.kind.String())
		w.props(n.props)
		w.b.WriteByte('}')
	}
}

// qualified is Avro's Name.getQualified: the simple name in its own namespace unless that reads as a
// primitive type.
func (w *jsonWriter) qualified(n *node) string {
	if n.namespace != "" && n.namespace == w.space {
		if _, prim := avrotype.Primitive(n.name); !prim {
			return n.name
		}
	}
	return n.fullName()
}

func (w *jsonWriter) field(f *field) {
	w.b.WriteString(`{"name":`)
	w.str(f.name)
	w.b.WriteString(`,"type":`)
	w.schema(f.typ)
	if f.doc != "" {
		w.b.WriteString(`,"doc":`)
		w.str(f.doc)
	}
	if f.hasDefault {
		w.b.WriteString(`,"default":null`)
	}
	w.props(f.props)
	w.b.WriteByte('}')
}

func (w *jsonWriter) props(ps []prop) {
	for _, p := range ps {
		w.b.WriteByte(',')
		w.str(p.key)
		w.b.WriteByte(':')
		switch v := p.val.(type) {
		case string:
			w.str(v)
		case int:
			w.b.WriteString(strconv.Itoa(v))
		case bool:
			w.b.WriteString(strconv.FormatBool(v))
		}
	}
}

// str quotes s as Jackson does: the short escapes, \u00XX for other control characters, the rest as is.
func (w *jsonWriter) str(s string) {
	w.b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			w.b.WriteByte('\\')
			w.b.WriteRune(r)
		case r == '\b':
			w.b.WriteString(`\b`)
		case r == '\t':
			w.b.WriteString(`\t`)
		case r == '\n':
			w.b.WriteString(`\n`)
		case r == '\f':
			w.b.WriteString(`\f`)
		case r == '\r':
			w.b.WriteString(`\r`)
		case r < 0x20:
			w.b.WriteString(`\u00`)
			w.b.WriteByte("0123456789ABCDEF"[r>>4])
			w.b.WriteByte("0123456789ABCDEF"[r&0xF])
		default:
			w.b.WriteString(s[i : i+size])
		}
		i += size
	}
	w.b.WriteByte('"')
}
