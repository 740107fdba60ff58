package apacheevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/connectd/connectd/connect/avrotype"
)

// record is a decoded (or to be encoded) Avro record: the values in the order of its schema's fields.
type record struct {
	n    *node
	vals []any
}

// get returns the value of the field with the given field id and whether the writer's schema has it.
func (r *record) get(id int) (any, bool) {
	if i := r.n.fieldByID(id); i >= 0 {
		return r.vals[i], true
	}
	return nil, false
}

// Decoded values: nil (null), bool, int32, int64, float32, float64, []byte (bytes, fixed), string, *record,
// []any (array), map[string]any (map), string (enum symbol).

var errShort = errors.New("unexpected end of data")

// maxValueDepth bounds the nesting of decoded values: a recursive writer schema could otherwise recurse
// without consuming input.
const maxValueDepth = 64

// reader decodes Avro binary data. Untrusted input must neither panic it nor make it allocate more than the
// input justifies: lengths and counts are checked against the remaining bytes, and every decoded value
// spends one unit of a budget proportional to the input (a value can take no bytes, like null).
type reader struct {
	b      []byte
	pos    int
	budget int
}

func newReader(b []byte) *reader { return &reader{b: b, budget: 4*len(b) + 4096} }

func (r *reader) remaining() int { return len(r.b) - r.pos }

