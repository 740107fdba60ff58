package flatparquet

import "encoding/binary"

// minRepeat is the shortest run of one value written as an RLE run rather than bit-packed: a
// run header and one value cost less than the bits of that many values from a width of 2 up.
const minRepeat = 16

// appendHybrid appends vals in Parquet's RLE/bit-packed hybrid encoding of width bits (1 to 32):
// runs of minRepeat or more equal values as RLE runs, the rest bit-packed in groups of eight.
func appendHybrid(dst []byte, vals []uint32, width int) []byte {
	n := len(vals)
	for i := 0; i < n; {
		if r := runLength(vals, i); r >= minRepeat || i+r == n {
			dst = binary.AppendUvarint(dst, uint64(r)<<1)
			dst = appendLE(dst, vals[i], (width+7)/8)
			i += r
			continue
		}
		// bit-pack whole groups until a long run starts at a group's boundary or the values end
		start := i
		for i < n {
			i += 8
			if i < n && runLength(vals, i) >= minRepeat {
				break
			}
		}
		groups := (min(i, n) - start + 7) / 8
		dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
		dst = appendPacked(dst, vals[start:min(i, n)], groups*8, width)
		i = min(i, n)
	}
	return dst
}

// runLength is how many values from vals[i] equal it, counting up to minRepeat unless they all do.
func runLength(vals []uint32, i int) int {
	v := vals[i]
	j := i + 1
	for j < len(vals) && vals[j] == v {
		j++
	}
	return j - i
}

// appendPacked appends vals bit-packed at width bits, least significant bit first, padded with
// zeros to count values.
func appendPacked(dst []byte, vals []uint32, count, width int) []byte {
	var acc uint64
	bits := 0
	for k := range count {
		var v uint32
		if k < len(vals) {
			v = vals[k]
		}
		acc |= uint64(v) << bits
		bits += width
		for bits >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			bits -= 8
		}
	}
	return dst
}

// appendLE appends the n low bytes of v, little-endian.
func appendLE(dst []byte, v uint32, n int) []byte {
	for range n {
		dst = append(dst, byte(v))
		v >>= 8
	}
	return dst
}
