package icetable_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

func TestPageZstd(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	require.NoError(t, err)
	z, ok := c.(*icetable.PageZstd)
	require.True(t, ok, "zstd pages go through pageZstd, got %T", c)
	var page bytes.Buffer
	for i := 0; page.Len() < 3*icetable.PageWindow; i++ {
		fmt.Fprintf(&page, `{"id":%d,"name":"customer-%07d","region":"eu-west"}`, i, i%1000)
	}
	for _, n := range []int{0, 1, 100, 1 << 20, icetable.PageWindow, icetable.PageWindow + 1, page.Len()} {
		src := page.Bytes()[:n]
		for _, level := range []int{compress.DefaultCompressionLevel, 1, 3, 9} {
			got := z.EncodeLevel(nil, src, level)
			require.Equal(t, src, z.Decode(nil, got), "%d bytes, level %d", n, level)
			if n > 0 && n <= icetable.PageWindow {
				// a window as large as the page: no worse than arrow-go's own encoders with their 8 MiB window
				orig := z.Codec.EncodeLevel(nil, src, level)
				require.LessOrEqual(t, len(got), len(orig)+16, "%d bytes, level %d", n, level)
			}
		}
	}
}

// An idle page encoder survives collections: made again, each would allocate its history (MiBs).
func TestPageZstdKeepsEncodersAcrossGC(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	require.NoError(t, err)
	z := c.(*icetable.PageZstd)
	src := bytes.Repeat([]byte(`{"id":1,"name":"customer-0000001","region":"eu-west"}`), 20000) // ~1 MiB
	dst := make([]byte, 0, len(src))
	dst = z.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
	runtime.GC()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	z.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10), "the idle encoder was kept")
}
