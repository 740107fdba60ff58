package avro

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect/avrotype"
)

// kind is an Avro schema type.
type kind = avrotype.Kind

// node is a parsed Avro schema. Named types referenced by name point at the same node (recursive
// schemas therefore form cycles).
type node struct {
	kind      kind
	name      string // simple name (named types)
	namespace string
	fullName  string
	doc       string
	props     map[string]any // non-reserved attributes, JSON numbers as json.Number
	logical   string         // props["logicalType"] when a string

	fields    []*field // record
	symbols   []string // enum
	enumDef   *string  // enum default symbol
	items     *node    // array
	values    *node    // map
	branches  []*node  // union
	size      int      // fixed
	fieldIdx  map[string]int
	minSize   int // minimum binary size of a value (0 or 1), for decode bounds
	hasMinSet bool
}

type field struct {
	name   string
	doc    string
	typ    *node
	def    any // JSON default (json.Number for numbers); valid when hasDef
	hasDef bool
	props  map[string]any
}

var reservedSchemaAttrs = map[string]bool{"type": true, "name": true, "namespace": true, "doc": true,
	"fields": true, "items": true, "values": true, "symbols": true, "size": true, "aliases": true, "default": true}

var reservedFieldAttrs = map[string]bool{"type": true, "name": true, "doc": true, "default": true,
	"aliases": true, "order": true}

// parseSchema parses an Avro schema document.
func parseSchema(text string) (*node, error) { return parseSchemaWithRefs(text, nil) }

// parseSchemaWithRefs parses an Avro schema document whose named types may come from referenced schemas
// (the registry's "references"), given dependencies first, as Confluent's AvroSchema resolves them.
func parseSchemaWithRefs(text string, deps []string) (*node, error) {
	p := &parser{named: map[string]*node{}}
	for _, dep := range deps {
		v, err := decodeSchemaJSON(dep)
		if err != nil {
			return nil, fmt.Errorf("referenced schema: %w", err)
		}
		if _, err := p.parse(v, ""); err != nil {
			return nil, fmt.Errorf("referenced schema: %w", err)
		}
	}
	v, err := decodeSchemaJSON(text)
	if err != nil {
		return nil, err
	}
	n, err := p.parse(v, "")
	if err != nil {
		return nil, err
	}
	// Compute the decode bounds now: parsed nodes are shared between goroutines afterwards.
	walk(n, map[*node]bool{}, func(x *node) { minSize(x) })
	return n, nil
}

func decodeSchemaJSON(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid Avro schema JSON: %w", err)
	}
	return v, nil
}

// walk visits every node once (cycles included).
func walk(n *node, seen map[*node]bool, fn func(*node)) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	for _, f := range n.fields {
		walk(f.typ, seen, fn)
	}
	walk(n.items, seen, fn)
	walk(n.values, seen, fn)
	for _, b := range n.branches {
		walk(b, seen, fn)
	}
	fn(n)
}

type parser struct {
	named map[string]*node
	depth int
}

func (p *parser) parse(v any, ns string) (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 200 {
		return nil, fmt.Errorf("avro schema nested too deeply")
	}
	switch x := v.(type) {
	case string:
		if k, ok := avrotype.Primitive(x); ok {
			return &node{kind: k}, nil
		}
		if n, ok := p.named[avrotype.FullName(x, ns)]; ok {
			return n, nil
		}
		if n, ok := p.named[x]; ok {
			return n, nil
		}
		return nil, fmt.Errorf("undefined Avro type name %q", x)
	case []any:
		u := &node{kind: avrotype.Union}
		for _, b := range x {
			bn, err := p.parse(b, ns)
			if err != nil {
				return nil, err
			}
			if bn.kind == avrotype.Union {
				return nil, fmt.Errorf("avro unions may not immediately contain other unions")
			}
			u.branches = append(u.branches, bn)
		}
		return u, nil
	case map[string]any:
		return p.parseObject(x, ns)
	}
	return nil, fmt.Errorf("invalid Avro schema element %v", v)
}

func stringAttr(m map[string]any, k string) (string, bool) {
	s, ok := m[k].(string)
	return s, ok
}

