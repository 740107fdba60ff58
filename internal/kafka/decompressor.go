package kafka

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/lz4frame"
)

// MaxDecompressBatchBytes bounds what one fetched batch may decompress to: franz-go's default bound.
const MaxDecompressBatchBytes = 1 << 30

// Decompressor is the consumers' kgo.Decompressor. LZ4 batches go to lz4frame, which decodes each block
// straight into one slice of about the batch's decoded size: franz-go's default streams them through
// pierrec's frame reader into a pooled buffer, clones that, and verifies the frame's content checksum,
// which the batch's CRC32C (checked by the client before decompressing, as check.crcs does) already
// covers; the JVM's KafkaLZ4BlockInputStream verifies neither content nor block checksums either. Every
// other codec goes to franz-go's default decompressor.
type Decompressor struct {
	max   int
	pool  *RecordPool // where lz4 output comes from; nil: fresh slices
	other kgo.Decompressor
	// ratio is the last lz4 batch's decoded size per compressed byte, in 1/1024ths (0: none yet): the
	// next batch is decoded into about that much room before its blocks are measured (lz4frame.DecodeGuess)
	ratio atomic.Uint64
}

// lz4GuessMargin is the room, in 1/1024ths, given past the last batch's ratio: batches of one stream
// compress alike, and one that does not fit is measured and decoded again. Ratios past lz4GuessMaxRatio
// are not guessed: a batch of zeros must not size the buffers of the batches after it.
const (
	lz4GuessMargin   = 64
	lz4GuessMaxRatio = 16 << 10
)

// NewDecompressor returns a Decompressor that refuses batches decompressing to more than max bytes with
// an error wrapping kgo.ErrMaxDecompress, which the client reports as ErrDecompressTooLarge. With a pool,
// lz4 batches are decoded into its buffers (the client gives them back when their records are recycled).
func NewDecompressor(max int, pool *RecordPool) *Decompressor {
	return &Decompressor{max: max, pool: pool, other: kgo.DefaultDecompressor()}
}

// Decompress implements kgo.Decompressor. The returned slice is the batch's own: its records alias it.
func (d *Decompressor) Decompress(src []byte, codec kgo.CompressionCodecType) ([]byte, error) {
	if codec == kgo.CodecLz4 {
		alloc := lz4frame.Fresh
		if d.pool != nil {
			alloc = d.pool.Bytes
		}
		guess := 0
		if r := d.ratio.Load(); r > 0 && r <= lz4GuessMaxRatio {
			guess = int(min(uint64(len(src))*(r+lz4GuessMargin)>>10, uint64(d.max)))
		}
		out, err := lz4frame.DecodeGuess(src, d.max, guess, alloc)
		if errors.Is(err, lz4frame.ErrTooLarge) {
			return nil, fmt.Errorf("%w: %w", kgo.ErrMaxDecompress, err)
		}
		if err != nil {
			return nil, err
		}
		if len(src) > 0 {
			d.ratio.Store(uint64(len(out)) << 10 / uint64(len(src)))
		}
		if cap(out)-len(out) > len(out)/2 { // a batch that compressed far worse than the one before
			out = append(alloc(len(out))[:0], out...)
		}
		return out, nil
	}
	out, err := d.other.Decompress(src, codec)
	// the default decompressor's own bound is math.MaxInt32 (the client rebuilds only its own default
	// with MaxDecompressBatchBytes): hold the others to ours after the fact
	if err == nil && codec != kgo.CodecNone && len(out) > d.max {
		return nil, fmt.Errorf("%w (%d bytes)", kgo.ErrMaxDecompress, d.max)
	}
	return out, err
}
