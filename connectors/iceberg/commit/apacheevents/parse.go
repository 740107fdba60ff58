package apacheevents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect/avrotype"
)

// maxSchemaDepth bounds the nesting of a parsed writer schema; the events nest about ten levels.
const maxSchemaDepth = 64

// parseSchema parses an Avro schema as Java's Schema.Parser does for the schemas Iceberg writes: named types
// are registered before their fields are parsed and resolved against the enclosing namespace first, then
// the null namespace.
func parseSchema(text []byte) (*node, error) {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema JSON: %w", err)
	}
	if d.More() {
		return nil, fmt.Errorf("schema JSON: trailing data")
	}
	p := parser{names: map[string]*node{}}
	return p.parse(v, "", 0)
}

type parser struct {
	names map[string]*node
}

func (p *parser) parse(v any, space string, depth int) (*node, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("schema nested deeper than %d", maxSchemaDepth)
	}
	switch s := v.(type) {
	case string:
		if k, ok := avrotype.Primitive(s); ok {
			return &node{kind: k}, nil
		}
		return p.lookup(s, space)
	case []any:
		n := &node{kind: avrotype.Union, branches: make([]*node, 0, len(s))}
		for _, b := range s {
			bn, err := p.parse(b, space, depth+1)
			if err != nil {
				return nil, err
			}
			if bn.kind == avrotype.Union {
				return nil, fmt.Errorf("union inside a union")
			}
			n.branches = append(n.branches, bn)
		}
		return n, nil
	case map[string]any:
		return p.parseObject(s, space, depth)
	}
	return nil, fmt.Errorf("schema: unexpected JSON %T", v)
}

func (p *parser) lookup(name, space string) (*node, error) {
	if space != "" {
		if n, ok := p.names[space+"."+name]; ok {
			return n, nil
		}
	}
	if n, ok := p.names[name]; ok {
		return n, nil
	}
	return nil, fmt.Errorf("schema: undefined name %q", name)
}

func (p *parser) parseObject(o map[string]any, space string, depth int) (*node, error) {
	t, ok := o["type"]
	if !ok {
		return nil, fmt.Errorf("schema: object without a type")
	}
	ts, ok := t.(string)
	if !ok { // {"type": {...}} or {"type": [...]}: the nested schema, as Java's parser allows
		return p.parse(t, space, depth+1)
	}
	n := &node{props: otherProps(o, "type", "name", "namespace", "doc", "fields", "items", "values", "symbols",
		"size", "aliases", "default")}
	if k, ok := avrotype.Primitive(ts); ok {
		n.kind = k
		return n, nil
	}
	switch ts {
	case "record", "error", "enum", "fixed":
		if err := p.define(n, o, space); err != nil {
			return nil, err
		}
	}
	switch ts {
	case "record", "error":
		n.kind = avrotype.Record
		fs, ok := o["fields"].([]any)
		if !ok {
			return nil, fmt.Errorf("schema: record %s without fields", n.fullName())
		}
		n.fields = make([]*field, 0, len(fs))
		for _, fv := range fs {
			fo, ok := fv.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("schema: record %s: field is not an object", n.fullName())
			}
			name, _ := fo["name"].(string)
			ft, ok := fo["type"]
			if name == "" || !ok {
				return nil, fmt.Errorf("schema: record %s: field without a name or type", n.fullName())
			}
			fn, err := p.parse(ft, n.namespace, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", name, err)
			}
			_, hasDefault := fo["default"]
			f := &field{name: name, typ: fn, hasDefault: hasDefault, id: -1,
				props: otherProps(fo, "name", "type", "doc", "default", "order", "aliases")}
			f.doc, _ = fo["doc"].(string)
			if id, ok := intProp(fo["field-id"]); ok {
				f.id = id
			}
			n.fields = append(n.fields, f)
		}
	case "enum":
		n.kind = avrotype.Enum
		ss, ok := o["symbols"].([]any)
		if !ok {
			return nil, fmt.Errorf("schema: enum %s without symbols", n.fullName())
		}
		for _, s := range ss {
			str, ok := s.(string)
			if !ok {
				return nil, fmt.Errorf("schema: enum %s: symbol is not a string", n.fullName())
			}
			n.symbols = append(n.symbols, str)
		}
	case "fixed":
		n.kind = avrotype.Fixed
		size, ok := intProp(o["size"])
		if !ok || size < 0 {
			return nil, fmt.Errorf("schema: fixed %s without a valid size", n.fullName())
		}
		n.size = size
	case "array", "map":
		n.kind = avrotype.Array
		key := "items"
		if ts == "map" {
			n.kind, key = avrotype.Map, "values"
		}
		iv, ok := o[key]
		if !ok {
			return nil, fmt.Errorf("schema: %s without %s", ts, key)
		}
		in, err := p.parse(iv, space, depth+1)
		if err != nil {
			return nil, err
		}
		n.items = in
	default:
		// a name used as {"type": "Name"}
		ref, err := p.lookup(ts, space)
		if err != nil {
			return nil, err
		}
		return ref, nil
	}
	return n, nil
}

// define names n and registers it, before its fields are parsed so that they can refer to it.
func (p *parser) define(n *node, o map[string]any, space string) error {
	name, _ := o["name"].(string)
	if name == "" {
		return fmt.Errorf("schema: named type without a name")
	}
	if ns, ok := o["namespace"].(string); ok {
		space = ns
	}
	n.namespace, n.name = avrotype.SplitName(name)
	if !strings.Contains(name, ".") {
		n.namespace = space
	}
	n.doc, _ = o["doc"].(string)
	full := n.fullName()
	if _, dup := p.names[full]; dup {
		return fmt.Errorf("schema: %s defined twice", full)
	}
	p.names[full] = n
	return nil
}

// otherProps keeps the properties that are not Avro's own, in a fixed order (JSON objects have none).
func otherProps(o map[string]any, reserved ...string) []prop {
	var ps []prop
	for _, k := range []string{"logicalType", "adjust-to-utc", "precision", "scale", "element-id", "key-id",
		"value-id", "iceberg-field-name", "field-id"} {
		v, ok := o[k]
		if !ok || slices.Contains(reserved, k) {
			continue
		}
		switch x := v.(type) {
		case string:
			ps = append(ps, prop{k, x})
		case bool:
			ps = append(ps, prop{k, x})
		case json.Number:
			if i, err := strconv.Atoi(string(x)); err == nil {
				ps = append(ps, prop{k, i})
			}
		}
	}
	return ps
}

func intProp(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 32)
	if err != nil {
		return 0, false
	}
	return int(i), true
}