func (p *parser) parseObject(m map[string]any, ns string) (*node, error) {
	t, ok := m["type"]
	if !ok {
		return nil, fmt.Errorf("avro schema object without type")
	}
	ts, isStr := t.(string)
	if !isStr {
		// {"type": {...}} or {"type": [...]}: the wrapped schema (props on the wrapper are lost, as in Java).
		return p.parse(t, ns)
	}
	n := &node{}
	if k, ok := avrotype.Primitive(ts); ok {
		n.kind = k
	} else {
		switch ts {
		case "record", "error":
			n.kind = avrotype.Record
		case "enum":
			n.kind = avrotype.Enum
		case "array":
			n.kind = avrotype.Array
		case "map":
			n.kind = avrotype.Map
		case "fixed":
			n.kind = avrotype.Fixed
		default:
			if ref, ok := p.named[avrotype.FullName(ts, ns)]; ok {
				return ref, nil
			}
			if ref, ok := p.named[ts]; ok {
				return ref, nil
			}
			return nil, fmt.Errorf("undefined Avro type %q", ts)
		}
	}
	for k, v := range m {
		if reservedSchemaAttrs[k] {
			continue
		}
		if n.props == nil {
			n.props = map[string]any{}
		}
		n.props[k] = v
	}
	n.logical, _ = stringAttr(m, "logicalType")
	n.doc, _ = stringAttr(m, "doc")
	if n.kind == avrotype.Record || n.kind == avrotype.Enum || n.kind == avrotype.Fixed {
		name, ok := stringAttr(m, "name")
		if !ok || name == "" {
			return nil, fmt.Errorf("avro %s schema without name", ts)
		}
		if nsAttr, ok := stringAttr(m, "namespace"); ok {
			ns = nsAttr
		}
		n.fullName = avrotype.FullName(name, ns)
		n.namespace, n.name = avrotype.SplitName(n.fullName)
		if _, dup := p.named[n.fullName]; dup {
			return nil, fmt.Errorf("avro type %q redefined", n.fullName)
		}
		p.named[n.fullName] = n
		ns = n.namespace
	}
	switch n.kind {
	case avrotype.Record:
		fs, ok := m["fields"].([]any)
		if !ok {
			return nil, fmt.Errorf("avro record %s without fields", n.fullName)
		}
		n.fieldIdx = map[string]int{}
		for _, fv := range fs {
			fm, ok := fv.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("invalid field in record %s", n.fullName)
			}
			f := &field{}
			f.name, ok = stringAttr(fm, "name")
			if !ok {
				return nil, fmt.Errorf("field without name in record %s", n.fullName)
			}
			if _, dup := n.fieldIdx[f.name]; dup {
				return nil, fmt.Errorf("duplicate field %s in record %s", f.name, n.fullName)
			}
			f.doc, _ = stringAttr(fm, "doc")
			ft, ok := fm["type"]
			if !ok {
				return nil, fmt.Errorf("field %s without type", f.name)
			}
			var err error
			if f.typ, err = p.parse(ft, ns); err != nil {
				return nil, err
			}
			f.def, f.hasDef = fm["default"]
			for k, v := range fm {
				if !reservedFieldAttrs[k] {
					if f.props == nil {
						f.props = map[string]any{}
					}
					f.props[k] = v
				}
			}
			n.fieldIdx[f.name] = len(n.fields)
			n.fields = append(n.fields, f)
		}
	case avrotype.Enum:
		ss, ok := m["symbols"].([]any)
		if !ok {
			return nil, fmt.Errorf("avro enum %s without symbols", n.fullName)
		}
		for _, s := range ss {
			str, ok := s.(string)
			if !ok {
				return nil, fmt.Errorf("invalid symbol in enum %s", n.fullName)
			}
			n.symbols = append(n.symbols, str)
		}
		if d, ok := stringAttr(m, "default"); ok {
			n.enumDef = &d
		}
	case avrotype.Array:
		it, ok := m["items"]
		if !ok {
			return nil, fmt.Errorf("avro array without items")
		}
		var err error
		if n.items, err = p.parse(it, ns); err != nil {
			return nil, err
		}
	case avrotype.Map:
		vs, ok := m["values"]
		if !ok {
			return nil, fmt.Errorf("avro map without values")
		}
		var err error
		if n.values, err = p.parse(vs, ns); err != nil {
			return nil, err
		}
	case avrotype.Fixed:
		sz, ok := m["size"].(json.Number)
		if !ok {
			return nil, fmt.Errorf("avro fixed %s without size", n.fullName)
		}
		s, err := sz.Int64()
		if err != nil || s < 0 || s > 1<<30 {
			return nil, fmt.Errorf("invalid size for fixed %s", n.fullName)
		}
		n.size = int(s)
	}
	return n, nil
}

// typeName is the name used for a union branch and for RecordNameStrategy: the full name of named
// types, the type name otherwise.
func (n *node) typeName() string {
	switch n.kind {
	case avrotype.Record, avrotype.Enum, avrotype.Fixed:
		return n.fullName
	}
	return n.kind.String()
}

// propInt reads an integer property.
func (n *node) propInt(k string) (int, bool) {
	switch v := n.props[k].(type) {
	case json.Number:
		i, err := v.Int64()
		if err != nil {
			f, ferr := v.Float64()
			if ferr != nil {
				return 0, false
			}
			return int(f), true
		}
		return int(i), true
	}
	return 0, false
}
