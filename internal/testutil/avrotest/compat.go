package avrotest

import (
	"fmt"
	"sort"
	"strings"
)

// compatibility is the reader/writer check of Python avro's ReaderWriterCompatibilityChecker, which
// Karapace uses: the messages of the incompatibilities found (a set there; sorted here).
type compatibility struct {
	seen     map[[2]*avroType]bool
	messages map[string]bool
}

func incompatibilities(reader, writer *avroType) []string {
	c := &compatibility{seen: map[[2]*avroType]bool{}, messages: map[string]bool{}}
	c.check(reader, writer)
	out := make([]string, 0, len(c.messages))
	for m := range c.messages {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// check reports whether the reader can read what the writer writes, recording why not.
func (c *compatibility) check(reader, writer *avroType) bool {
	pair := [2]*avroType{reader, writer}
	if c.seen[pair] { // recursion in progress or already done
		return true
	}
	c.seen[pair] = true
	before := len(c.messages)
	c.calc(reader, writer)
	return len(c.messages) == before
}

func (c *compatibility) fail(msg string) { c.messages[msg] = true }

func (c *compatibility) mismatch(reader, writer *avroType) {
	c.fail(fmt.Sprintf("reader type: %s not compatible with writer type: %s", reader.typ, writer.typ))
}

func (c *compatibility) calc(reader, writer *avroType) {
	if reader.typ == writer.typ {
		switch reader.typ {
		case "array":
			c.check(reader.items, writer.items)
		case "map":
			c.check(reader.values, writer.values)
		case "fixed":
			c.names(reader, writer)
			if reader.size != writer.size {
				c.fail(fmt.Sprintf("expected: %d, found: %d", writer.size, reader.size))
			}
		case "enum":
			c.names(reader, writer)
			have := map[string]bool{}
			for _, s := range reader.symbols {
				have[s] = true
			}
			var extra []string
			for _, s := range writer.symbols {
				if !have[s] {
					extra = append(extra, "'"+s+"'")
				}
			}
			if len(extra) > 0 && !(reader.enumDflt != "" && have[reader.enumDflt]) {
				c.fail("{" + strings.Join(extra, ", ") + "}")
			}
		case "record":
			c.names(reader, writer)
			c.fields(reader, writer)
		case "union":
			for _, wb := range writer.branches {
				if !c.probe(reader, wb) {
					c.fail("reader union lacking writer type: " + strings.ToUpper(wb.typ))
				}
			}
		}
		return
	}
	if writer.typ == "union" {
		for _, wb := range writer.branches {
			c.check(reader, wb)
		}
		return
	}
	promotes := map[string][]string{"long": {"int"}, "float": {"int", "long"}, "double": {"int", "long", "float"},
		"bytes": {"string"}, "string": {"bytes"}}
	if reader.typ == "union" {
		for _, rb := range reader.branches {
			if c.probe(rb, writer) {
				return
			}
		}
		c.fail("reader union lacking writer type " + writer.typ)
		return
	}
	for _, w := range promotes[reader.typ] {
		if w == writer.typ {
			return
		}
	}
	c.mismatch(reader, writer)
}

// probe checks a pair without recording its messages (a union branch that does not match is no error).
func (c *compatibility) probe(reader, writer *avroType) bool {
	sub := &compatibility{seen: map[[2]*avroType]bool{}, messages: map[string]bool{}}
	return sub.check(reader, writer)
}

func (c *compatibility) names(reader, writer *avroType) {
	if reader.name == writer.name {
		return
	}
	for _, a := range reader.aliases {
		if a == writer.fullName {
			return
		}
	}
	c.fail("expected: " + writer.fullName)
}

func (c *compatibility) fields(reader, writer *avroType) {
	for _, rf := range reader.fields {
		wf := lookupField(writer, rf)
		switch {
		case wf != nil:
			c.check(rf.typ, wf.typ)
		case rf.hasDefault:
		case rf.typ.typ == "enum" && rf.typ.enumDflt != "":
			c.check(rf.typ, writer)
		default:
			c.fail(rf.name)
		}
	}
}

func lookupField(writer *avroType, rf avroField) *avroField {
	for i := range writer.fields {
		if writer.fields[i].name == rf.name {
			return &writer.fields[i]
		}
	}
	for _, a := range rf.aliases {
		for i := range writer.fields {
			if writer.fields[i].name == a {
				return &writer.fields[i]
			}
		}
	}
	return nil
}
