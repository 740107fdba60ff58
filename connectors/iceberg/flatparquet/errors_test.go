package flatparquet_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connectors/iceberg/flatparquet"
)

// noPanic runs f and turns a panic into a test error.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s panicked: %v", what, p)
		}
	}()
	f()
}

func TestSupported(t *testing.T) {
	for k := range numKinds {
		if !flatparquet.Supported(k.iceberg()) {
			t.Errorf("Supported(%s) = false", k.iceberg())
		}
	}
	for _, typ := range []iceberg.Type{
		iceberg.DecimalTypeOf(10, 2),
		iceberg.DecimalTypeOf(38, 0),
		iceberg.PrimitiveTypes.UUID,
		iceberg.FixedTypeOf(16),
		&iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 2, Name: "x", Type: iceberg.PrimitiveTypes.Int64}}},
		&iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.String},
		&iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String, ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int32},
	} {
		if flatparquet.Supported(typ) {
			t.Errorf("Supported(%s) = true", typ)
		}
	}
}

func TestNewWriterErrors(t *testing.T) {
	cols := []flatparquet.Column{{Name: "a", FieldID: 1, Type: iceberg.PrimitiveTypes.Int64}}
	noPanic(t, "NewWriter(Zstd, nil Compress)", func() {
		if _, err := flatparquet.NewWriter(io.Discard, cols, flatparquet.Options{Codec: flatparquet.Zstd}); err == nil {
			t.Error("NewWriter with Zstd and a nil Compress: no error")
		}
	})
	// An unsupported column type is refused (by NewWriter, or at the latest by Write).
	noPanic(t, "decimal column", func() {
		dec := []flatparquet.Column{{Name: "d", FieldID: 1, Type: iceberg.DecimalTypeOf(10, 2)}}
		w, err := flatparquet.NewWriter(io.Discard, dec, flatparquet.Options{})
		if err != nil {
			return
		}
		dt := &arrow.Decimal128Type{Precision: 10, Scale: 2}
		rec := nullBatch([]arrow.DataType{dt}, 3)
		defer rec.Release()
		if err := w.Write(rec); err == nil {
			_, _, err = w.Close()
			t.Errorf("a decimal column was accepted by NewWriter and Write (Close: %v)", err)
		}
	})
}

// nullBatch is a batch of n null rows of the given types.
func nullBatch(types []arrow.DataType, n int) arrow.RecordBatch {
	fields := make([]arrow.Field, len(types))
	arrs := make([]arrow.Array, len(types))
	for i, dt := range types {
		fields[i] = arrow.Field{Name: fmt.Sprintf("f%d", i), Type: dt, Nullable: true}
		arrs[i] = array.MakeArrayOfNull(memory.DefaultAllocator, dt, n)
		defer arrs[i].Release()
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(n))
}

