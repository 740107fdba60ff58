package icetable_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

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

// benchPages are PLAIN-encoded Parquet pages of 32,768 values of the Iceberg benchmark's columns that
// do not take a dictionary: ids, names, emails, amounts, timestamps as strings.
func benchPages() map[string][]byte {
	const n = 32 << 10
	pages := map[string][]byte{}
	str := func(name string, f func(i int) string) {
		var p []byte
		for i := range n {
			s := f(i)
			p = binary.LittleEndian.AppendUint32(p, uint32(len(s)))
			p = append(p, s...)
		}
		pages[name] = p
	}
	var ids, amounts []byte
	for i := range n {
		ids = binary.LittleEndian.AppendUint64(ids, uint64(1_000_000+i))
		amounts = binary.LittleEndian.AppendUint64(amounts, math.Float64bits(float64(i%100000)+float64(i%100)/100))
	}
	pages["id"], pages["amount"] = ids, amounts
	str("name", func(i int) string { return fmt.Sprintf("customer-%07d", 1_000_000+i) })
	str("email", func(i int) string { return fmt.Sprintf("customer-%07d@example.com", 1_000_000+i) })
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	str("ts", func(i int) string { return base.Add(time.Duration(i) * time.Second).Format(time.RFC3339) })
	return pages
}

// BenchmarkPageZstd: one page of each column through the zstd page codec at Iceberg's default level
// (write.parquet.compression-level unset: zstd's 3) and at levels 1 and 3 set.
func BenchmarkPageZstd(b *testing.B) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	require.NoError(b, err)
	pages := benchPages()
	for _, level := range []int{compress.DefaultCompressionLevel, 1, 3} {
		for _, name := range []string{"id", "name", "email", "amount", "ts"} {
			src := pages[name]
			b.Run(fmt.Sprintf("level=%d/%s", level, name), func(b *testing.B) {
				dst := make([]byte, 0, len(src))
				cpu0 := rusageCPU()
				for range b.N {
					dst = c.EncodeLevel(dst[:0], src, level)
				}
				b.ReportMetric(float64(len(src))*float64(b.N)/float64(rusageCPU()-cpu0)*1e3, "MB/cpu-s")
				b.ReportMetric(float64(len(dst))/float64(len(src)), "ratio")
			})
		}
	}
}
