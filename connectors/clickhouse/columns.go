package clickhouse

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connectors/clickhouse/chtype"
)

// column is a typed ch-go input column built from the target column's ClickHouse type (as read from
// system.columns). Appends are all-or-nothing per row: the caller truncates every column back to the
// row count before a record whose conversion failed, so a bad record never shifts other rows.
type column interface {
	proto.ColInput
	Reset()
	appendValue(v any) error // nil appends NULL for Nullable, the type's default otherwise
	appendDefault()
	truncate(rows int)
	size() int // approximate encoded bytes
}

// preparer is a column with work to do before encoding (LowCardinality builds its dictionary).
type preparer interface{ Prepare() error }

// newColumn builds a column for a ClickHouse type name.
func newColumn(typ string) (column, error) {
	typ = strings.TrimSpace(typ)
	name, args, err := chtype.Split(typ)
	if err != nil {
		return nil, err
	}
	t := proto.ColumnType(typ)
	switch name {
	case "Int8":
		return newLeaf[int8, proto.ColInt8](t, func(v any) (int8, error) {
			n, err := intIn(v, math.MinInt8, math.MaxInt8, typ)
			return int8(n), err
		}), nil
	case "Int16":
		return newLeaf[int16, proto.ColInt16](t, func(v any) (int16, error) {
			n, err := intIn(v, math.MinInt16, math.MaxInt16, typ)
			return int16(n), err
		}), nil
	case "Int32":
		return newLeaf[int32, proto.ColInt32](t, func(v any) (int32, error) {
			n, err := intIn(v, math.MinInt32, math.MaxInt32, typ)
			return int32(n), err
		}), nil
	case "Int64":
		return newLeaf[int64, proto.ColInt64](t, toInt64), nil
	case "UInt8":
		return newLeaf[uint8, proto.ColUInt8](t, func(v any) (uint8, error) {
			if b, ok := v.(bool); ok { // Bool-ish UInt8 flags (is_deleted)
				if b {
					return 1, nil
				}
				return 0, nil
			}
			n, err := uintIn(v, math.MaxUint8, typ)
			return uint8(n), err
		}), nil
	case "UInt16":
		return newLeaf[uint16, proto.ColUInt16](t, func(v any) (uint16, error) {
			n, err := uintIn(v, math.MaxUint16, typ)
			return uint16(n), err
		}), nil
	case "UInt32":
		return newLeaf[uint32, proto.ColUInt32](t, func(v any) (uint32, error) {
			n, err := uintIn(v, math.MaxUint32, typ)
			return uint32(n), err
		}), nil
	case "UInt64":
		return newLeaf[uint64, proto.ColUInt64](t, toUint64), nil
	case "Int128":
		return newLeaf[proto.Int128, proto.ColInt128](t, func(v any) (proto.Int128, error) {
			w, err := bigWords(v, 2, true, typ)
			return proto.Int128{Low: w[0], High: w[1]}, err
		}), nil
	case "UInt128":
		return newLeaf[proto.UInt128, proto.ColUInt128](t, func(v any) (proto.UInt128, error) {
			w, err := bigWords(v, 2, false, typ)
			return proto.UInt128{Low: w[0], High: w[1]}, err
		}), nil
	case "Int256":
		return newLeaf[proto.Int256, proto.ColInt256](t, func(v any) (proto.Int256, error) {
			w, err := bigWords(v, 4, true, typ)
			return proto.Int256{Low: proto.UInt128{Low: w[0], High: w[1]}, High: proto.UInt128{Low: w[2], High: w[3]}}, err
		}), nil
	case "UInt256":
		return newLeaf[proto.UInt256, proto.ColUInt256](t, func(v any) (proto.UInt256, error) {
			w, err := bigWords(v, 4, false, typ)
			return proto.UInt256{Low: proto.UInt128{Low: w[0], High: w[1]}, High: proto.UInt128{Low: w[2], High: w[3]}}, err
		}), nil
	case "Float32":
		return newLeaf[float32, proto.ColFloat32](t, func(v any) (float32, error) {
			f, err := toFloat64(v)
			return float32(f), err
		}), nil
	case "Float64":
		return newLeaf[float64, proto.ColFloat64](t, toFloat64), nil
	case "Bool":
		return newLeaf[bool, proto.ColBool](t, toBool), nil
	case "String":
		return &strCol{typ: t}, nil
	case "FixedString":
		n, err := intArg(args, 0, typ)
		if err != nil {
			return nil, err
		}
		return &fixedStrCol{typ: t, width: n}, nil
	case "UUID":
		return newLeaf[uuid.UUID, proto.ColUUID](t, toUUID), nil
	case "Date":
		return newLeaf[uint16, proto.ColUInt16](t, func(v any) (uint16, error) {
			d, err := toDays(v)
			if err != nil {
				return 0, err
			}
			if d < 0 || d > math.MaxUint16 {
				return 0, fmt.Errorf("date out of range for Date")
			}
			return uint16(d), nil
		}), nil
	case "Date32":
		return newLeaf[int32, proto.ColInt32](t, func(v any) (int32, error) {
			d, err := toDays(v)
			return int32(d), err
		}), nil
	case "DateTime":
		loc, err := tzArg(args, 0)
		if err != nil {
			return nil, err
		}
		return newLeaf[uint32, proto.ColUInt32](t, func(v any) (uint32, error) {
			var s int64
			switch v.(type) {
			case string, time.Time:
				tm, err := toTime(v, loc)
				if err != nil {
					return 0, err
				}
				s = tm.Unix()
			default:
				n, err := toInt64(v) // epoch seconds, as the official sink
				if err != nil {
					return 0, err
				}
				s = n
			}
			if s < 0 || s > math.MaxUint32 {
				return 0, fmt.Errorf("%d out of range for DateTime", s)
			}
			return uint32(s), nil
		}), nil
	case "DateTime64":
		p, err := intArg(args, 0, typ)
		if err != nil {
			return nil, err
		}
		if p < 0 || p > 9 {
			return nil, fmt.Errorf("bad precision in %s", typ)
		}
		loc, err := tzArg(args, 1)
		if err != nil {
			return nil, err
		}
		scale := int64(math.Pow10(9 - p))
		return newLeaf[int64, proto.ColInt64](t, func(v any) (int64, error) {
			switch v.(type) {
			case string, time.Time:
				tm, err := toTime(v, loc)
				if err != nil {
					return 0, err
				}
				// Exact tick count without overflowing UnixNano for far dates.
				return tm.Unix()*int64(math.Pow10(p)) + int64(tm.Nanosecond())/scale, nil
			}
			return toInt64(v) // raw ticks at the column's precision, as the official sink
		}), nil
	case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		var prec, scale int
		switch name {
		case "Decimal":
			if prec, err = intArg(args, 0, typ); err != nil {
				return nil, err
			}
			if scale, err = intArg(args, 1, typ); err != nil {
				return nil, err
			}
		default:
			prec = map[string]int{"Decimal32": 9, "Decimal64": 18, "Decimal128": 38, "Decimal256": 76}[name]
			if scale, err = intArg(args, 0, typ); err != nil {
				return nil, err
			}
		}
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(prec)), nil)
		check := func(v any) (*big.Int, error) {
			u, err := toDecimal(v, scale)
			if err != nil {
				return nil, err
			}
			if new(big.Int).Abs(u).Cmp(limit) >= 0 {
				return nil, fmt.Errorf("%v does not fit %s", v, typ)
			}
			return u, nil
		}
		switch {
		case prec <= 9:
			return newLeaf[int32, proto.ColInt32](t, func(v any) (int32, error) {
				u, err := check(v)
				if err != nil {
					return 0, err
				}
				return int32(u.Int64()), nil
			}), nil
		case prec <= 18:
			return newLeaf[int64, proto.ColInt64](t, func(v any) (int64, error) {
				u, err := check(v)
				if err != nil {
					return 0, err
				}
				return u.Int64(), nil
			}), nil
		case prec <= 38:
			return newLeaf[proto.Int128, proto.ColInt128](t, func(v any) (proto.Int128, error) {
				u, err := check(v)
				if err != nil {
					return proto.Int128{}, err
				}
				w, err := bigWords(u, 2, true, typ)
				return proto.Int128{Low: w[0], High: w[1]}, err
			}), nil
		default:
			return newLeaf[proto.Int256, proto.ColInt256](t, func(v any) (proto.Int256, error) {
				u, err := check(v)
				if err != nil {
					return proto.Int256{}, err
				}
				w, err := bigWords(u, 4, true, typ)
				return proto.Int256{Low: proto.UInt128{Low: w[0], High: w[1]}, High: proto.UInt128{Low: w[2], High: w[3]}}, err
			}), nil
		}
	case "Enum8", "Enum16":
		values, err := chtype.Enum(args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", typ, err)
		}
		conv := func(v any) (int64, error) {
			if s, ok := v.(string); ok {
				if n, ok := values[s]; ok {
					return n, nil
				}
				return 0, fmt.Errorf("%q is not a value of %s", s, typ)
			}
			n, err := toInt64(v)
			if err != nil {
				return 0, err
			}
			for _, x := range values {
				if x == n {
					return n, nil
				}
			}
			return 0, fmt.Errorf("%d is not a value of %s", n, typ)
		}
		// The default of an Enum is its smallest value.
		first := int64(math.MaxInt64)
		for _, x := range values {
			first = min(first, x)
		}
		if name == "Enum8" {
			c := newLeaf[int8, proto.ColInt8](t, func(v any) (int8, error) { n, err := conv(v); return int8(n), err })
			c.def = int8(first)
			return c, nil
		}
		c := newLeaf[int16, proto.ColInt16](t, func(v any) (int16, error) { n, err := conv(v); return int16(n), err })
		c.def = int16(first)
		return c, nil
	case "IPv4":
		return newLeaf[proto.IPv4, proto.ColIPv4](t, func(v any) (proto.IPv4, error) {
			if n, err := uintIn(v, math.MaxUint32, typ); err == nil {
				return proto.IPv4(n), nil
			}
			a, err := toIP(v)
			if err != nil || !a.Is4() {
				return 0, fmt.Errorf("%v is not an IPv4 address", v)
			}
			return proto.ToIPv4(a), nil
		}), nil
	case "IPv6":
		return newLeaf[proto.IPv6, proto.ColIPv6](t, func(v any) (proto.IPv6, error) {
			a, err := toIP(v)
			if err != nil {
				return proto.IPv6{}, err
			}
			return proto.IPv6(a.As16()), nil
		}), nil
	case "Nullable":
		inner, err := newColumn(args[0])
		if err != nil {
			return nil, err
		}
		return &nullCol{typ: t, inner: inner}, nil
	case "LowCardinality":
		in := strings.TrimSpace(args[0])
		if in == "String" {
			return &lcStrCol{typ: t, col: new(proto.ColStr).LowCardinality()}, nil
		}
		// Other dictionaries (e.g. LowCardinality(Nullable(String)), which ch-go encodes wrongly) are
		// sent as their plain type; the server converts (input_format_native_allow_types_conversion).
		return newColumn(in)
	case "Array":
		inner, err := newColumn(args[0])
		if err != nil {
			return nil, err
		}
		return &arrCol{typ: t, inner: inner}, nil
	case "Map":
		if len(args) != 2 {
			return nil, fmt.Errorf("bad type %s", typ)
		}
		k, err := newColumn(args[0])
		if err != nil {
			return nil, err
		}
		v, err := newColumn(args[1])
		if err != nil {
			return nil, err
		}
		return &mapCol{typ: t, keys: k, vals: v}, nil
	case "Tuple":
		tc := &tupleCol{typ: t}
		for _, a := range args {
			n, et := chtype.TupleElem(a)
			c, err := newColumn(et)
			if err != nil {
				return nil, err
			}
			tc.names = append(tc.names, n)
			tc.elems = append(tc.elems, c)
		}
		return tc, nil
	case "SimpleAggregateFunction":
		if len(args) != 2 {
			return nil, fmt.Errorf("bad type %s", typ)
		}
		return newColumn(args[1])
	}
	return nil, fmt.Errorf("unsupported ClickHouse type %s", typ)
}

