package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MaxDecompressBatchBytes bounds what one fetched batch may decompress to: franz-go's default bound.
const MaxDecompressBatchBytes = 1 << 30

// Decompressor is the consumers' kgo.Decompressor. LZ4 batches are decoded here, block by block straight
// into one slice of their exact decoded size: franz-go's default streams them through pierrec's frame
// reader into a pooled buffer and clones that, and verifies the frame's content checksum, which the
// batch's CRC32C (checked by the client before decompressing, as check.crcs does) already covers; the
// JVM's KafkaLZ4BlockInputStream verifies neither content nor block checksums either. Every other codec
// goes to franz-go's default decompressor.
type Decompressor struct {
	max   int
	other kgo.Decompressor
}

// NewDecompressor returns a Decompressor that refuses batches decompressing to more than max bytes
// with an error wrapping kgo.ErrMaxDecompress.
func NewDecompressor(max int) *Decompressor {
	return &Decompressor{max: max, other: kgo.DefaultDecompressor()}
}

// Decompress implements kgo.Decompressor. The returned slice is the batch's own: its records alias it.
func (d *Decompressor) Decompress(src []byte, codec kgo.CompressionCodecType) ([]byte, error) {
	if codec == kgo.CodecLz4 {
		return DecodeLZ4Frames(src, d.max)
	}
	out, err := d.other.Decompress(src, codec)
	// the default decompressor's own bound is math.MaxInt32: hold the others to ours too
	if err == nil && codec != kgo.CodecNone && len(out) > d.max {
		return nil, errMaxDecompress(d.max)
	}
	return out, err
}

func errMaxDecompress(max int) error {
	return fmt.Errorf("%w (%d bytes)", kgo.ErrMaxDecompress, max)
}

// ErrLZ4Frame is the error of a malformed or unsupported LZ4 frame.
var ErrLZ4Frame = errors.New("lz4 frame")

var errLZ4Block = errors.New("malformed block")

const (
	lz4FrameMagic     = 0x184D2204
	lz4SkippableMagic = 0x184D2A50 // the low 4 bits are free
	lz4WindowSize     = 64 << 10
)

