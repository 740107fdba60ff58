// Package chtype parses ClickHouse type names such as "Map(String, Array(Nullable(Decimal(18, 4))))"
// or "Enum8('a' = 1, 'b,(' = 2)": the sink builds its columns from them and the test shim walks
// the Native format with them.
package chtype

import (
	"fmt"
	"strconv"
	"strings"
)

// Type is a column type as system.columns reports it, its Nullable and LowCardinality wrappers looked
// through.
type Type struct {
	Full     string   // as given
	Base     string   // without the wrappers, e.g. DateTime64(3, 'UTC')
	Name     string   // the base type's name, e.g. DateTime64
	Args     []string // the base type's top-level arguments, e.g. 3 and 'UTC'
	Nullable bool
}

// Parse reads a column type. A type with an unbalanced argument list is an error; its Base and Name are
// then the text after the wrappers.
func Parse(t string) (Type, error) {
	ct := Type{Full: t, Base: strings.TrimSpace(t)}
	for {
		name, args, err := Split(ct.Base)
		if err != nil {
			ct.Name = ct.Base
			return ct, err
		}
		if (name == "Nullable" || name == "LowCardinality") && len(args) == 1 {
			ct.Base = args[0]
			ct.Nullable = ct.Nullable || name == "Nullable"
			continue
		}
		ct.Name, ct.Args = name, args
		return ct, nil
	}
}

// Split splits "Name(a, b)" into Name and its top-level arguments, honouring nesting and quotes.
func Split(t string) (string, []string, error) {
	i := strings.IndexByte(t, '(')
	if i < 0 {
		return t, nil, nil
	}
	if !strings.HasSuffix(t, ")") {
		return "", nil, fmt.Errorf("bad type %q", t)
	}
	name, body := strings.TrimSpace(t[:i]), t[i+1:len(t)-1]
	var args []string
	depth, start := 0, 0
	var quote byte
	for j := 0; j < len(body); j++ {
		c := body[j]
		switch {
		case quote != 0:
			if c == '\\' {
				j++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '`' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(body[start:j]))
			start = j + 1
		}
	}
	return name, append(args, strings.TrimSpace(body[start:])), nil
}

// TupleElem splits a named tuple element "a Int32" into its name and type ("", "Int32" if unnamed).
func TupleElem(a string) (string, string) {
	a = strings.TrimSpace(a)
	if a != "" && (a[0] == '`' || a[0] == '"') {
		q := a[0]
		for i := 1; i < len(a); i++ {
			if a[i] == '\\' {
				i++
				continue
			}
			if a[i] == q {
				return strings.ReplaceAll(a[1:i], "\\"+string(q), string(q)), strings.TrimSpace(a[i+1:])
			}
		}
		return "", a
	}
	i := strings.IndexAny(a, " \t")
	if i <= 0 {
		return "", a
	}
	head, rest := a[:i], strings.TrimSpace(a[i+1:])
	if strings.ContainsAny(head, "(") || rest == "" || rest[0] < 'A' || rest[0] > 'Z' {
		return "", a
	}
	return head, rest
}

// Enum parses the arguments of Enum8/Enum16 ('name' = value, ...).
func Enum(args []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, a := range args {
		a = strings.TrimSpace(a)
		i := strings.LastIndexByte(a, '=')
		if i < 0 || len(a) < 2 || a[0] != '\'' {
			return nil, fmt.Errorf("bad enum element %q", a)
		}
		name, err := Unquote(strings.TrimSpace(a[:i]))
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(strings.TrimSpace(a[i+1:]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad enum element %q", a)
		}
		out[name] = n
	}
	return out, nil
}

// Unquote reads a single-quoted SQL string literal: a doubled quote or a backslash escapes.
func Unquote(s string) (string, error) {
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", fmt.Errorf("not a quoted string: %s", s)
	}
	var b strings.Builder
	body := s[1 : len(s)-1]
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && i+1 < len(body) {
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '0':
				b.WriteByte(0)
			default:
				b.WriteByte(body[i])
			}
			continue
		}
		if c == '\'' && i+1 < len(body) && body[i+1] == '\'' {
			i++
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}
