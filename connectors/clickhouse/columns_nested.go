package clickhouse

import (
	"fmt"
	"strconv"

	"github.com/ClickHouse/ch-go/proto"
)

type nullCol struct {
	typ   proto.ColumnType
	nulls []uint8
	inner column
}

func (c *nullCol) Type() proto.ColumnType { return c.typ }
func (c *nullCol) Rows() int              { return len(c.nulls) }
func (c *nullCol) EncodeColumn(b *proto.Buffer) {
	b.Buf = append(b.Buf, c.nulls...)
	c.inner.EncodeColumn(b)
}
func (c *nullCol) WriteColumn(w *proto.Writer) { w.ChainBuffer(c.EncodeColumn) }
func (c *nullCol) EncodeState(b *proto.Buffer) { encodeState(c.inner, b) }
func (c *nullCol) Prepare() error              { return prepare(c.inner) }
func (c *nullCol) Reset()                      { c.nulls = c.nulls[:0]; c.inner.Reset() }
func (c *nullCol) size() int                   { return len(c.nulls) + c.inner.size() }
func (c *nullCol) truncate(n int)              { c.nulls = c.nulls[:n]; c.inner.truncate(n) }
func (c *nullCol) appendDefault()              { c.nulls = append(c.nulls, 1); c.inner.appendDefault() }
func (c *nullCol) appendValue(v any) error {
	if v == nil {
		c.appendDefault()
		return nil
	}
	if err := c.inner.appendValue(v); err != nil {
		return err
	}
	c.nulls = append(c.nulls, 0)
	return nil
}

type arrCol struct {
	typ     proto.ColumnType
	offsets []uint64
	inner   column
}

