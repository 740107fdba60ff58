package flatparquet_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connectors/iceberg/flatparquet"
)

// eventBatches builds n batches of 1024 rows of a typical event: an int64 id, three short
// strings, a float64, two int64, a 20-byte timestamp string and a 250-byte string from a handful
// of values.
func eventBatches(b *testing.B, n int) ([]flatparquet.Column, []arrow.RecordBatch) {
	s := iceberg.PrimitiveTypes.String
	i64 := iceberg.PrimitiveTypes.Int64
	cols := []flatparquet.Column{
		{Name: "id", FieldID: 1, Type: i64, Required: true},
		{Name: "user", FieldID: 2, Type: s},
		{Name: "event", FieldID: 3, Type: s, Dictionary: true},
		{Name: "country", FieldID: 4, Type: s, Dictionary: true},
		{Name: "amount", FieldID: 5, Type: iceberg.PrimitiveTypes.Float64},
		{Name: "count", FieldID: 6, Type: i64},
		{Name: "partition", FieldID: 7, Type: i64, Dictionary: true},
		{Name: "ts", FieldID: 8, Type: s},
		{Name: "payload", FieldID: 9, Type: s, Dictionary: true},
	}
	specs := make([]colSpec, len(cols))
	for i, c := range cols {
		specs[i] = colSpec{col: c}
	}
	asc, err := arrowSchema(specs)
	if err != nil {
		b.Fatal(err)
	}
	r := newRand(99)
	events := []string{"click", "view", "purchase", "signup", "logout"}
	countries := []string{"US", "DE", "FR", "JP", "BR", "IN", "GB"}
	var payloads []string
	for i := range 6 {
		payloads = append(payloads, strings.Repeat(fmt.Sprintf("payload-%d|", i), 25)[:250])
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]arrow.RecordBatch, n)
	id := int64(0)
	for bi := range recs {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		for range 1024 {
			id++
			rb.Field(0).(*array.Int64Builder).Append(id)
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("user-%06d", r.IntN(100000)))
			rb.Field(2).(*array.StringBuilder).Append(events[r.IntN(len(events))])
			rb.Field(3).(*array.StringBuilder).Append(countries[r.IntN(len(countries))])
			rb.Field(4).(*array.Float64Builder).Append(r.Float64() * 1000)
			rb.Field(5).(*array.Int64Builder).Append(int64(r.IntN(100)))
			rb.Field(6).(*array.Int64Builder).Append(int64(r.IntN(12)))
			rb.Field(7).(*array.StringBuilder).Append(base.Add(time.Duration(id) * time.Millisecond).Format("2006-01-02T15:04:05Z"))
			rb.Field(8).(*array.StringBuilder).Append(payloads[r.IntN(len(payloads))])
		}
		recs[bi] = rb.NewRecordBatch()
		rb.Release()
	}
	return cols, recs
}

// BenchmarkWrite writes 1024-row event batches into files of up to 256 batches; ns/row is the
// cost of a row.
func BenchmarkWrite(b *testing.B) {
	cols, recs := eventBatches(b, 64)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, codec := range []flatparquet.Codec{flatparquet.Zstd, flatparquet.Uncompressed} {
		b.Run(fmt.Sprint("codec=", codec), func(b *testing.B) {
			opts := withCodec(flatparquet.Options{Codec: codec})
			b.ReportAllocs()
			b.ResetTimer()
			rows := 0
			var size int64
			var w *flatparquet.Writer
			for i := 0; i < b.N; i++ {
				if w == nil {
					var err error
					if w, err = flatparquet.NewWriter(io.Discard, cols, opts); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Write(recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				rows += 1024
				if i%256 == 255 || i == b.N-1 {
					_, n, err := w.Close()
					if err != nil {
						b.Fatal(err)
					}
					size += n
					w = nil
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
			b.ReportMetric(float64(size)/float64(rows), "bytes/row")
		})
	}
}
