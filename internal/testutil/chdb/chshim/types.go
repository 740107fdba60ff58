package chshim

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ClickHouse/ch-go/proto"

	"github.com/connectd/connectd/connectors/clickhouse/chtype"
)

// colType is a parsed ClickHouse type, enough to walk its Native serialization
// (with the default serialization kinds) without decoding values. The shim uses
// it to splice column bytes between the TCP block layout (BlockInfo, custom
// serialization flag) and the Native format (revision 0) that chDB reads and writes.
type colType struct {
	kind  kind
	size  int        // fixed width in bytes for kindFixed
	elems []*colType // Nullable/Array/LowCardinality: 1; Tuple: n; Map: key, value
}

type kind int

const (
	kindFixed kind = iota
	kindString
	kindNullable
	kindArray
	kindTuple
	kindMap
	kindLowCardinality
)

var fixedSizes = map[string]int{
	"Int8": 1, "UInt8": 1, "Bool": 1, "Enum8": 1, "Nothing": 1,
	"Int16": 2, "UInt16": 2, "Date": 2, "Enum16": 2, "BFloat16": 2,
	"Int32": 4, "UInt32": 4, "Float32": 4, "Date32": 4, "DateTime": 4, "IPv4": 4, "Decimal32": 4, "Time": 4,
	"Int64": 8, "UInt64": 8, "Float64": 8, "DateTime64": 8, "Decimal64": 8, "Time64": 8,
	"Int128": 16, "UInt128": 16, "UUID": 16, "IPv6": 16, "Decimal128": 16,
	"Int256": 32, "UInt256": 32, "Decimal256": 32,
}

// parseType parses a ClickHouse type name such as
// "Map(String, Array(Nullable(Decimal(18, 4))))" or "Enum8('a' = 1, 'b,(' = 2)".
func parseType(t string) (*colType, error) {
	t = strings.TrimSpace(t)
	name, args, err := chtype.Split(t)
	if err != nil {
		return nil, fmt.Errorf("chshim: %w", err)
	}
	if n, ok := fixedSizes[name]; ok {
		return &colType{kind: kindFixed, size: n}, nil
	}
	if strings.HasPrefix(name, "Interval") {
		return &colType{kind: kindFixed, size: 8}, nil
	}
	sub := func(i int) (*colType, error) {
		_, et := chtype.TupleElem(args[i])
		return parseType(et)
	}
	switch name {
	case "String", "JSONString":
		return &colType{kind: kindString}, nil
	case "FixedString":
		if len(args) != 1 {
			return nil, fmt.Errorf("chshim: bad type %q", t)
		}
		n, err := strconv.Atoi(strings.TrimSpace(args[0]))
		if err != nil {
			return nil, fmt.Errorf("chshim: bad type %q: %w", t, err)
		}
		return &colType{kind: kindFixed, size: n}, nil
	case "Decimal":
		p := 10
		if len(args) > 0 {
			if p, err = strconv.Atoi(strings.TrimSpace(args[0])); err != nil {
				return nil, fmt.Errorf("chshim: bad type %q: %w", t, err)
			}
		}
		switch {
		case p <= 9:
			return &colType{kind: kindFixed, size: 4}, nil
		case p <= 18:
			return &colType{kind: kindFixed, size: 8}, nil
		case p <= 38:
			return &colType{kind: kindFixed, size: 16}, nil
		default:
			return &colType{kind: kindFixed, size: 32}, nil
		}
	case "Nullable", "Array", "LowCardinality":
		if len(args) != 1 {
			return nil, fmt.Errorf("chshim: bad type %q", t)
		}
		e, err := sub(0)
		if err != nil {
			return nil, err
		}
		k := map[string]kind{"Nullable": kindNullable, "Array": kindArray, "LowCardinality": kindLowCardinality}[name]
		return &colType{kind: k, elems: []*colType{e}}, nil
	case "Tuple", "Map", "Point", "Ring", "LineString", "Polygon", "MultiPolygon", "MultiLineString":
		switch name {
		case "Point":
			return parseType("Tuple(Float64, Float64)")
		case "Ring", "LineString":
			return parseType("Array(Point)")
		case "Polygon", "MultiLineString":
			return parseType("Array(Ring)")
		case "MultiPolygon":
			return parseType("Array(Polygon)")
		}
		c := &colType{kind: kindTuple}
		if name == "Map" {
			if len(args) != 2 {
				return nil, fmt.Errorf("chshim: bad type %q", t)
			}
			c.kind = kindMap
		}
		for i := range args {
			e, err := sub(i)
			if err != nil {
				return nil, err
			}
			c.elems = append(c.elems, e)
		}
		return c, nil
	case "SimpleAggregateFunction":
		if len(args) != 2 {
			return nil, fmt.Errorf("chshim: bad type %q", t)
		}
		return sub(1)
	}
	return nil, fmt.Errorf("chshim: type %q is not supported by the test shim", t)
}