// DecodeLZ4Frames decodes the concatenated LZ4 frames of src (skippable frames skipped) into a fresh
// slice, refusing more than limit bytes of output. Header, block and content checksums are not verified.
func DecodeLZ4Frames(src []byte, limit int) ([]byte, error) {
	// The output is allocated once, before decoding, and lives as long as any record of the batch: its
	// capacity is the decoded size, give or take the blocks that writers leave short.
	n, err := walkLZ4Frames(src, limit, lz4Estimate, nil)
	if errors.Is(err, kgo.ErrMaxDecompress) {
		n, err = walkLZ4Frames(src, limit, lz4Measure, nil)
	}
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, n)
	if _, err := walkLZ4Frames(src, limit, lz4Decode, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// lz4Walk is what walkLZ4Frames does with the blocks.
type lz4Walk int

const (
	// lz4Estimate measures the last compressed block of each frame and takes the others at the frame's
	// block size: the writers (the JVM's, pierrec's) fill every block but a frame's last, so this
	// bound is exact for them and reads a fraction of the tokens.
	lz4Estimate lz4Walk = iota
	lz4Measure          // measures every block
	lz4Decode           // decodes the blocks onto dst
)

// walkLZ4Frames walks the frames of src and returns their decoded size, or with lz4Estimate a bound of it.
// With lz4Decode it decodes the blocks onto *dst, whose capacity must be what a measuring walk gave.
func walkLZ4Frames(src []byte, limit int, walk lz4Walk, dst *[]byte) (int, error) {
	total := 0
	for len(src) > 0 {
		if len(src) < 4 {
			return 0, fmt.Errorf("%w: truncated magic", ErrLZ4Frame)
		}
		magic := binary.LittleEndian.Uint32(src)
		src = src[4:]
		if magic&^0xF == lz4SkippableMagic {
			if len(src) < 4 || uint64(binary.LittleEndian.Uint32(src)) > uint64(len(src)-4) {
				return 0, fmt.Errorf("%w: truncated skippable frame", ErrLZ4Frame)
			}
			src = src[4+binary.LittleEndian.Uint32(src):]
			continue
		}
		if magic != lz4FrameMagic {
			return 0, fmt.Errorf("%w: bad magic %#x", ErrLZ4Frame, magic)
		}
		if len(src) < 3 {
			return 0, fmt.Errorf("%w: truncated descriptor", ErrLZ4Frame)
		}
		flg, bd := src[0], src[1]
		switch {
		case flg>>6 != 1:
			return 0, fmt.Errorf("%w: version %d", ErrLZ4Frame, flg>>6)
		case flg&0x02 != 0 || bd&0x8F != 0:
			return 0, fmt.Errorf("%w: reserved descriptor bits set", ErrLZ4Frame)
		case flg&0x01 != 0:
			return 0, fmt.Errorf("%w: dictionary id not supported", ErrLZ4Frame)
		case bd>>4 < 4:
			return 0, fmt.Errorf("%w: block size index %d", ErrLZ4Frame, bd>>4)
		}
		indep, blockSums, contentSum := flg&0x20 != 0, flg&0x10 != 0, flg&0x04 != 0
		blockMax := 1 << (8 + 2*(bd>>4)) // 64 KiB, 256 KiB, 1 MiB, 4 MiB
		contentSize := uint64(0)
		if flg&0x08 != 0 {
			if len(src) < 11 {
				return 0, fmt.Errorf("%w: truncated descriptor", ErrLZ4Frame)
			}
			contentSize = binary.LittleEndian.Uint64(src[2:])
			src = src[8:]
		}
		src = src[3:] // FLG, BD and the header checksum
		start := total
		for {
			if len(src) < 4 {
				return 0, fmt.Errorf("%w: truncated block", ErrLZ4Frame)
			}
			word := binary.LittleEndian.Uint32(src)
			src = src[4:]
			if word == 0 {
				break // end mark
			}
			size := int(word &^ (1 << 31))
			next := size
			if blockSums {
				next += 4
			}
			if size > blockMax || next > len(src) {
				return 0, fmt.Errorf("%w: block of %d bytes (frame blocks up to %d, %d left)", ErrLZ4Frame, size, blockMax, len(src))
			}
			block := src[:size]
			src = src[next:]
			n, err := size, error(nil)
			switch {
			case word>>31 != 0: // stored uncompressed
				if walk == lz4Decode {
					*dst = append(*dst, block...)
				}
			case walk == lz4Estimate && len(src) >= 4 && binary.LittleEndian.Uint32(src) != 0:
				// not the frame's last block: a block decodes to at most 255 bytes per byte (length
				// extension bytes), so that short blocks do not inflate the bound beyond what a
				// decompression bomb of their size could
				n = min(blockMax, 255*size)
			case walk != lz4Decode:
				n, err = lz4BlockSize(block, blockMax)
			default:
				out := *dst
				var dict []byte
				if !indep {
					dict = out[max(start, len(out)-lz4WindowSize):]
				}
				n, err = lz4.UncompressBlockWithDict(block, out[len(out):min(cap(out), len(out)+blockMax)], dict)
				*dst = out[:len(out)+n]
			}
			if err != nil {
				return 0, fmt.Errorf("%w: %w", ErrLZ4Frame, err)
			}
			if total += n; total > limit {
				return 0, errMaxDecompress(limit)
			}
		}
		if flg&0x08 != 0 && walk != lz4Estimate && uint64(total-start) != contentSize {
			return 0, fmt.Errorf("%w: %d bytes, descriptor says %d", ErrLZ4Frame, total-start, contentSize)
		}
		if contentSum {
			if len(src) < 4 {
				return 0, fmt.Errorf("%w: truncated content checksum", ErrLZ4Frame)
			}
			src = src[4:]
		}
	}
	return total, nil
}

// lz4BlockSize returns the decoded size of an LZ4 block, reading only its tokens and lengths, and
// refusing a block that decodes past limit. It accepts the blocks pierrec's decoder accepts, bar
// those whose match offsets reach before the start of the output or dictionary, which that decoder
// refuses when it decodes them.
func lz4BlockSize(src []byte, limit int) (int, error) {
	n, i := 0, 0
	for i < len(src) {
		token := src[i]
		i++
		if lits := int(token >> 4); lits != 0 {
			if lits == 0xF {
				for {
					if i >= len(src) {
						return 0, errLZ4Block
					}
					x := src[i]
					i++
					if lits += int(x); lits > limit {
						return 0, errLZ4Block
					}
					if x != 0xFF {
						break
					}
				}
			}
			i += lits
			if n += lits; n > limit {
				return 0, errLZ4Block
			}
		}
		if i+2 > len(src) {
			if i == len(src) && token&0xF == 0 {
				break // the last sequence: literals only
			}
			return 0, errLZ4Block // no room for an offset
		}
		if src[i]|src[i+1] == 0 {
			return 0, errLZ4Block // a zero offset
		}
		i += 2
		match := int(token&0xF) + 4
		if match == 0xF+4 {
			for {
				if i >= len(src) {
					return 0, errLZ4Block
				}
				x := src[i]
				i++
				if match += int(x); match > limit {
					return 0, errLZ4Block
				}
				if x != 0xFF {
					break
				}
			}
		}
		if n += match; n > limit {
			return 0, errLZ4Block
		}
	}
	return n, nil
}
