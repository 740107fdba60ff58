// Package lz4frame decodes LZ4 frames, the lz4 codec of Kafka record batches, block by block straight into
// one slice per input (fresh, or the caller's): no frame reader, no intermediate buffer, no copy, and no
// checksum pass (the record batch's CRC32C covers the compressed bytes).
package lz4frame

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pierrec/lz4/v4"
)

// ErrFrame is the error of a malformed or unsupported LZ4 frame.
var ErrFrame = errors.New("lz4 frame")

// ErrTooLarge is the error of frames that decode to more than the limit given.
var ErrTooLarge = errors.New("lz4 frames decode past the limit")

var errBlock = errors.New("malformed block")

// errShort is a decoding walk's error when the output does not fit in the slice it was given.
var errShort = errors.New("output past the slice given")

const (
	frameMagic     = 0x184D2204
	skippableMagic = 0x184D2A50 // the low 4 bits are free
	windowSize     = 64 << 10
)

// Decode decodes the concatenated LZ4 frames of src (skippable frames skipped) into a fresh slice,
// refusing more than limit bytes of output (ErrTooLarge). Header, block and content checksums are not
// verified.
func Decode(src []byte, limit int) ([]byte, error) { return DecodeWith(src, limit, Fresh) }

// Fresh is a new slice of n bytes.
func Fresh(n int) []byte { return make([]byte, n) }