// copyPrefix copies the serialization state prefix of the column tree.
func (c *colType) copyPrefix(r *proto.Reader, w *proto.Buffer) error {
	switch c.kind {
	case kindLowCardinality:
		if err := copyN(r, w, 8); err != nil { // key serialization version
			return err
		}
		return c.elems[0].copyPrefix(r, w)
	case kindNullable, kindArray, kindTuple, kindMap:
		for _, e := range c.elems {
			if err := e.copyPrefix(r, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyData copies the serialized data of rows values.
func (c *colType) copyData(r *proto.Reader, w *proto.Buffer, rows int) error {
	if rows == 0 {
		return nil
	}
	switch c.kind {
	case kindFixed:
		return copyN(r, w, rows*c.size)
	case kindString:
		for i := 0; i < rows; i++ {
			n, err := r.UVarInt()
			if err != nil {
				return err
			}
			w.PutUVarInt(n)
			if err := copyN(r, w, int(n)); err != nil {
				return err
			}
		}
		return nil
	case kindNullable:
		if err := copyN(r, w, rows); err != nil {
			return err
		}
		return c.elems[0].copyData(r, w, rows)
	case kindArray, kindMap:
		var last uint64
		for i := 0; i < rows; i++ {
			v, err := r.UInt64()
			if err != nil {
				return err
			}
			w.PutUInt64(v)
			last = v
		}
		if c.kind == kindMap {
			for _, e := range c.elems {
				if err := e.copyData(r, w, int(last)); err != nil {
					return err
				}
			}
			return nil
		}
		return c.elems[0].copyData(r, w, int(last))
	case kindTuple:
		for _, e := range c.elems {
			if err := e.copyData(r, w, rows); err != nil {
				return err
			}
		}
		return nil
	case kindLowCardinality:
		dict := c.elems[0]
		if dict.kind == kindNullable {
			dict = dict.elems[0]
		}
		for done := 0; done < rows; {
			meta, err := r.UInt64()
			if err != nil {
				return err
			}
			w.PutUInt64(meta)
			width := 1 << (meta & 0xff)
			if meta&(1<<9) != 0 { // has additional keys
				nk, err := r.UInt64()
				if err != nil {
					return err
				}
				w.PutUInt64(nk)
				if err := dict.copyData(r, w, int(nk)); err != nil {
					return err
				}
			}
			ni, err := r.UInt64()
			if err != nil {
				return err
			}
			w.PutUInt64(ni)
			if ni == 0 {
				return fmt.Errorf("chshim: empty LowCardinality granule")
			}
			if err := copyN(r, w, int(ni)*width); err != nil {
				return err
			}
			done += int(ni)
		}
		return nil
	}
	return fmt.Errorf("chshim: unknown kind %d", c.kind)
}

func copyN(r *proto.Reader, w *proto.Buffer, n int) error {
	if n == 0 {
		return nil
	}
	start := len(w.Buf)
	w.Buf = append(w.Buf, make([]byte, n)...)
	return r.ReadFull(w.Buf[start:])
}

// errEndOfBlocks: the Native stream ended at a block boundary.
var errEndOfBlocks = errors.New("chshim: end of blocks")

// blockLayout selects how blocks are framed.
type blockLayout struct {
	info          bool // BlockInfo prefix (TCP protocol)
	customSerFlag bool // per-column "has custom serialization" byte (revision >= 54454)
}

func layoutFor(version int) blockLayout {
	return blockLayout{
		info:          proto.FeatureBlockInfo.In(version),
		customSerFlag: proto.FeatureCustomSerialization.In(version),
	}
}

var nativeLayout = blockLayout{} // FORMAT Native (revision 0)

// blockHeader is a decoded block's shape.
type blockHeader struct {
	columns, rows int
	names, types  []string
}

// transcodeBlock reads one block framed as in and writes it framed as out,
// copying the column bytes verbatim. It returns the block's shape.
func transcodeBlock(r *proto.Reader, w *proto.Buffer, in, out blockLayout) (blockHeader, error) {
	var h blockHeader
	if in.info {
		var info proto.BlockInfo
		if err := info.Decode(r); err != nil {
			return h, fmt.Errorf("block info: %w", err)
		}
	}
	cols, err := r.UVarInt()
	if err != nil {
		if !in.info && errors.Is(err, io.EOF) {
			return h, errEndOfBlocks
		}
		return h, err
	}
	rows, err := r.UVarInt()
	if err != nil {
		return h, fmt.Errorf("rows: %w", err)
	}
	h.columns, h.rows = int(cols), int(rows)
	if out.info {
		proto.BlockInfo{BucketNum: -1}.Encode(w)
	}
	w.PutUVarInt(cols)
	w.PutUVarInt(rows)
	for i := 0; i < int(cols); i++ {
		name, err := r.Str()
		if err != nil {
			return h, fmt.Errorf("column %d name: %w", i, err)
		}
		typ, err := r.Str()
		if err != nil {
			return h, fmt.Errorf("column %d type: %w", i, err)
		}
		if in.customSerFlag {
			custom, err := r.Bool()
			if err != nil {
				return h, err
			}
			if custom {
				return h, fmt.Errorf("chshim: column %q uses custom serialization (unsupported by the test shim)", name)
			}
		}
		h.names = append(h.names, name)
		h.types = append(h.types, typ)
		w.PutString(name)
		w.PutString(typ)
		if out.customSerFlag {
			w.PutBool(false)
		}
		if rows == 0 {
			continue
		}
		ct, err := parseType(typ)
		if err != nil {
			return h, err
		}
		if err := ct.copyPrefix(r, w); err != nil {
			return h, fmt.Errorf("column %q state: %w", name, err)
		}
		if err := ct.copyData(r, w, int(rows)); err != nil {
			return h, fmt.Errorf("column %q data: %w", name, err)
		}
	}
	return h, nil
}
