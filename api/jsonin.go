package api

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect/jvm"
)

// Request bodies are parsed with jvm.ParseJSONStream rather than encoding/json so that the worker answers malformed
// or mistyped JSON the way the JVM does (Jackson's exception text in a 500); binding them to the few types the
// REST API reads adds Jackson databind's messages and scalars coerced to strings in string maps.

// jparser binds a parsed body; b is the body, for Jackson's locations in messages.
type jparser struct {
	b []byte
}

func (p *jparser) loc(off int) string { return jvm.Location(p.b, off) }

// withChain appends the reference chain a bean deserializer adds to a parse error inside a property.
func withChain(err error, class string) error {
	var je *jvm.JacksonError
	if errors.As(err, &je) && je.TopKey != "" {
		return &jvm.JacksonError{Msg: fmt.Sprintf("%s (through reference chain: %s[%q])", je.Msg, class, je.TopKey)}
	}
	return err
}

// withOffsetsChain adds the reference chain Jackson's bean and collection deserializers put on a nesting error
// raised inside an offset's partition or offset map (the maps themselves pass it through unwrapped).
func withOffsetsChain(err error) error {
	var ne *jvm.NestingError
	if !errors.As(err, &ne) || len(ne.Path) < 3 {
		return err
	}
	top, list, entry := ne.Path[0], ne.Path[1], ne.Path[2]
	if top.Kind != jvm.Object || top.Key != "offsets" || list.Kind != jvm.Array || entry.Kind != jvm.Object ||
		(entry.Key != "partition" && entry.Key != "offset") {
		return err
	}
	return &jvm.JacksonError{Msg: fmt.Sprintf("%s (through reference chain: %s[\"offsets\"]->java.util.ArrayList[%d]->%s[%q])",
		ne.Error(), classOffsets, list.Index, classOffset, entry.Key)}
}

// ---- binding (Jackson databind's messages for the few types the REST API reads) ----

const (
	classCreateRequest = "org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest"
	classOffsets       = "org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets"
	classOffset        = "org.apache.kafka.connect.runtime.rest.entities.ConnectorOffset"
	typeStringMap      = "java.util.LinkedHashMap<java.lang.String,java.lang.String>"
)

func tokenName(v *jvm.Value) (desc, token string) {
	switch v.Kind {
	case jvm.Object:
		return "Object value", "START_OBJECT"
	case jvm.Array:
		return "Array value", "START_ARRAY"
	case jvm.String:
		return "String value", "VALUE_STRING"
	case jvm.Number:
		if strings.ContainsAny(v.Text, ".eE") {
			return "Floating-point value", "VALUE_NUMBER_FLOAT"
		}
		return "Integer value", "VALUE_NUMBER_INT"
	case jvm.True:
		return "Boolean value", "VALUE_TRUE"
	case jvm.False:
		return "Boolean value", "VALUE_FALSE"
	}
	return "Null value", "VALUE_NULL"
}

// tokenLoc is where Jackson's parser stands once it has read the token starting v.
func (p *jparser) tokenLoc(v *jvm.Value) string { return p.loc(v.Start) }

func (p *jparser) mismatch(v *jvm.Value, javaType, chain string) error {
	desc, tok := tokenName(v)
	if v.Kind == jvm.String && javaType != "java.lang.String" {
		raw := javaType
		if i := strings.IndexByte(raw, '<'); i >= 0 {
			raw = raw[:i]
		}
		msg := fmt.Sprintf("Cannot construct instance of `%s` (although at least one Creator exists): no String-argument constructor/factory method to deserialize from String value ('%s')\n at %s", raw, v.Text, p.tokenLoc(v))
		if chain != "" {
			msg += " (through reference chain: " + chain + ")"
		}
		return &jvm.JacksonError{Msg: msg}
	}
	msg := fmt.Sprintf("Cannot deserialize value of type `%s` from %s (token `JsonToken.%s`)\n at %s", javaType, desc, tok, p.tokenLoc(v))
	if chain != "" {
		msg += " (through reference chain: " + chain + ")"
	}
	return &jvm.JacksonError{Msg: msg}
}

// orderedMap is a string map that remembers key order (nil value = JSON null).
type orderedMap struct {
	keys []string
	vals map[string]*string
}

