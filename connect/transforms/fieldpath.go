package transforms

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

const fieldSyntaxVersionKey = "field.syntax.version"

func fieldSyntaxKey() connect.ConfigKey {
	return connect.ConfigKey{Name: fieldSyntaxVersionKey, Type: connect.ConfigString, Default: "V1", Importance: connect.High,
		Validator: connect.InIgnoreCase("V1", "V2"),
		Doc:       "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access the elements at the root level of the struct or map. If set to `V2`, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield `baz` from a field named \"foo.bar\" in a struct/map the following format can be used to access its elements: \"`foo.bar`.baz\"."}
}

// fieldPath is the JVM's SingleFieldPath (KIP-821).
type fieldPath struct{ steps []string }

func newFieldPath(path string, version string) (fieldPath, error) {
	if !strings.EqualFold(version, "V2") {
		return fieldPath{steps: []string{path}}, nil
	}
	var steps []string
	idx := 0
	for idx < len(path) && idx >= 0 {
		if path[idx] != '`' {
			start := idx
			j := strings.IndexByte(path[idx:], '.')
			if j >= 0 {
				idx += j
				steps = append(steps, path[start:idx])
				idx++
			} else {
				steps = append(steps, path[start:])
				idx = -1
			}
			continue
		}
		backtickAt := idx
		idx++
		var field strings.Builder
		start := idx
		for {
			j := strings.IndexByte(path[idx:], '`')
			if j < 0 {
				return fieldPath{}, incompleteBacktick(path, backtickAt)
			}
			idx += j
			escaped := path[idx-1] == '\\'
			if idx >= len(path)-1 {
				if escaped {
					return fieldPath{}, incompleteBacktick(path, backtickAt)
				}
				field.WriteString(path[start:idx])
				steps = append(steps, field.String())
				idx++
				break
			}
			if path[idx+1] != '.' {
				idx++
				continue
			}
			if escaped {
				field.WriteString(path[start : idx-1])
				field.WriteByte('`')
				idx++
				start = idx
				continue
			}
			field.WriteString(path[start:idx])
			steps = append(steps, field.String())
			idx += 2
			break
		}
	}
	if path != "" && path[len(path)-1] == '.' {
		steps = append(steps, "")
	}
	if len(steps) == 0 {
		steps = []string{""}
	}
	return fieldPath{steps: steps}, nil
}

func incompleteBacktick(path string, at int) error {
	return &connect.ConfigError{Message: fmt.Sprintf("Incomplete backtick pair in path: [%s], consider adding a backslash before backtick at position %d to escape it", path, at)}
}

func (p fieldPath) last() string      { return p.steps[len(p.steps)-1] }
func (p fieldPath) parents() []string { return p.steps[:len(p.steps)-1] }

func (p fieldPath) fieldFrom(s *connect.Schema) (connect.Field, bool) {
	if s == nil {
		return connect.Field{}, false
	}
	cur := s
	for _, st := range p.parents() {
		f, ok := cur.Field(st)
		if !ok {
			return connect.Field{}, false
		}
		cur = f.Schema
	}
	return cur.Field(p.last())
}

func (p fieldPath) valueFromStruct(s *connect.Struct, withDefault bool) (any, error) {
	if s == nil {
		return nil, nil
	}
	cur := s
	for _, st := range p.parents() {
		if !cur.Has(st) {
			return nil, nil
		}
		sub, err := requireStructOrNull(cur.Get(st), "nested field access")
		if err != nil {
			return nil, err
		}
		if sub == nil {
			return nil, nil
		}
		cur = sub
	}
	if !cur.Has(p.last()) {
		return nil, nil
	}
	return structGet(cur, p.last(), withDefault), nil
}

func (p fieldPath) valueFromMap(m map[string]any) (any, error) {
	if m == nil {
		return nil, nil
	}
	cur := m
	for _, st := range p.parents() {
		sub, err := requireMapOrNull(cur[st], "nested field access")
		if err != nil {
			return nil, err
		}
		if sub == nil {
			return nil, nil
		}
		cur = sub
	}
	return cur[p.last()], nil
}
