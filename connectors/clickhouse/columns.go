package clickhouse

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connect/values"
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
			f, err := values.ToDouble(v)
			return float32(f), err
		}), nil
	case "Float64":
		return newLeaf[float64, proto.ColFloat64](t, values.ToDouble), nil
	case "Bool":
		return newLeaf[bool, proto.ColBool](t, values.ToBoolean), nil
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
			d, err := values.ToDate(v)
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
			d, err := values.ToDate(v)
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
				tm, err := values.ToTimestamp(v, loc)
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
				tm, err := values.ToTimestamp(v, loc)
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