func (r *reader) varint(maxBytes int) (uint64, error) {
	var v uint64
	for i := 0; i < maxBytes; i++ {
		if r.pos >= len(r.b) {
			return 0, errShort
		}
		c := r.b[r.pos]
		r.pos++
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("invalid varint")
}

func (r *reader) long() (int64, error) {
	u, err := r.varint(10)
	if err != nil {
		return 0, err
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

func (r *reader) int() (int32, error) {
	u, err := r.varint(5)
	if err != nil {
		return 0, err
	}
	if u > math.MaxUint32 {
		return 0, errors.New("invalid int encoding")
	}
	return int32(uint32(u>>1) ^ -uint32(u&1)), nil
}

func (r *reader) bytes() ([]byte, error) {
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(r.remaining()) {
		return nil, fmt.Errorf("invalid length %d with %d bytes left", n, r.remaining())
	}
	out := r.b[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	return out, nil // aliases the input: value copies what it keeps
}

func (r *reader) fixed(n int) ([]byte, error) {
	if n > r.remaining() {
		return nil, errShort
	}
	out := r.b[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return out, nil
}

// blockCount reads the item count of an array or map block; a negative count is followed by the block's
// size in bytes.
func (r *reader) blockCount() (int, error) {
	n, err := r.long()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		if n == math.MinInt64 {
			return 0, errors.New("invalid block count")
		}
		n = -n
		if _, err := r.long(); err != nil {
			return 0, err
		}
	}
	if n > int64(r.budget) {
		return 0, fmt.Errorf("block of %d items exceeds what %d bytes can hold", n, len(r.b))
	}
	return int(n), nil
}

func (r *reader) value(n *node, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, fmt.Errorf("values nested deeper than %d", maxValueDepth)
	}
	if r.budget--; r.budget < 0 {
		return nil, errors.New("more values than the input can hold")
	}
	switch n.kind {
	case avrotype.Null:
		return nil, nil
	case avrotype.Boolean:
		b, err := r.fixed(1)
		if err != nil {
			return nil, err
		}
		return b[0] != 0, nil
	case avrotype.Int:
		return r.int()
	case avrotype.Long:
		return r.long()
	case avrotype.Float:
		b, err := r.fixed(4)
		if err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case avrotype.Double:
		b, err := r.fixed(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case avrotype.Bytes:
		b, err := r.bytes()
		return bytes.Clone(b), err
	case avrotype.String:
		b, err := r.bytes()
		if err != nil {
			return nil, err
		}
		return string(b), nil
	case avrotype.Fixed:
		b, err := r.fixed(n.size)
		return bytes.Clone(b), err
	case avrotype.Enum:
		i, err := r.int()
		if err != nil {
			return nil, err
		}
		if i < 0 || int(i) >= len(n.symbols) {
			return nil, fmt.Errorf("enum %s: index %d out of range", n.fullName(), i)
		}
		return n.symbols[i], nil
	case avrotype.Union:
		i, err := r.int()
		if err != nil {
			return nil, err
		}
		if i < 0 || int(i) >= len(n.branches) {
			return nil, fmt.Errorf("union index %d out of range", i)
		}
		return r.value(n.branches[i], depth+1)
	case avrotype.Record:
		rec := &record{n: n, vals: make([]any, len(n.fields))}
		for i, f := range n.fields {
			v, err := r.value(f.typ, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", n.name, f.name, err)
			}
			rec.vals[i] = v
		}
		return rec, nil
	case avrotype.Array:
		var out []any
		for {
			c, err := r.blockCount()
			if err != nil {
				return nil, err
			}
			if c == 0 {
				if out == nil {
					out = []any{}
				}
				return out, nil
			}
			if out == nil {
				out = make([]any, 0, min(c, r.remaining()+1))
			}
			for range c {
				v, err := r.value(n.items, depth+1)
				if err != nil {
					return nil, fmt.Errorf("[%d]: %w", len(out), err)
				}
				out = append(out, v)
			}
		}
	case avrotype.Map:
		out := map[string]any{}
		for {
			c, err := r.blockCount()
			if err != nil {
				return nil, err
			}
			if c == 0 {
				return out, nil
			}
			for range c {
				k, err := r.bytes()
				if err != nil {
					return nil, err
				}
				v, err := r.value(n.items, depth+1)
				if err != nil {
					return nil, fmt.Errorf("[%q]: %w", k, err)
				}
				out[string(k)] = v
			}
		}
	}
	return nil, fmt.Errorf("unsupported Avro type %v", n.kind)
}

// writer encodes Avro binary data as Java's BinaryEncoder does (arrays in one block).
type writer struct {
	b []byte
}

func (w *writer) long(v int64) { w.b = binary.AppendUvarint(w.b, uint64(v<<1)^uint64(v>>63)) }

func (w *writer) bytes(b []byte) {
	w.long(int64(len(b)))
	w.b = append(w.b, b...)
}

func (w *writer) value(n *node, v any) error {
	switch n.kind {
	case avrotype.Null:
		if v != nil {
			return fmt.Errorf("null: got %T", v)
		}
		return nil
	case avrotype.Boolean:
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("boolean: got %T", v)
		}
		if b {
			w.b = append(w.b, 1)
		} else {
			w.b = append(w.b, 0)
		}
	case avrotype.Int:
		i, ok := v.(int32)
		if !ok {
			return fmt.Errorf("int: got %T", v)
		}
		w.long(int64(i))
	case avrotype.Long:
		i, ok := v.(int64)
		if !ok {
			return fmt.Errorf("long: got %T", v)
		}
		w.long(i)
	case avrotype.Float:
		f, ok := v.(float32)
		if !ok {
			return fmt.Errorf("float: got %T", v)
		}
		w.b = binary.LittleEndian.AppendUint32(w.b, math.Float32bits(f))
	case avrotype.Double:
		f, ok := v.(float64)
		if !ok {
			return fmt.Errorf("double: got %T", v)
		}
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(f))
	case avrotype.Bytes:
		b, ok := v.([]byte)
		if !ok {
			return fmt.Errorf("bytes: got %T", v)
		}
		w.bytes(b)
	case avrotype.String:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("string: got %T", v)
		}
		w.long(int64(len(s)))
		w.b = append(w.b, s...)
	case avrotype.Fixed:
		b, ok := v.([]byte)
		if !ok || len(b) != n.size {
			return fmt.Errorf("fixed %s: got %T of %d bytes, want %d", n.fullName(), v, len(b), n.size)
		}
		w.b = append(w.b, b...)
	case avrotype.Union:
		for i, br := range n.branches {
			if (v == nil) == (br.kind == avrotype.Null) {
				w.long(int64(i))
				return w.value(br, v)
			}
		}
		return fmt.Errorf("union: no branch for %T", v)
	case avrotype.Record:
		rec, ok := v.(*record)
		if !ok || len(rec.vals) != len(n.fields) {
			return fmt.Errorf("record %s: got %T", n.fullName(), v)
		}
		for i, f := range n.fields {
			if err := w.value(f.typ, rec.vals[i]); err != nil {
				return fmt.Errorf("%s.%s: %w", n.name, f.name, err)
			}
		}
	case avrotype.Array:
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("array: got %T", v)
		}
		if len(items) > 0 {
			w.long(int64(len(items)))
			for i, it := range items {
				if err := w.value(n.items, it); err != nil {
					return fmt.Errorf("[%d]: %w", i, err)
				}
			}
		}
		w.long(0)
	default:
		return fmt.Errorf("unsupported Avro type %v", n.kind)
	}
	return nil
}
