package avrotest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// avroType is a parsed Avro schema, enough for validation and for the compatibility check.
type avroType struct {
	typ      string // null…string, record, enum, fixed, array, map, union
	name     string // simple name (named types)
	fullName string
	aliases  []string
	fields   []avroField
	items    *avroType // array
	values   *avroType // map
	branches []*avroType
	symbols  []string
	enumDflt string
	size     int
}

type avroField struct {
	name       string
	aliases    []string
	typ        *avroType
	hasDefault bool
}

var primitives = map[string]bool{"null": true, "boolean": true, "int": true, "long": true, "float": true,
	"double": true, "bytes": true, "string": true}

// schemaParser resolves named types; referenced schemas are parsed first into the same names.
type schemaParser struct {
	named map[string]*avroType
}

// parseAvro parses schema text as Karapace (Python avro) does, with the texts of the referenced schemas
// parsed first. Errors carry the messages Karapace answers with (after "Invalid AVRO schema. Error: ").
func parseAvro(text string, refs []string) (*avroType, error) {
	p := &schemaParser{named: map[string]*avroType{}}
	for _, r := range refs {
		v, err := decodeJSON(r)
		if err != nil {
			return nil, err
		}
		if _, err := p.parse(v, ""); err != nil {
			return nil, err
		}
	}
	v, err := decodeJSON(text)
	if err != nil {
		return nil, err
	}
	return p.parse(v, "")
}

// decodeJSON decodes one JSON document; a truncated one fails as orjson reports it.
func decodeJSON(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			line := strings.Count(text, "\n") + 1
			col := len(text) - strings.LastIndexByte(text, '\n')
			return nil, fmt.Errorf("unexpected end of data: line %d column %d (char %d)", line, col, len(text))
		}
		return nil, err
	}
	return v, nil
}

// pyStr renders a JSON value as Python's str() does for the values in Karapace's messages.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func fullName(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

func (p *schemaParser) parse(v any, ns string) (*avroType, error) {
	switch x := v.(type) {
	case string:
		if primitives[x] {
			return &avroType{typ: x}, nil
		}
		if t, ok := p.named[fullName(x, ns)]; ok {
			return t, nil
		}
		if t, ok := p.named[x]; ok {
			return t, nil
		}
		return nil, fmt.Errorf("Could not make an Avro Schema object from %s", pyStr(v))
	case []any:
		u := &avroType{typ: "union"}
		for _, b := range x {
			t, err := p.parse(b, ns)
			if err != nil {
				return nil, err
			}
			u.branches = append(u.branches, t)
		}
		return u, nil
	case map[string]any:
		return p.parseObject(x, ns)
	}
	return nil, fmt.Errorf("Could not make an Avro Schema object from %s", pyStr(v))
}

func strList(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (p *schemaParser) parseObject(m map[string]any, ns string) (*avroType, error) {
	typ, ok := m["type"].(string)
	if !ok {
		if m["type"] == nil {
			return nil, fmt.Errorf("Could not make an Avro Schema object from %s", pyStr(m["type"]))
		}
		return p.parse(m["type"], ns) // {"type": {...}} or {"type": [...]}
	}
	if primitives[typ] {
		return &avroType{typ: typ}, nil
	}
	t := &avroType{typ: typ}
	switch typ {
	case "record", "error", "enum", "fixed":
		name, _ := m["name"].(string)
		if name == "" {
			return nil, fmt.Errorf("No \"name\" property: %s", pyStr(m))
		}
		if n, ok := m["namespace"].(string); ok {
			ns = n
		}
		t.fullName = fullName(name, ns)
		t.name = t.fullName[strings.LastIndexByte(t.fullName, '.')+1:]
		if i := strings.LastIndexByte(t.fullName, '.'); i >= 0 {
			ns = t.fullName[:i]
		}
		t.aliases = strList(m["aliases"])
		if _, dup := p.named[t.fullName]; dup {
			return nil, fmt.Errorf("The name \"%s\" is already in use.", t.fullName)
		}
		p.named[t.fullName] = t
	}
	switch typ {
	case "record", "error":
		t.typ = "record"
		fields, _ := m["fields"].([]any)
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			name, _ := fm["name"].(string)
			ft, err := p.parse(fm["type"], ns)
			if err != nil {
				return nil, fmt.Errorf("Type property \"%s\" not a valid Avro schema: %w", pyStr(fm["type"]), err)
			}
			_, hasDefault := fm["default"]
			t.fields = append(t.fields, avroField{name: name, aliases: strList(fm["aliases"]), typ: ft, hasDefault: hasDefault})
		}
	case "enum":
		t.symbols = strList(m["symbols"])
		t.enumDflt, _ = m["default"].(string)
	case "fixed":
		if n, ok := m["size"].(json.Number); ok {
			i, _ := n.Int64()
			t.size = int(i)
		}
	case "array":
		it, err := p.parse(m["items"], ns)
		if err != nil {
			return nil, err
		}
		t.items = it
	case "map":
		vt, err := p.parse(m["values"], ns)
		if err != nil {
			return nil, err
		}
		t.values = vt
	default:
		return nil, fmt.Errorf("Undefined type: %s", typ)
	}
	return t, nil
}

// canonical is the schema text Karapace stores and answers with: the JSON re-encoded with sorted keys,
// no spaces, non-ASCII kept.
func canonical(text string) string {
	v, err := decodeJSON(text)
	if err != nil {
		return text
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return text
	}
	return strings.TrimSuffix(b.String(), "\n")
}
