package flatparquet

import (
	"bytes"
	"encoding/binary"
	"math"
)

// stats are the statistics of a column chunk as arrow-go's writer keeps them: signed order for
// integers, unsigned bytes for byte arrays, floats without NaN.
type stats struct {
	kind             int32
	nulls            int64
	has              bool
	minI, maxI       int64
	minF, maxF       float64
	minB, maxB       []byte
	minBool, maxBool bool
}

func (s *stats) reset() {
	s.nulls, s.has = 0, false
	s.minB, s.maxB = s.minB[:0], s.maxB[:0]
}

func (s *stats) bool(v bool) {
	if !s.has {
		s.minBool, s.maxBool, s.has = v, v, true
		return
	}
	s.minBool = s.minBool && v
	s.maxBool = s.maxBool || v
}

func (s *stats) int(v int64) {
	if !s.has {
		s.minI, s.maxI, s.has = v, v, true
		return
	}
	s.minI = min(s.minI, v)
	s.maxI = max(s.maxI, v)
}

func (s *stats) float(v float64) {
	if math.IsNaN(v) {
		return
	}
	if !s.has {
		s.minF, s.maxF, s.has = v, v, true
		return
	}
	if v < s.minF {
		s.minF = v
	}
	if v > s.maxF {
		s.maxF = v
	}
}

func (s *stats) bytes(v []byte) {
	if !s.has {
		s.minB, s.maxB, s.has = append(s.minB[:0], v...), append(s.maxB[:0], v...), true
		return
	}
	if bytes.Compare(v, s.minB) < 0 {
		s.minB = append(s.minB[:0], v...)
	} else if bytes.Compare(v, s.maxB) > 0 {
		s.maxB = append(s.maxB[:0], v...)
	}
}

// fixed adds a PLAIN fixed-width value.
func (s *stats) fixed(v []byte) {
	switch s.kind {
	case ptInt32:
		s.int(int64(int32(binary.LittleEndian.Uint32(v))))
	case ptInt64:
		s.int(int64(binary.LittleEndian.Uint64(v)))
	default:
		s.float(floatOf(v))
	}
}

// fixedRange adds PLAIN fixed-width values of width bytes.
func (s *stats) fixedRange(raw []byte, width int) {
	switch s.kind {
	case ptInt64:
		if len(raw) == 0 {
			return
		}
		lo, hi := int64(binary.LittleEndian.Uint64(raw)), int64(binary.LittleEndian.Uint64(raw))
		for i := 8; i+8 <= len(raw); i += 8 {
			v := int64(binary.LittleEndian.Uint64(raw[i:]))
			lo, hi = min(lo, v), max(hi, v)
		}
		s.int(lo)
		s.int(hi)
	default:
		for i := 0; i+width <= len(raw); i += width {
			s.fixed(raw[i : i+width])
		}
	}
}

// maxStatBytes bounds a byte array's min or max in the statistics, as arrow-go's writer does: a
// longer one is left out.
const maxStatBytes = 4096

// encoded are the chunk's min and max as PLAIN bytes, either nil when left out; both are nil when
// the chunk has no non-null, non-NaN value.
type encoded struct{ min, max []byte }

func (s *stats) encode(ptype int32, width int) encoded {
	if !s.has {
		return encoded{}
	}
	switch ptype {
	case ptBoolean:
		return encoded{[]byte{b2i(s.minBool)}, []byte{b2i(s.maxBool)}}
	case ptInt32:
		return encoded{binary.LittleEndian.AppendUint32(nil, uint32(s.minI)), binary.LittleEndian.AppendUint32(nil, uint32(s.maxI))}
	case ptInt64:
		return encoded{binary.LittleEndian.AppendUint64(nil, uint64(s.minI)), binary.LittleEndian.AppendUint64(nil, uint64(s.maxI))}
	case ptFloat, ptDouble:
		lo, hi := s.minF, s.maxF
		if lo == 0 {
			lo = math.Copysign(0, -1)
		}
		if hi == 0 {
			hi = 0
		}
		if ptype == ptFloat {
			return encoded{binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(lo))), binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(hi)))}
		}
		return encoded{binary.LittleEndian.AppendUint64(nil, math.Float64bits(lo)), binary.LittleEndian.AppendUint64(nil, math.Float64bits(hi))}
	default:
		var e encoded
		if len(s.minB) <= maxStatBytes {
			e.min = append([]byte{}, s.minB...)
		}
		if len(s.maxB) <= maxStatBytes {
			e.max = append([]byte{}, s.maxB...)
		}
		return e
	}
}

func b2i(b bool) byte {
	if b {
		return 1
	}
	return 0
}
