package icetable

import (
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// PageWindow is the largest Parquet page that pageZstd compresses itself: twice iceberg-go's
// default data page (write.parquet.page-size-bytes, 1 MiB) and its dictionary page limit
// (write.parquet.dict-size-bytes, 2 MiB).
const PageWindow = 2 << 20

// PageZstd is arrow-go's zstd codec with page encoders whose window is pageWindow instead of
// zstd's default 8 MiB. arrow-go compresses every page with EncodeAll, one call per page, so no
// match can reach further back than the page itself: a window the size of the page compresses
// alike, and each pooled encoder keeps 4 MiB of history instead of 16 MiB (two or more are alive
// while a data file is written). Larger pages and everything else go to arrow-go's codec.
//
// Idle encoders are kept in a free list of at most one per processor rather than a sync.Pool: a
// collection empties a sync.Pool, and each encoder made again allocates its history anew (a few
// MiB), which made the encoders a large share of the write path's garbage.
type PageZstd struct {
	compress.Codec
	mu   sync.Mutex
	idle map[zstd.EncoderLevel][]*zstd.Encoder
}

func init() {
	orig, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &PageZstd{Codec: orig, idle: map[zstd.EncoderLevel][]*zstd.Encoder{}})
}

func (z *PageZstd) get(level zstd.EncoderLevel) *zstd.Encoder {
	z.mu.Lock()
	if l := z.idle[level]; len(l) > 0 {
		enc := l[len(l)-1]
		z.idle[level] = l[:len(l)-1]
		z.mu.Unlock()
		return enc
	}
	z.mu.Unlock()
	// the options of arrow-go's own page encoders, plus the window
	enc, _ := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(level),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(PageWindow))
	return enc
}

func (z *PageZstd) put(level zstd.EncoderLevel, enc *zstd.Encoder) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if l := z.idle[level]; len(l) < runtime.GOMAXPROCS(0) {
		z.idle[level] = append(l, enc)
	}
}

// EncodeLevel maps the level as arrow-go does.
func (z *PageZstd) EncodeLevel(dst, src []byte, level int) []byte {
	if len(src) > PageWindow {
		return z.Codec.EncodeLevel(dst, src, level)
	}
	lvl := zstd.EncoderLevelFromZstd(level)
	if level == compress.DefaultCompressionLevel {
		lvl = zstd.SpeedDefault
	}
	enc := z.get(lvl)
	defer z.put(lvl, enc)
	return enc.EncodeAll(src, dst[:0])
}
