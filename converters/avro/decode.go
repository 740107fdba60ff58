package avro

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/avrotype"
)

// The decoder reads Avro binary straight into Connect values, driven by the compiled schema: no
// intermediate generic maps, and every length and count is checked against the bytes left, so arbitrary
// input can only produce an error.

type reader struct {
	buf []byte
	pos int
	// zeroItems counts, over the whole payload, array/map items whose encoding may take no bytes.
	zeroItems int
}

type decodeFn func(r *reader) (any, error)

var (
	errUnderflow = errors.New("avro: unexpected end of data")
	errVarint    = errors.New("avro: invalid varint encoding")
	errIntRange  = errors.New("avro: invalid int encoding")
	errNegLen    = errors.New("avro: negative length")
	errTooMany   = errors.New("avro: block count exceeds remaining data")
)

// maxZeroSizeItems bounds arrays and maps of zero-byte elements (empty records, fixed(0)), which
// the remaining-bytes check cannot bound.
const maxZeroSizeItems = 1 << 18

func (r *reader) long() (int64, error) {
	var ux uint64
	var s uint
	for i := 0; i < 10; i++ {
		if r.pos >= len(r.buf) {
			return 0, errUnderflow
		}
		b := r.buf[r.pos]
		r.pos++
		if i == 9 && b > 1 {
			return 0, errVarint
		}
		ux |= uint64(b&0x7f) << s
		if b < 0x80 {
			return int64(ux>>1) ^ -int64(ux&1), nil
		}
		s += 7
	}
	return 0, errVarint
}

func (r *reader) int() (int32, error) {
	v, err := r.long()
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, errIntRange
	}
	return int32(v), nil
}

func (r *reader) bytesRef() ([]byte, error) {
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, errNegLen
	}
	if n > int64(len(r.buf)-r.pos) {
		return nil, errUnderflow
	}
	b := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, nil
}

// blockCount reads an array/map block header; it returns 0 at the end marker.
func (r *reader) blockCount(elemMin int) (int, error) {
	n, err := r.long()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		if n == math.MinInt64 {
			return 0, errTooMany
		}
		n = -n
		if _, err := r.long(); err != nil { // block size in bytes
			return 0, err
		}
	}
	left := int64(len(r.buf) - r.pos)
	if elemMin > 0 {
		if n > left/int64(elemMin) {
			return 0, errTooMany
		}
	} else {
		if n > maxZeroSizeItems || int64(r.zeroItems)+n > maxZeroSizeItems {
			return 0, errTooMany
		}
		r.zeroItems += int(n)
	}
	return int(n), nil
}

// minSize is the least number of bytes a value of n takes (0 only for empty records and fixed(0)).
func minSize(n *node) int {
	if n.hasMinSet {
		return n.minSize
	}
	n.hasMinSet = true
	n.minSize = 1
	switch n.kind {
	case avrotype.Null:
		n.minSize = 0
	case avrotype.Float:
		n.minSize = 4
	case avrotype.Double:
		n.minSize = 8
	case avrotype.Fixed:
		n.minSize = n.size
		if n.minSize > 1 {
			n.minSize = 1 // counts are bounded by bytes, 1 is enough and avoids overflow concerns
		}
	case avrotype.Record:
		n.minSize = 0
		for _, f := range n.fields {
			if minSize(f.typ) > 0 {
				n.minSize = 1
				break
			}
		}
	}
	return n.minSize
}

func decBool(r *reader) (any, error) {
	if r.pos >= len(r.buf) {
		return nil, errUnderflow
	}
	b := r.buf[r.pos]
	r.pos++
	return b != 0, nil
}

func decInt(r *reader) (any, error) {
	v, err := r.int()
	if err != nil {
		return nil, err
	}
	return v, nil
}

func decInt8(r *reader) (any, error) {
	v, err := r.int()
	if err != nil {
		return nil, err
	}
	return int8(v), nil
}

func decInt16(r *reader) (any, error) {
	v, err := r.int()
	if err != nil {
		return nil, err
	}
	return int16(v), nil
}

func decLong(r *reader) (any, error) {
	v, err := r.long()
	if err != nil {
		return nil, err
	}
	return v, nil
}

func decDate(r *reader) (any, error) {
	v, err := r.int()
	if err != nil {
		return nil, err
	}
	return connect.DateFromDays(v), nil
}

func decTime(r *reader) (any, error) {
	v, err := r.int()
	if err != nil {
		return nil, err
	}
	return connect.TimeFromMillis(v), nil
}

func decTimestamp(r *reader) (any, error) {
	v, err := r.long()
	if err != nil {
		return nil, err
	}
	return time.UnixMilli(v).UTC(), nil
}

func decFloat(r *reader) (any, error) {
	if len(r.buf)-r.pos < 4 {
		return nil, errUnderflow
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(r.buf[r.pos:]))
	r.pos += 4
	return v, nil
}