// DecodeWith is Decode into a slice of alloc: alloc(n) returns a slice of length n, of any contents.
func DecodeWith(src []byte, limit int, alloc func(n int) []byte) ([]byte, error) {
	// The output is allocated once, before decoding, and lives as long as any record of the batch: its
	// length is the decoded size, give or take the blocks that writers leave short.
	n, err := walkFrames(src, limit, estimate, nil)
	if errors.Is(err, ErrTooLarge) {
		n, err = walkFrames(src, limit, measure, nil)
	}
	if err != nil {
		return nil, err
	}
	out := alloc(n)[:0]
	if _, err := walkFrames(src, limit, decode, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DecodeGuess is DecodeWith that first decodes into alloc(guess), without measuring the blocks, and
// measures them only when the output does not fit there (or src is malformed): a caller that knows
// about how large its inputs decode skips the walk over every block's tokens that sizes the output.
// The output's capacity is then the guess's; a guess of 0 or less is DecodeWith.
func DecodeGuess(src []byte, limit, guess int, alloc func(n int) []byte) ([]byte, error) {
	if guess > 0 {
		out := alloc(min(guess, limit))[:0]
		if _, err := walkFrames(src, limit, decode, &out); err == nil {
			return out, nil
		}
	}
	return DecodeWith(src, limit, alloc)
}

// walkMode is what walkFrames does with the blocks.
type walkMode int

const (
	// estimate measures the last compressed block of each frame and takes the others at the frame's
	// block size: the writers (the JVM's, pierrec's) fill every block but a frame's last, so this
	// bound is exact for them and reads a fraction of the tokens.
	estimate walkMode = iota
	measure           // measures every block
	decode            // decodes the blocks onto dst
)

// walkFrames walks the frames of src and returns their decoded size, or with estimate a bound of it.
// With decode it decodes the blocks onto *dst, failing when they do not fit in its capacity.
func walkFrames(src []byte, limit int, walk walkMode, dst *[]byte) (int, error) {
	total := 0
	for len(src) > 0 {
		if len(src) < 4 {
			return 0, fmt.Errorf("%w: truncated magic", ErrFrame)
		}
		magic := binary.LittleEndian.Uint32(src)
		src = src[4:]
		if magic&^0xF == skippableMagic {
			if len(src) < 4 || uint64(binary.LittleEndian.Uint32(src)) > uint64(len(src)-4) {
				return 0, fmt.Errorf("%w: truncated skippable frame", ErrFrame)
			}
			src = src[4+binary.LittleEndian.Uint32(src):]
			continue
		}
		if magic != frameMagic {
			return 0, fmt.Errorf("%w: bad magic %#x", ErrFrame, magic)
		}
		if len(src) < 3 {
			return 0, fmt.Errorf("%w: truncated descriptor", ErrFrame)
		}
		flg, bd := src[0], src[1]
		switch {
		case flg>>6 != 1:
			return 0, fmt.Errorf("%w: version %d", ErrFrame, flg>>6)
		case flg&0x02 != 0 || bd&0x8F != 0:
			return 0, fmt.Errorf("%w: reserved descriptor bits set", ErrFrame)
		case flg&0x01 != 0:
			return 0, fmt.Errorf("%w: dictionary id not supported", ErrFrame)
		case bd>>4 < 4:
			return 0, fmt.Errorf("%w: block size index %d", ErrFrame, bd>>4)
		}
		indep, blockSums, contentSum := flg&0x20 != 0, flg&0x10 != 0, flg&0x04 != 0
		blockMax := 1 << (8 + 2*(bd>>4)) // 64 KiB, 256 KiB, 1 MiB, 4 MiB
		contentSize := uint64(0)
		if flg&0x08 != 0 {
			if len(src) < 11 {
				return 0, fmt.Errorf("%w: truncated descriptor", ErrFrame)
			}
			contentSize = binary.LittleEndian.Uint64(src[2:])
			src = src[8:]
		}
		src = src[3:] // FLG, BD and the header checksum
		start := total
		for {
			if len(src) < 4 {
				return 0, fmt.Errorf("%w: truncated block", ErrFrame)
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
				return 0, fmt.Errorf("%w: block of %d bytes (frame blocks up to %d, %d left)", ErrFrame, size, blockMax, len(src))
			}
			block := src[:size]
			src = src[next:]
			n, err := size, error(nil)
			switch {
			case word>>31 != 0: // stored uncompressed
				if walk == decode {
					if len(block) > cap(*dst)-len(*dst) {
						return 0, errShort
					}
					*dst = append(*dst, block...)
				}
			case walk == estimate && len(src) >= 4 && binary.LittleEndian.Uint32(src) != 0:
				// not the frame's last block: a block decodes to at most 255 bytes per byte (length
				// extension bytes), so that short blocks do not inflate the bound beyond what a
				// decompression bomb of their size could
				n = min(blockMax, 255*size)
			case walk != decode:
				n, err = blockSize(block, blockMax)
			default:
				out := *dst
				var dict []byte
				if !indep {
					dict = out[max(start, len(out)-windowSize):]
				}
				n, err = lz4.UncompressBlockWithDict(block, out[len(out):min(cap(out), len(out)+blockMax)], dict)
				*dst = out[:len(out)+n]
			}
			if err != nil {
				return 0, fmt.Errorf("%w: %w", ErrFrame, err)
			}
			if total += n; total > limit {
				return 0, fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
			}
		}
		if flg&0x08 != 0 && walk != estimate && uint64(total-start) != contentSize {
			return 0, fmt.Errorf("%w: %d bytes, descriptor says %d", ErrFrame, total-start, contentSize)
		}
		if contentSum {
			if len(src) < 4 {
				return 0, fmt.Errorf("%w: truncated content checksum", ErrFrame)
			}
			src = src[4:]
		}
	}
	return total, nil
}

// blockSize returns the decoded size of an LZ4 block, reading only its tokens and lengths, and
// refusing a block that decodes past limit. It accepts the blocks pierrec's decoder accepts, bar
// those whose match offsets reach before the start of the output or dictionary, which that decoder
// refuses when it decodes them.
func blockSize(src []byte, limit int) (int, error) {
	n, i := 0, 0
	for i < len(src) {
		token := src[i]
		i++
		if lits := int(token >> 4); lits != 0 {
			if lits == 0xF {
				var err error
				if lits, i, err = extendLength(src, i, lits, limit); err != nil {
					return 0, err
				}
			}
			i += lits
			if n += lits; n > limit {
				return 0, errBlock
			}
		}
		if i+2 > len(src) {
			if i == len(src) && token&0xF == 0 {
				break // the last sequence: literals only
			}
			return 0, errBlock // no room for an offset
		}
		if src[i]|src[i+1] == 0 {
			return 0, errBlock // a zero offset
		}
		i += 2
		match := int(token&0xF) + 4
		if match == 0xF+4 {
			var err error
			if match, i, err = extendLength(src, i, match, limit); err != nil {
				return 0, err
			}
		}
		if n += match; n > limit {
			return 0, errBlock
		}
	}
	return n, nil
}

// extendLength adds to n the length bytes of a sequence from i (each 0xFF says another follows) and
// returns the length and the index after them, refusing a length past limit.
func extendLength(src []byte, i, n, limit int) (int, int, error) {
	for {
		if i >= len(src) {
			return 0, 0, errBlock
		}
		x := src[i]
		i++
		if n += int(x); n > limit {
			return 0, 0, errBlock
		}
		if x != 0xFF {
			return n, i, nil
		}
	}
}
