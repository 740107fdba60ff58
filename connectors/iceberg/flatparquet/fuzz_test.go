package flatparquet_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/connectd/connectd/connectors/iceberg/flatparquet"
)

// byteSource reads the fuzz input; past its end it gives zeros.
type byteSource struct {
	b []byte
}

func (s *byteSource) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	v := s.b[0]
	s.b = s.b[1:]
	return v
}

func (s *byteSource) n(k int) int { return int(s.byte()) % k }

func (s *byteSource) u64(width int) uint64 {
	var buf [8]byte
	for i := range width {
		buf[i] = s.byte()
	}
	return binary.LittleEndian.Uint64(buf[:])
}

// fuzzCase derives a small case from data: up to 4 columns, up to 3 batches of up to ~64 rows.
func fuzzCase(data []byte) *tcase {
	s := &byteSource{b: data}
	ncols := 1 + s.n(4)
	tc := &tcase{}
	for i := range ncols {
		flags := s.byte()
		k := kind(int(flags>>3) % int(numKinds))
		tc.cols = append(tc.cols, colSpec{
			kind:  k,
			large: k.bytesLike() && flags&4 != 0,
			col: flatparquet.Column{
				Name: "c" + string(rune('a'+i)), FieldID: i + 1, Type: k.iceberg(),
				Required: flags&1 != 0, Dictionary: flags&2 != 0,
			},
		})
	}
	o := s.byte()
	tc.opts = flatparquet.Options{
		RowGroupRows: 1 + s.n(40),
		PageRows:     1 + s.n(20),
		PageBytes:    64 + 16*s.n(16),
		DictBytes:    16 + 8*s.n(32),
		Codec:        []flatparquet.Codec{flatparquet.Uncompressed, flatparquet.Zstd}[o&1],
	}
	if o&2 != 0 {
		tc.opts.RowGroupBytes = int64(256 + 64*s.n(64))
	}
	nb := 1 + s.n(3)
	for range nb {
		rows := s.n(65)
		bd := batchData{pad: s.n(4), cols: make([][]cell, ncols)}
		for c, spec := range tc.cols {
			for range rows {
				tag := s.byte()
				if !spec.col.Required && tag&1 == 1 {
					bd.cols[c] = append(bd.cols[c], cell{null: true})
					continue
				}
				bd.cols[c] = append(bd.cols[c], fuzzValue(s, spec.kind, tag>>1))
			}
		}
		tc.batches = append(tc.batches, bd)
	}
	return tc
}

func fuzzValue(s *byteSource, k kind, tag byte) cell {
	small := tag&1 == 1 // a value from a handful, to make dictionaries
	switch k {
	case kBool:
		return cell{u: uint64(tag>>1) & 1}
	case kInt32, kDate:
		if small {
			return cell{u: uint64(int64(int8(tag)) >> 4)}
		}
		return cell{u: uint64(int64(int32(uint32(s.u64(4)))))}
	case kInt64, kTime, kTimestamp, kTimestampTz:
		if small {
			return cell{u: uint64(int64(int8(tag)) >> 4)}
		}
		return cell{u: s.u64(8)}
	case kFloat32:
		if small {
			return cell{u: uint64(math.Float32bits(specialF32[int(tag>>1)%len(specialF32)]))}
		}
		return cell{u: uint64(uint32(s.u64(4)))}
	case kFloat64:
		if small {
			return cell{u: math.Float64bits(specialF64[int(tag>>1)%len(specialF64)])}
		}
		return cell{u: s.u64(8)}
	default: // string, binary
		if small {
			return cell{s: []string{"", "a", "é", "\x00", "zz"}[int(tag>>1)%5]}
		}
		n := s.n(24)
		b := make([]byte, n)
		for i := range b {
			b[i] = s.byte()
		}
		if k == kString {
			return cell{s: string([]rune(string(b)))} // valid UTF-8
		}
		return cell{s: string(b)}
	}
}

// FuzzWriteRead: a small schema and batches derived from the input round-trip through arrow-go's
// reader with the right statistics.
func FuzzWriteRead(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 0x00, 0x0b, 0x4a, 0x53, 7, 2, 5, 2, 1, 40, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add([]byte{2, 0x1a, 0x22, 0xff, 39, 19, 15, 31, 2, 64, 0, 3, 5, 7, 9, 11, 13, 0, 2, 4, 6, 1, 1, 1, 1, 0xff, 0xfe})
	f.Add([]byte{0, 0x48, 1, 0, 0, 0, 0, 1, 30, 0, 0x80, 1, 0x7f, 3, 0xc3, 0xa9, 0})
	f.Add([]byte("\x03\x13\x2b\x33\x01\x05\x07\x10\x08\x02\x21\x00some fuzz bytes to become values of several columns, nulls and pages"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tc := fuzzCase(data)
		if err := checkCase(tc, nil); err != nil {
			t.Fatalf("%v\ncase:\n%s", err, tc.describe())
		}
	})
}