// TestWriteWrongBatch: a batch of another column count, or with a column of another Arrow type
// than the column's, is an error, not a panic and not a file.
func TestWriteWrongBatch(t *testing.T) {
	wrong := map[kind][]arrow.DataType{
		kBool:        {arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32},
		kInt32:       {arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Float32},
		kInt64:       {arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Float64},
		kFloat32:     {arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int32},
		kFloat64:     {arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Int64},
		kDate:        {arrow.FixedWidthTypes.Date64, arrow.PrimitiveTypes.Int64},
		kTime:        {arrow.FixedWidthTypes.Time64ns, arrow.FixedWidthTypes.Time32ms},
		kTimestamp:   {&arrow.TimestampType{Unit: arrow.Millisecond}, &arrow.TimestampType{Unit: arrow.Nanosecond}, arrow.PrimitiveTypes.Int32},
		kTimestampTz: {&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		kString:      {arrow.PrimitiveTypes.Int32, &arrow.FixedSizeBinaryType{ByteWidth: 4}},
		kBinary:      {arrow.PrimitiveTypes.Int64, &arrow.FixedSizeBinaryType{ByteWidth: 16}, arrow.ListOf(arrow.PrimitiveTypes.Uint8)},
	}
	right := func(k kind) arrow.DataType {
		asc, err := arrowSchema([]colSpec{{kind: k, col: flatparquet.Column{Name: "x", FieldID: 1, Type: k.iceberg()}}})
		if err != nil {
			t.Fatal(err)
		}
		return asc.Field(0).Type
	}
	for k := range numKinds {
		for _, dt := range wrong[k] {
			for _, codec := range []flatparquet.Codec{flatparquet.Uncompressed, flatparquet.Zstd} {
				name := fmt.Sprintf("%s given %s codec %d", k, dt, codec)
				noPanic(t, name, func() {
					cols := []flatparquet.Column{
						{Name: "ok", FieldID: 1, Type: iceberg.PrimitiveTypes.Int64},
						{Name: "x", FieldID: 2, Type: k.iceberg()},
					}
					w, err := flatparquet.NewWriter(io.Discard, cols, withCodec(flatparquet.Options{Codec: codec}))
					if err != nil {
						t.Fatalf("%s: NewWriter: %v", name, err)
					}
					rec := nullBatch([]arrow.DataType{arrow.PrimitiveTypes.Int64, dt}, 5)
					defer rec.Release()
					if err := w.Write(rec); err == nil {
						t.Errorf("%s: Write accepted the batch", name)
					}
				})
			}
		}
	}
	// column counts
	cols := []flatparquet.Column{
		{Name: "a", FieldID: 1, Type: iceberg.PrimitiveTypes.Int64},
		{Name: "b", FieldID: 2, Type: iceberg.PrimitiveTypes.String},
	}
	i64, str := right(kInt64), right(kString)
	for _, types := range [][]arrow.DataType{{i64}, {i64, str, str}, {str, i64}, {}} {
		name := fmt.Sprintf("batch of types %v for columns (int64, string)", types)
		noPanic(t, name, func() {
			w, err := flatparquet.NewWriter(io.Discard, cols, flatparquet.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rec := nullBatch(types, 2)
			defer rec.Release()
			if err := w.Write(rec); err == nil {
				t.Errorf("%s: Write accepted it", name)
			}
		})
	}
	// ... while the right types are fine, after a refused batch too.
	noPanic(t, "right batch", func() {
		w, err := flatparquet.NewWriter(io.Discard, cols, flatparquet.Options{})
		if err != nil {
			t.Fatal(err)
		}
		bad := nullBatch([]arrow.DataType{i64}, 2)
		defer bad.Release()
		_ = w.Write(bad)
		rec := nullBatch([]arrow.DataType{i64, str}, 2)
		defer rec.Release()
		if err := w.Write(rec); err != nil {
			t.Logf("Write of a right batch after a refused one: %v (the writer may stay failed)", err)
		}
	})
}

// failingWriter fails once n bytes were written.
type failingWriter struct{ n int }

var errDisk = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return len(p), nil
	}
	k := f.n
	f.n = 0
	return k, errDisk
}

// TestWriterErrorsPropagate: an error of the io.Writer reaches the caller (NewWriter, Write or
// Close), without a panic.
func TestWriterErrorsPropagate(t *testing.T) {
	tc := genCase(3)
	for tc.totalRows() < 500 {
		tc = genCase(tc.seed + 1)
	}
	tc.opts.RowGroupRows = 200
	data, _, err := writeCase(tc)
	if err != nil {
		t.Fatal(err)
	}
	asc, err := arrowSchema(tc.cols)
	if err != nil {
		t.Fatal(err)
	}
	fcols := make([]flatparquet.Column, len(tc.cols))
	for i, c := range tc.cols {
		fcols[i] = c.col
	}
	for _, n := range []int{0, 1, 3, 4, 5, 100, len(data) / 3, len(data) / 2, len(data) - 9, len(data) - 1} {
		noPanic(t, fmt.Sprintf("fail after %d bytes", n), func() {
			fw := &failingWriter{n: n}
			w, err := flatparquet.NewWriter(fw, fcols, withCodec(tc.opts))
			if err != nil {
				if !errors.Is(err, errDisk) {
					t.Logf("fail after %d: NewWriter: %v", n, err)
				}
				return
			}
			var werr error
			for _, b := range tc.batches {
				rec := buildBatch(memory.DefaultAllocator, asc, tc.cols, b)
				werr = w.Write(rec)
				rec.Release()
				if werr != nil {
					break
				}
			}
			if werr == nil {
				_, _, werr = w.Close()
			}
			if werr == nil {
				t.Errorf("writer failing after %d of %d bytes: no error from Write or Close", n, len(data))
			} else if !errors.Is(werr, errDisk) {
				t.Logf("fail after %d: error %v does not wrap the writer's", n, werr)
			}
		})
	}
}
