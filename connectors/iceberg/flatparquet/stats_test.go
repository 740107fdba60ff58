package flatparquet_test

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/connectd/connectd/connectors/iceberg/flatparquet"
)

// writeArrowGo writes the case with arrow-go's own writer, in one row group, statistics on and
// no dictionary.
func writeArrowGo(tc *tcase) ([]byte, error) {
	asc, err := arrowSchema(tc.cols)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithStats(true), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(1<<30))
	fw, err := pqarrow.NewFileWriter(asc, &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, err
	}
	for _, b := range tc.batches {
		rec := buildBatch(memory.DefaultAllocator, asc, tc.cols, b)
		err := fw.WriteBuffered(rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func footerStats(data []byte, cols []colSpec) ([]stat, int, error) {
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, 0, err
	}
	defer rdr.Close()
	kinds := make([]kind, len(cols))
	for i, c := range cols {
		kinds[i] = c.kind
	}
	st, err := fileStats(rdr.MetaData(), kinds)
	return st, rdr.NumRowGroups(), err
}

// compareWithArrowGo writes the case with both writers and compares the footers' statistics,
// per column over the whole file.
func compareWithArrowGo(tc *tcase) error {
	ours, _, err := writeCase(tc)
	if err != nil {
		return err
	}
	theirs, err := writeArrowGo(tc)
	if err != nil {
		return fmt.Errorf("arrow-go writer: %w", err)
	}
	got, _, err := footerStats(ours, tc.cols)
	if err != nil {
		return fmt.Errorf("our footer: %w", err)
	}
	want, _, err := footerStats(theirs, tc.cols)
	if err != nil {
		return fmt.Errorf("arrow-go's footer: %w", err)
	}
	for c, spec := range tc.cols {
		if !statEqual(got[c], want[c]) {
			return fmt.Errorf("column %d %q (%s, required=%v, dictionary=%v): statistics %s, arrow-go writes %s",
				c, spec.col.Name, spec.kind, spec.col.Required, spec.col.Dictionary, got[c].format(spec.kind), want[c].format(spec.kind))
		}
	}
	return nil
}

// statsCase draws a case with every type (and some more columns), rows in one row group.
func statsCase(seed int64) *tcase {
	r := newRand(seed)
	kinds := make([]kind, 0, int(numKinds)+4)
	for k := range numKinds {
		kinds = append(kinds, k)
	}
	for range r.IntN(5) {
		kinds = append(kinds, kind(r.IntN(int(numKinds))))
	}
	tc := &tcase{seed: seed, cols: genCols(r, len(kinds), kinds)}
	scale := []int{1, 10, 300, 3000}
	tc.batches = genBatches(r, tc.cols, 1+r.IntN(4), func() int { return 1 + r.IntN(scale[r.IntN(len(scale))]) })
	// long values: arrow-go's own 4096-byte limit on min/max is part of its statistics
	for i := range tc.batches {
		b := &tc.batches[i]
		b.pad = 0 // (sliced batches are TestRoundTripArrowGo's)
		for c, spec := range tc.cols {
			if spec.kind.bytesLike() && r.IntN(8) == 0 {
				for i := range b.cols[c] {
					if !b.cols[c][i].null {
						b.cols[c][i].s += string(bytes.Repeat([]byte{byte(r.IntN(256))}, 4000))
					}
				}
			}
		}
	}
	tc.opts = flatparquet.Options{
		RowGroupRows: 1 << 20,
		PageBytes:    logUniform(r, 64, 64<<10),
		PageRows:     logUniform(r, 1, 2000),
		DictBytes:    logUniform(r, 16, 4096),
		Codec:        []flatparquet.Codec{flatparquet.Uncompressed, flatparquet.Zstd}[r.IntN(2)],
	}
	return tc
}

// TestStatisticsMatchArrowGo: the footer's per-file min, max and null count of each column are
// those of arrow-go's writer for the same batches.
func TestStatisticsMatchArrowGo(t *testing.T) {
	iters := 60
	if testing.Short() {
		iters = 15
	}
	base := baseSeed(t)
	failures := 0
	for i := range iters {
		tc := statsCase(base + int64(i))
		if err := compareWithArrowGo(tc); err != nil {
			failCase(t, tc, err, compareWithArrowGo)
			if failures++; failures >= 3 {
				t.Fatalf("stopping after %d failing seeds", failures)
			}
		}
	}
}

// TestStatisticsEdgeValues: fixed columns whose statistics are easy to get wrong: signed zeros,
// NaN among other values and alone, infinities, extreme integers, bytes above 0x7f, empty
// strings, all nulls, values longer than arrow-go's 4096-byte statistics limit.
func TestStatisticsEdgeValues(t *testing.T) {
	negZero := math.Copysign(0, -1)
	nan := math.NaN()
	f64 := func(vs ...float64) []cell {
		out := make([]cell, len(vs))
		for i, v := range vs {
			out[i] = cell{u: math.Float64bits(v)}
		}
		return out
	}
	f32 := func(vs ...float64) []cell {
		out := make([]cell, len(vs))
		for i, v := range vs {
			out[i] = cell{u: uint64(math.Float32bits(float32(v)))}
		}
		return out
	}
	i64 := func(vs ...int64) []cell {
		out := make([]cell, len(vs))
		for i, v := range vs {
			out[i] = cell{u: uint64(v)}
		}
		return out
	}
	strs := func(vs ...string) []cell {
		out := make([]cell, len(vs))
		for i, v := range vs {
			out[i] = cell{s: v}
		}
		return out
	}
	null := cell{null: true}
	long := string(bytes.Repeat([]byte("x"), 5000))
	cases := []struct {
		name string
		k    kind
		vals []cell
	}{
		{"f64 zeros", kFloat64, f64(0, 0)},
		{"f64 negative zeros", kFloat64, f64(negZero, negZero)},
		{"f64 zero and one", kFloat64, f64(1, 0)},
		{"f64 negzero and minus one", kFloat64, f64(negZero, -1)},
		{"f64 nan first", kFloat64, f64(nan, 3, -2)},
		{"f64 nan only", kFloat64, f64(nan, nan)},
		{"f64 infinities", kFloat64, f64(math.Inf(1), math.Inf(-1), nan)},
		{"f64 nan and null", kFloat64, append(f64(nan), null)},
		{"f32 zeros", kFloat32, f32(0, negZero)},
		{"f32 nan and values", kFloat32, f32(2.5, nan, -7)},
		{"f32 nan only", kFloat32, f32(nan)},
		{"i64 extremes", kInt64, i64(math.MaxInt64, math.MinInt64, 0)},
		{"i32 extremes", kInt32, i64(math.MaxInt32, math.MinInt32, -1)},
		{"date negative", kDate, i64(-1, -719162, 2932896)},
		{"timestamp extremes", kTimestamp, i64(math.MinInt64, 1, math.MaxInt64)},
		{"timestamptz negative", kTimestampTz, i64(-5, -6)},
		{"time", kTime, i64(0, 86399999999)},
		{"bool true only", kBool, i64(1, 1)},
		{"bool both", kBool, i64(1, 0, 1)},
		{"bool null and false", kBool, append(i64(0), null)},
		{"string high bytes", kString, strs("z", "é", "a", "ÿ", "😀")},
		{"string empty", kString, strs("b", "", "a")},
		{"string only empty", kString, strs("", "")},
		{"string empty first", kString, strs("", "b")},
		{"binary empty last", kBinary, strs("\x01", "")},
		{"binary high bytes", kBinary, strs("\x7f", "\x80", "\xff\x00", "\x00")},
		{"all null", kString, []cell{null, null, null}},
		{"string long max", kString, strs("a", long)},
		{"string long min", kString, strs(long, "y")},
		{"string all long", kString, strs(long, long+"z")},
		{"binary exactly 4096", kBinary, strs("a", long[:4096])},
		{"binary 4097", kBinary, strs("a", long[:4097])},
	}
	for _, c := range cases {
		for _, dict := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dict=%v", c.name, dict), func(t *testing.T) {
				cols := genCols(newRand(1), 1, []kind{c.k})
				cols[0].col.Name, cols[0].col.Dictionary, cols[0].col.Required = "v", dict, false
				tc := &tcase{cols: cols, batches: []batchData{{cols: [][]cell{c.vals}}}}
				if err := compareWithArrowGo(tc); err != nil {
					t.Errorf("%v\n%s", err, tc.describe())
				}
			})
		}
	}
}