func intArg(args []string, i int, typ string) (int, error) {
	if i >= len(args) {
		return 0, fmt.Errorf("bad type %s", typ)
	}
	n, err := strconv.Atoi(strings.TrimSpace(args[i]))
	if err != nil {
		return 0, fmt.Errorf("bad type %s", typ)
	}
	return n, nil
}

func tzArg(args []string, i int) (*time.Location, error) {
	if i >= len(args) {
		return time.UTC, nil
	}
	name := strings.Trim(strings.TrimSpace(args[i]), "'")
	return time.LoadLocation(name)
}

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

func toUUID(v any) (uuid.UUID, error) {
	switch x := v.(type) {
	case string:
		return uuid.Parse(strings.TrimSpace(x))
	case []byte:
		if len(x) == 16 {
			return uuid.FromBytes(x)
		}
		return uuid.ParseBytes(x)
	case uuid.UUID:
		return x, nil
	case [16]byte:
		return uuid.UUID(x), nil
	}
	return uuid.UUID{}, fmt.Errorf("cannot convert %T to a UUID", v)
}

// toDays converts a Connect Date (time.Time), epoch days (int32, as the official sink) or a date string.
func toDays(v any) (int64, error) {
	switch x := v.(type) {
	case time.Time:
		y, m, d := x.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400, nil
	case string:
		t, err := toTime(x, time.UTC)
		if err != nil {
			return 0, err
		}
		return toDays(t)
	}
	return toInt64(v)
}