func decDouble(r *reader) (any, error) {
	if len(r.buf)-r.pos < 8 {
		return nil, errUnderflow
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.buf[r.pos:]))
	r.pos += 8
	return v, nil
}

func decString(r *reader) (any, error) {
	b, err := r.bytesRef()
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func decBytes(r *reader) (any, error) {
	b, err := r.bytesRef()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), b...), nil
}

func readFixed(r *reader, size int) ([]byte, error) {
	if len(r.buf)-r.pos < size {
		return nil, errUnderflow
	}
	b := r.buf[r.pos : r.pos+size]
	r.pos += size
	return b, nil
}

func decFixed(size int) decodeFn {
	return func(r *reader) (any, error) {
		b, err := readFixed(r, size)
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), b...), nil
	}
}

func decDecimal(n *node, scale int32) decodeFn {
	return func(r *reader) (any, error) {
		var b []byte
		var err error
		if n.kind == avrotype.Fixed {
			b, err = readFixed(r, n.size)
		} else {
			b, err = r.bytesRef()
		}
		if err != nil {
			return nil, err
		}
		return connect.DecimalFromBytes(b, scale), nil
	}
}

func decEnum(symbols []string) decodeFn {
	return func(r *reader) (any, error) {
		i, err := r.int()
		if err != nil {
			return nil, err
		}
		if i < 0 || int(i) >= len(symbols) {
			return nil, connect.DataErrorf("avro: enum index %d out of range", i)
		}
		return symbols[i], nil
	}
}

func decArray(elem decodeFn, elemMin int) decodeFn {
	return func(r *reader) (any, error) {
		var out []any
		for {
			n, err := r.blockCount(elemMin)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				break
			}
			if out == nil {
				out = make([]any, 0, n)
			}
			for i := 0; i < n; i++ {
				v, err := elem(r)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
}

func decMap(val decodeFn, valMin int) decodeFn {
	return func(r *reader) (any, error) {
		out := map[any]any{}
		for {
			n, err := r.blockCount(1) // a key takes at least one byte
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return out, nil
			}
			for i := 0; i < n; i++ {
				k, err := r.bytesRef()
				if err != nil {
					return nil, err
				}
				v, err := val(r)
				if err != nil {
					return nil, err
				}
				out[string(k)] = v
			}
		}
	}
}

func decMapEntries(key, val decodeFn, keyFirst bool, entryMin int, keySchema *connect.Schema) decodeFn {
	hashable := keySchema.Name == connect.DecimalName || (keySchema.Type != connect.TypeBytes && keySchema.Type != connect.TypeArray && keySchema.Type != connect.TypeMap)
	return func(r *reader) (any, error) {
		out := map[any]any{}
		for {
			n, err := r.blockCount(entryMin)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return out, nil
			}
			if !hashable {
				return nil, connect.DataErrorf("avro: map keys of type %s are not supported", keySchema.Type)
			}
			for i := 0; i < n; i++ {
				var k, v any
				if keyFirst {
					if k, err = key(r); err == nil {
						v, err = val(r)
					}
				} else {
					if v, err = val(r); err == nil {
						k, err = key(r)
					}
				}
				if err != nil {
					return nil, err
				}
				out[k] = v
			}
		}
	}
}

func decRecord(s *connect.Schema, fields []decodeFn) decodeFn {
	return func(r *reader) (any, error) {
		st := connect.NewStruct(s)
		for i, f := range fields {
			v, err := f(r)
			if err != nil {
				return nil, err
			}
			st.PutIndex(i, v)
		}
		return st, nil
	}
}

func decOptional(nullIndex int, inner decodeFn) decodeFn {
	return func(r *reader) (any, error) {
		i, err := r.long()
		if err != nil {
			return nil, err
		}
		switch {
		case i == int64(nullIndex):
			return nil, nil
		case i == int64(1-nullIndex):
			return inner(r)
		}
		return nil, connect.DataErrorf("avro: union index %d out of range", i)
	}
}

func decUnion(s *connect.Schema, branchField []int, branchDec []decodeFn) decodeFn {
	return func(r *reader) (any, error) {
		i, err := r.long()
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(branchField)) {
			return nil, connect.DataErrorf("avro: union index %d out of range", i)
		}
		fi := branchField[i]
		if fi < 0 {
			return nil, nil
		}
		v, err := branchDec[i](r)
		if err != nil {
			return nil, err
		}
		st := connect.NewStruct(s)
		st.PutIndex(fi, v)
		return st, nil
	}
}

func rawBytesDecoder(s *connect.Schema) decodeFn {
	scale, err := connect.DecimalScale(s)
	isDecimal := s.Name == connect.DecimalName && err == nil
	return func(r *reader) (any, error) {
		b := r.buf[r.pos:]
		r.pos = len(r.buf)
		if isDecimal {
			return connect.DecimalFromBytes(b, scale), nil
		}
		return append([]byte(nil), b...), nil
	}
}