func (c *arrCol) Type() proto.ColumnType { return c.typ }
func (c *arrCol) Rows() int              { return len(c.offsets) }
func (c *arrCol) EncodeColumn(b *proto.Buffer) {
	proto.ColUInt64(c.offsets).EncodeColumn(b)
	if c.inner.Rows() > 0 {
		c.inner.EncodeColumn(b)
	}
}
func (c *arrCol) WriteColumn(w *proto.Writer) { w.ChainBuffer(c.EncodeColumn) }
func (c *arrCol) EncodeState(b *proto.Buffer) { encodeState(c.inner, b) }
func (c *arrCol) Prepare() error              { return prepare(c.inner) }
func (c *arrCol) Reset()                      { c.offsets = c.offsets[:0]; c.inner.Reset() }
func (c *arrCol) size() int                   { return 8*len(c.offsets) + c.inner.size() }
func (c *arrCol) end() int {
	if len(c.offsets) == 0 {
		return 0
	}
	return int(c.offsets[len(c.offsets)-1])
}
func (c *arrCol) truncate(n int) {
	c.offsets = c.offsets[:n]
	c.inner.truncate(c.end())
}
func (c *arrCol) appendDefault() { c.offsets = append(c.offsets, uint64(c.end())) }
func (c *arrCol) appendValue(v any) error {
	if v == nil {
		c.appendDefault()
		return nil
	}
	elems, ok := asSlice(v)
	if !ok {
		return fmt.Errorf("cannot convert %T to %s", v, c.typ)
	}
	start := c.end()
	for i, e := range elems {
		if err := c.inner.appendValue(e); err != nil {
			c.inner.truncate(start)
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	c.offsets = append(c.offsets, uint64(start+len(elems)))
	return nil
}

type mapCol struct {
	typ        proto.ColumnType
	offsets    []uint64
	keys, vals column
}

func (c *mapCol) Type() proto.ColumnType { return c.typ }
func (c *mapCol) Rows() int              { return len(c.offsets) }
func (c *mapCol) EncodeColumn(b *proto.Buffer) {
	proto.ColUInt64(c.offsets).EncodeColumn(b)
	if c.keys.Rows() > 0 {
		c.keys.EncodeColumn(b)
		c.vals.EncodeColumn(b)
	}
}
func (c *mapCol) WriteColumn(w *proto.Writer) { w.ChainBuffer(c.EncodeColumn) }
func (c *mapCol) EncodeState(b *proto.Buffer) { encodeState(c.keys, b); encodeState(c.vals, b) }
func (c *mapCol) Prepare() error {
	if err := prepare(c.keys); err != nil {
		return err
	}
	return prepare(c.vals)
}
func (c *mapCol) Reset()    { c.offsets = c.offsets[:0]; c.keys.Reset(); c.vals.Reset() }
func (c *mapCol) size() int { return 8*len(c.offsets) + c.keys.size() + c.vals.size() }
func (c *mapCol) end() int {
	if len(c.offsets) == 0 {
		return 0
	}
	return int(c.offsets[len(c.offsets)-1])
}
func (c *mapCol) truncate(n int) {
	c.offsets = c.offsets[:n]
	c.keys.truncate(c.end())
	c.vals.truncate(c.end())
}
func (c *mapCol) appendDefault() { c.offsets = append(c.offsets, uint64(c.end())) }
func (c *mapCol) appendValue(v any) error {
	if v == nil {
		c.appendDefault()
		return nil
	}
	entries, ok := asMap(v)
	if !ok {
		return fmt.Errorf("cannot convert %T to %s", v, c.typ)
	}
	start := c.end()
	for _, e := range entries {
		if err := c.keys.appendValue(e.k); err != nil {
			c.keys.truncate(start)
			c.vals.truncate(start)
			return fmt.Errorf("key %v: %w", e.k, err)
		}
		if err := c.vals.appendValue(e.v); err != nil {
			c.keys.truncate(start)
			c.vals.truncate(start)
			return fmt.Errorf("value of %v: %w", e.k, err)
		}
	}
	c.offsets = append(c.offsets, uint64(start+len(entries)))
	return nil
}

type tupleCol struct {
	typ   proto.ColumnType
	names []string
	elems []column
	rows  int
}

func (c *tupleCol) Type() proto.ColumnType { return c.typ }
func (c *tupleCol) Rows() int              { return c.rows }
func (c *tupleCol) EncodeColumn(b *proto.Buffer) {
	for _, e := range c.elems {
		e.EncodeColumn(b)
	}
}
func (c *tupleCol) WriteColumn(w *proto.Writer) { w.ChainBuffer(c.EncodeColumn) }
func (c *tupleCol) EncodeState(b *proto.Buffer) {
	for _, e := range c.elems {
		encodeState(e, b)
	}
}
func (c *tupleCol) Prepare() error {
	for _, e := range c.elems {
		if err := prepare(e); err != nil {
			return err
		}
	}
	return nil
}
func (c *tupleCol) size() int {
	n := 0
	for _, e := range c.elems {
		n += e.size()
	}
	return n
}
func (c *tupleCol) Reset() {
	c.rows = 0
	for _, e := range c.elems {
		e.Reset()
	}
}
func (c *tupleCol) truncate(n int) {
	c.rows = n
	for _, e := range c.elems {
		e.truncate(n)
	}
}
func (c *tupleCol) appendDefault() {
	for _, e := range c.elems {
		e.appendDefault()
	}
	c.rows++
}
func (c *tupleCol) appendValue(v any) error {
	if v == nil {
		c.appendDefault()
		return nil
	}
	get, err := c.accessor(v)
	if err != nil {
		return err
	}
	for i, e := range c.elems {
		if err := e.appendValue(get(i)); err != nil {
			for _, done := range c.elems[:i] {
				done.truncate(c.rows)
			}
			return fmt.Errorf("tuple element %d: %w", i+1, err)
		}
	}
	c.rows++
	return nil
}

func (c *tupleCol) accessor(v any) (func(i int) any, error) {
	if elems, ok := asSlice(v); ok {
		if len(elems) != len(c.elems) {
			return nil, fmt.Errorf("%d values for %s", len(elems), c.typ)
		}
		return func(i int) any { return elems[i] }, nil
	}
	if entries, ok := asMap(v); ok {
		m := make(map[string]any, len(entries))
		for _, e := range entries {
			m[fmt.Sprint(e.k)] = e.v
		}
		return func(i int) any {
			if c.names[i] != "" {
				return m[c.names[i]]
			}
			return m[strconv.Itoa(i+1)]
		}, nil
	}
	return nil, fmt.Errorf("cannot convert %T to %s", v, c.typ)
}

func encodeState(c column, b *proto.Buffer) {
	if s, ok := c.(proto.StateEncoder); ok {
		s.EncodeState(b)
	}
}

func prepare(c column) error {
	if p, ok := c.(preparer); ok {
		return p.Prepare()
	}
	return nil
}