// bigWords converts an integer value to n little-endian 64-bit two's-complement words.
func bigWords(v any, n int, signed bool, typ string) ([]uint64, error) {
	var b *big.Int
	switch x := v.(type) {
	case *big.Int:
		b = x
	case string:
		var ok bool
		if b, ok = new(big.Int).SetString(strings.TrimSpace(x), 10); !ok {
			return make([]uint64, n), fmt.Errorf("cannot parse %q as an integer", x)
		}
	case uint64:
		b = new(big.Int).SetUint64(x)
	default:
		i, err := toInt64(v)
		if err != nil {
			return make([]uint64, n), err
		}
		b = big.NewInt(i)
	}
	bits := uint(64 * n)
	lim := new(big.Int).Lsh(big.NewInt(1), bits)
	if signed {
		half := new(big.Int).Rsh(lim, 1)
		if b.Cmp(half) >= 0 || b.Cmp(new(big.Int).Neg(half)) < 0 {
			return make([]uint64, n), fmt.Errorf("%s out of range for %s", b, typ)
		}
	} else if b.Sign() < 0 || b.Cmp(lim) >= 0 {
		return make([]uint64, n), fmt.Errorf("%s out of range for %s", b, typ)
	}
	u := new(big.Int).Set(b)
	if u.Sign() < 0 {
		u.Add(u, lim)
	}
	words := make([]uint64, n)
	mask := new(big.Int).SetUint64(math.MaxUint64)
	for i := 0; i < n; i++ {
		words[i] = new(big.Int).And(u, mask).Uint64()
		u.Rsh(u, 64)
	}
	return words, nil
}