// bindStringMap reads Map<String,String>; a JSON null root gives nil.
func (p *jparser) bindStringMap(v *jvm.Value, chain string) (*orderedMap, error) {
	if v == nil || v.Kind == jvm.Null {
		return nil, nil
	}
	if v.Kind != jvm.Object {
		return nil, p.mismatch(v, typeStringMap, chain)
	}
	m := &orderedMap{vals: map[string]*string{}}
	for i, k := range v.Keys {
		el := v.Vals[i]
		switch el.Kind {
		case jvm.Object, jvm.Array:
			c := chain
			if c != "" {
				c += "->"
			}
			c += fmt.Sprintf("java.util.LinkedHashMap[%q]", k)
			return nil, p.mismatch(el, "java.lang.String", c)
		case jvm.Null:
			m.vals[k] = nil
		default:
			s := el.Text
			m.vals[k] = &s
		}
		m.keys = append(m.keys, k)
	}
	return m, nil
}

func (m *orderedMap) plain() map[string]string {
	out := make(map[string]string, len(m.keys))
	for _, k := range m.keys {
		if v := m.vals[k]; v != nil {
			out[k] = *v
		}
	}
	return out
}

type createRequest struct {
	name         *string
	config       *orderedMap
	initialState string
}

func (p *jparser) bindCreate(v *jvm.Value) (*createRequest, error) {
	if v == nil || v.Kind == jvm.Null {
		return nil, nil
	}
	if v.Kind != jvm.Object {
		return nil, p.mismatch(v, classCreateRequest, "")
	}
	req := &createRequest{}
	seen := map[string]bool{}
	for i, k := range v.Keys {
		seen[k] = true
		el := v.Vals[i]
		chain := fmt.Sprintf("%s[%q]", classCreateRequest, k)
		switch k {
		case "name":
			switch el.Kind {
			case jvm.Object, jvm.Array:
				return nil, p.mismatch(el, "java.lang.String", chain)
			case jvm.Null:
				req.name = nil
			default:
				s := el.Text
				req.name = &s
			}
		case "config":
			m, err := p.bindStringMap(el, chain)
			if err != nil {
				return nil, err
			}
			req.config = m
		case "initial_state":
			switch el.Kind {
			case jvm.Object, jvm.Array:
				return nil, p.mismatch(el, classCreateRequest+"$InitialState", chain)
			case jvm.Null:
				req.initialState = ""
			default:
				st := strings.ToUpper(el.Text)
				if st != "RUNNING" && st != "PAUSED" && st != "STOPPED" {
					return nil, &jvm.JacksonError{Msg: fmt.Sprintf("Cannot construct instance of `%s$InitialState`, problem: No enum constant %s.InitialState.%s\n at %s (through reference chain: %s)",
						classCreateRequest, classCreateRequest, st, p.tokenLoc(el), chain)}
				}
				req.initialState = st
			}
		default:
			at := v.End // creator properties still missing: Jackson reports once the object is read
			if seen["name"] && seen["config"] && seen["initial_state"] {
				at = el.End
			}
			return nil, &jvm.JacksonError{Msg: fmt.Sprintf("Unrecognized field %q (class %s), not marked as ignorable (3 known properties: \"config\", \"name\", \"initial_state\")\n at %s (through reference chain: %s)",
				k, classCreateRequest, p.loc(at), chain)}
		}
	}
	return req, nil
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

// bindOffsets reads ConnectorOffsets; offsets==nil means the field was absent or null.
func (p *jparser) bindOffsets(v *jvm.Value) (offsets []offsetEntry, present bool, err error) {
	if v == nil || v.Kind == jvm.Null {
		return nil, false, nil
	}
	if v.Kind != jvm.Object {
		return nil, true, p.mismatch(v, classOffsets, "")
	}
	for i, k := range v.Keys {
		el := v.Vals[i]
		chain := fmt.Sprintf("%s[%q]", classOffsets, k)
		if k != "offsets" {
			at := v.End
			if _, ok := v.Get("offsets"); ok && indexOf(v.Keys, "offsets") < i {
				at = el.End
			}
			return nil, true, &jvm.JacksonError{Msg: fmt.Sprintf("Unrecognized field %q (class %s), not marked as ignorable (one known property: \"offsets\")\n at %s (through reference chain: %s)",
				k, classOffsets, p.loc(at), chain)}
		}
		if el.Kind == jvm.Null {
			offsets = nil
			continue
		}
		if el.Kind != jvm.Array {
			return nil, true, p.mismatch(el, "java.util.ArrayList<"+classOffset+">", chain)
		}
		offsets = []offsetEntry{}
		for j, item := range el.Elems {
			ichain := fmt.Sprintf("%s->java.util.ArrayList[%d]", chain, j)
			if item.Kind == jvm.Null {
				offsets = append(offsets, offsetEntry{})
				continue
			}
			if item.Kind != jvm.Object {
				return nil, true, p.mismatch(item, classOffset, ichain)
			}
			var e offsetEntry
			for n, ik := range item.Keys {
				iv := item.Vals[n]
				fchain := fmt.Sprintf("%s->%s[%q]", ichain, classOffset, ik)
				if ik != "partition" && ik != "offset" {
					at := item.End
					if a, b := indexOf(item.Keys, "partition"), indexOf(item.Keys, "offset"); a >= 0 && a < n && b >= 0 && b < n {
						at = iv.End
					}
					return nil, true, &jvm.JacksonError{Msg: fmt.Sprintf("Unrecognized field %q (class %s), not marked as ignorable (2 known properties: \"partition\", \"offset\")\n at %s (through reference chain: %s)",
						ik, classOffset, p.loc(at), fchain)}
				}
				if iv.Kind == jvm.Null {
					continue
				}
				if iv.Kind != jvm.Object {
					return nil, true, p.mismatch(iv, "java.util.LinkedHashMap<java.lang.String,java.lang.Object>", fchain)
				}
				m := map[string]any{}
				for q, mk := range iv.Keys {
					m[mk] = native(iv.Vals[q])
				}
				if ik == "partition" {
					e.Partition = m
				} else {
					e.Offset = m
				}
			}
			offsets = append(offsets, e)
		}
	}
	return offsets, true, nil
}

type offsetEntry struct {
	Partition map[string]any
	Offset    map[string]any
}

// native converts to Go values (numbers as json.Number-like strings converted to int64/float64).
func native(v *jvm.Value) any {
	switch v.Kind {
	case jvm.Object:
		m := map[string]any{}
		for i, k := range v.Keys {
			m[k] = native(v.Vals[i])
		}
		return m
	case jvm.Array:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = native(e)
		}
		return out
	case jvm.String:
		return v.Text
	case jvm.Number:
		if n, err := strconv.ParseInt(v.Text, 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(v.Text, 64)
		return f
	case jvm.True:
		return true
	case jvm.False:
		return false
	}
	return nil
}

// bindTaskConfigs reads List<Map<String,String>> (internal task-config POST).
func (p *jparser) bindTaskConfigs(v *jvm.Value) ([]map[string]string, error) {
	if v == nil {
		return nil, &jvm.JacksonError{Msg: "No content to map due to end-of-input\n at " + jvm.RedactedSource + "line: 1]"}
	}
	if v.Kind == jvm.Null {
		return nil, nil
	}
	if v.Kind != jvm.Array {
		return nil, p.mismatch(v, "java.util.ArrayList<java.util.Map<java.lang.String,java.lang.String>>", "")
	}
	out := make([]map[string]string, 0, len(v.Elems))
	for i, el := range v.Elems {
		m, err := p.bindStringMap(el, fmt.Sprintf("java.util.ArrayList[%d]", i))
		if err != nil {
			return nil, err
		}
		if m == nil {
			out = append(out, nil)
			continue
		}
		out = append(out, m.plain())
	}
	return out, nil
}

// ---- shapes: where a body stops binding (Jackson binds while it reads, so it fails at the first value that
// cannot bind and never reads the rest; a large body of the wrong shape costs no more than its prefix) ----

// fitsStringMap is Map<String,String>: an object (or null) of scalars.
func fitsStringMap(stack []jvm.Frame, c byte) bool {
	switch len(stack) {
	case 0:
		return c == '{' || c == 'n'
	case 1:
		return c != '{' && c != '['
	}
	return true
}

// fitsTaskConfigs is List<Map<String,String>>.
func fitsTaskConfigs(stack []jvm.Frame, c byte) bool {
	switch len(stack) {
	case 0:
		return c == '[' || c == 'n'
	case 1:
		return c == '{' || c == 'n'
	case 2:
		return c != '{' && c != '['
	}
	return true
}

// fitsBean is a bean (CreateConnectorRequest, ConnectorOffsets): an object or null at the root.
func fitsBean(stack []jvm.Frame, c byte) bool { return len(stack) > 0 || c == '{' || c == 'n' }

// parseFitting parses a body bound as the type fits describes; stopped reports that the parse ended at a
// value that cannot bind, the last one of v.
func parseFitting(body []byte, fits func([]jvm.Frame, byte) bool) (v *jvm.Value, stopped bool, err error) {
	v, err = jvm.ParseJSONStreamFitting(body, fits)
	if errors.Is(err, jvm.ErrStopped) {
		return v, true, nil
	}
	return v, false, err
}

// boundStopped is the binding error of a stopped parse: a tree cut short never binds.
func boundStopped(stopped bool, err error) error {
	if stopped && err == nil {
		return errors.New("a request body cut short at a value that does not fit was bound")
	}
	return err
}
