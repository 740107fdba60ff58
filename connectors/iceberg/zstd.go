package iceberg

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// pageWindow is the largest Parquet page that pageZstd compresses itself: twice iceberg-go's
// default data page (write.parquet.page-size-bytes, 1 MiB) and its dictionary page limit
// (write.parquet.dict-size-bytes, 2 MiB).
const pageWindow = 2 << 20

// pageZstd is arrow-go's zstd codec with page encoders whose window is pageWindow instead of
// zstd's default 8 MiB. arrow-go compresses every page with EncodeAll, one call per page, so no
// match can reach further back than the page itself: a window the size of the page compresses
// alike, and each pooled encoder keeps 4 MiB of history instead of 16 MiB (two or more are alive
// while a data file is written). Larger pages and everything else go to arrow-go's codec.
type pageZstd struct {
	compress.Codec
	mu    sync.Mutex
	pools map[zstd.EncoderLevel]*sync.Pool
}

func init() {
	orig, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &pageZstd{Codec: orig, pools: map[zstd.EncoderLevel]*sync.Pool{}})
}

func (z *pageZstd) pool(level zstd.EncoderLevel) *sync.Pool {
	z.mu.Lock()
	defer z.mu.Unlock()
	p := z.pools[level]
	if p == nil {
		p = &sync.Pool{New: func() any {
			// the options of arrow-go's own page encoders, plus the window
			enc, _ := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(level),
				zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(pageWindow))
			return enc
		}}
		z.pools[level] = p
	}
	return p
}

// EncodeLevel maps the level as arrow-go does.
func (z *pageZstd) EncodeLevel(dst, src []byte, level int) []byte {
	if len(src) > pageWindow {
		return z.Codec.EncodeLevel(dst, src, level)
	}
	lvl := zstd.EncoderLevelFromZstd(level)
	if level == compress.DefaultCompressionLevel {
		lvl = zstd.SpeedDefault
	}
	p := z.pool(lvl)
	enc := p.Get().(*zstd.Encoder)
	defer p.Put(enc)
	return enc.EncodeAll(src, dst[:0])
}
