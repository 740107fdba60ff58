package clickhouse

import (
	"fmt"
	"unsafe"

	"github.com/ClickHouse/ch-go/proto"
)

// leaf wraps a ch-go slice column; the reported type is the target's exact type name (e.g.
// DateTime64(3, 'UTC') encoded as Int64 ticks), whose encoding the storage column shares.
type sliceCol[T any] interface {
	~[]T
	Rows() int
	EncodeColumn(b *proto.Buffer)
	WriteColumn(w *proto.Writer)
}

type leaf[T any, C sliceCol[T]] struct {
	typ  proto.ColumnType
	data C
	conv func(any) (T, error)
	def  T // the type's default value (zero, except for Enum)
}

func newLeaf[T any, C sliceCol[T]](t proto.ColumnType, conv func(any) (T, error)) *leaf[T, C] {
	return &leaf[T, C]{typ: t, conv: conv}
}

func (c *leaf[T, C]) Type() proto.ColumnType       { return c.typ }
func (c *leaf[T, C]) Rows() int                    { return len(c.data) }
func (c *leaf[T, C]) EncodeColumn(b *proto.Buffer) { c.data.EncodeColumn(b) }
func (c *leaf[T, C]) WriteColumn(w *proto.Writer)  { c.data.WriteColumn(w) }
func (c *leaf[T, C]) Reset()                       { c.data = c.data[:0] }
func (c *leaf[T, C]) truncate(n int)               { c.data = c.data[:n] }
func (c *leaf[T, C]) appendDefault()               { c.data = append(c.data, c.def) }
func (c *leaf[T, C]) size() int                    { var z T; return len(c.data) * int(unsafe.Sizeof(z)) }
func (c *leaf[T, C]) appendValue(v any) error {
	if v == nil {
		c.appendDefault()
		return nil
	}
	x, err := c.conv(v)
	if err != nil {
		return err
	}
	c.data = append(c.data, x)
	return nil
}

type strCol struct {
	typ proto.ColumnType
	col proto.ColStr
}

func (c *strCol) Type() proto.ColumnType       { return c.typ }
func (c *strCol) Rows() int                    { return c.col.Rows() }
func (c *strCol) EncodeColumn(b *proto.Buffer) { c.col.EncodeColumn(b) }
func (c *strCol) WriteColumn(w *proto.Writer)  { c.col.WriteColumn(w) }
func (c *strCol) Reset()                       { c.col.Reset() }
func (c *strCol) appendDefault()               { c.col.Append("") }
func (c *strCol) size() int                    { return len(c.col.Buf) + len(c.col.Pos) }
func (c *strCol) truncate(n int) {
	c.col.Pos = c.col.Pos[:n]
	end := 0
	if n > 0 {
		end = c.col.Pos[n-1].End
	}
	c.col.Buf = c.col.Buf[:end]
}
func (c *strCol) appendValue(v any) error {
	switch x := v.(type) {
	case nil:
		c.col.Append("")
	case string:
		c.col.Append(x)
	case []byte:
		c.col.AppendBytes(x)
	default:
		b, err := toStringBytes(v)
		if err != nil {
			return err
		}
		c.col.AppendBytes(b)
	}
	return nil
}

type lcStrCol struct {
	typ proto.ColumnType
	col *proto.ColLowCardinality[string]
}

func (c *lcStrCol) Type() proto.ColumnType       { return c.typ }
func (c *lcStrCol) Rows() int                    { return c.col.Rows() }
func (c *lcStrCol) EncodeColumn(b *proto.Buffer) { c.col.EncodeColumn(b) }
func (c *lcStrCol) WriteColumn(w *proto.Writer)  { c.col.WriteColumn(w) }
func (c *lcStrCol) EncodeState(b *proto.Buffer)  { c.col.EncodeState(b) }
func (c *lcStrCol) Prepare() error               { return c.col.Prepare() }
func (c *lcStrCol) Reset()                       { c.col.Reset() }
func (c *lcStrCol) appendDefault()               { c.col.Append("") }
func (c *lcStrCol) size() int                    { return 2 * len(c.col.Values) }
func (c *lcStrCol) truncate(n int)               { c.col.Values = c.col.Values[:n] }
func (c *lcStrCol) appendValue(v any) error {
	switch x := v.(type) {
	case nil:
		c.col.Append("")
	case string:
		c.col.Append(x)
	default:
		b, err := toStringBytes(v)
		if err != nil {
			return err
		}
		c.col.Append(string(b))
	}
	return nil
}

type fixedStrCol struct {
	typ   proto.ColumnType
	width int
	buf   []byte
}

func (c *fixedStrCol) Type() proto.ColumnType { return c.typ }
func (c *fixedStrCol) Rows() int              { return len(c.buf) / c.width }
func (c *fixedStrCol) EncodeColumn(b *proto.Buffer) {
	b.Buf = append(b.Buf, c.buf...)
}
func (c *fixedStrCol) WriteColumn(w *proto.Writer) { w.ChainBuffer(c.EncodeColumn) }
func (c *fixedStrCol) Reset()                      { c.buf = c.buf[:0] }
func (c *fixedStrCol) size() int                   { return len(c.buf) }
func (c *fixedStrCol) truncate(n int)              { c.buf = c.buf[:n*c.width] }
func (c *fixedStrCol) appendDefault()              { c.buf = append(c.buf, make([]byte, c.width)...) }
func (c *fixedStrCol) appendValue(v any) error {
	if v == nil {
		c.appendDefault()
		return nil
	}
	b, err := toStringBytes(v)
	if err != nil {
		return err
	}
	if len(b) > c.width {
		return fmt.Errorf("%d bytes do not fit %s", len(b), c.typ)
	}
	c.buf = append(c.buf, b...)
	c.buf = append(c.buf, make([]byte, c.width-len(b))...)
	return nil
}
