package icetable_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// writeFunc is table.WriteRecords' signature, which icetable.WriteDataFilesOfRowGroups shares.
type writeFunc = func(context.Context, *table.Table, *arrow.Schema, iter.Seq2[arrow.RecordBatch, error],
	...table.WriteRecordOption) iter.Seq2[ice.DataFile, error]

// flatModelCol is a column of the model table: one of every type the flat writer writes.
type flatModelCol struct {
	name string
	typ  ice.PrimitiveType
	req  bool
}

var flatModelCols = []flatModelCol{
	{"b", ice.PrimitiveTypes.Bool, true},
	{"i", ice.PrimitiveTypes.Int32, false},
	{"l", ice.PrimitiveTypes.Int64, true},
	{"f", ice.PrimitiveTypes.Float32, false},
	{"d", ice.PrimitiveTypes.Float64, false},
	{"rd", ice.PrimitiveTypes.Float64, true},
	{"dt", ice.PrimitiveTypes.Date, false},
	{"tm", ice.PrimitiveTypes.Time, false},
	{"ts", ice.PrimitiveTypes.Timestamp, false},
	{"tz", ice.PrimitiveTypes.TimestampTz, false},
	{"s", ice.PrimitiveTypes.String, false},
	{"rs", ice.PrimitiveTypes.String, true},
	{"bin", ice.PrimitiveTypes.Binary, false},
}

func flatModelSchema() *ice.Schema {
	fields := make([]ice.NestedField, len(flatModelCols))
	for i, c := range flatModelCols {
		fields[i] = ice.NestedField{ID: i + 1, Name: c.name, Type: c.typ, Required: c.req}
	}
	return ice.NewSchema(0, fields...)
}

func flatModelColIndex(name string) int {
	for i, c := range flatModelCols {
		if c.name == name {
			return i
		}
	}
	panic(name)
}

// flatModel is a write: batches of column-major values (nil for null), and its row group limit.
type flatModel struct {
	batches  [][][]any
	rowGroup int
	desc     []string // how each column's values were drawn
}

const flatLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-"

func flatRandLetters(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = flatLetters[rng.Intn(len(flatLetters))]
	}
	return string(b)
}

// flatValue draws one non-null value of type typ.
func flatValue(rng *rand.Rand, typ ice.PrimitiveType) any {
	switch typ {
	case ice.PrimitiveTypes.Bool:
		return rng.Intn(2) == 1
	case ice.PrimitiveTypes.Int32:
		switch rng.Intn(10) {
		case 0:
			return int32(math.MinInt32)
		case 1:
			return int32(math.MaxInt32)
		case 2:
			return int32(0)
		case 3:
			return int32(-1)
		case 4:
			return int32(rng.Uint32())
		default:
			return int32(rng.Intn(2000) - 1000)
		}
	case ice.PrimitiveTypes.Int64:
		switch rng.Intn(10) {
		case 0:
			return int64(math.MinInt64)
		case 1:
			return int64(math.MaxInt64)
		case 2:
			return int64(0)
		case 3:
			return int64(-1)
		case 4:
			return int64(rng.Uint64())
		default:
			return int64(rng.Intn(2_000_000) - 1_000_000)
		}
	case ice.PrimitiveTypes.Float32, ice.PrimitiveTypes.Float64:
		var v float64
		switch rng.Intn(12) {
		case 0:
			v = math.NaN()
		case 1:
			v = 0
		case 2:
			v = math.Copysign(0, -1)
		case 3:
			v = math.Inf(1)
		case 4:
			v = math.Inf(-1)
		case 5:
			v = math.MaxFloat32
		case 6:
			v = -math.SmallestNonzeroFloat32
		default:
			v = rng.NormFloat64() * 1000
		}
		if typ == ice.PrimitiveTypes.Float32 {
			return float32(v)
		}
		return v
	case ice.PrimitiveTypes.Date:
		return int32(rng.Intn(60_000) - 20_000) // 1915 to 2079
	case ice.PrimitiveTypes.Time:
		return rng.Int63n(86_400_000_000)
	case ice.PrimitiveTypes.Timestamp, ice.PrimitiveTypes.TimestampTz:
		return rng.Int63n(9_000_000_000_000_000) - 2_000_000_000_000_000 // 1906 to 2191
	case ice.PrimitiveTypes.String:
		switch rng.Intn(24) {
		case 0:
			return ""
		case 1:
			// over 4,096 bytes: the Parquet writers leave such a min or max out of the footer
			prefix := string("!~aM"[rng.Intn(4)])
			return prefix + strings.Repeat(flatRandLetters(rng, 3), 1366+rng.Intn(300))
		case 2:
			return strings.Repeat("é", 1+rng.Intn(24)) + flatRandLetters(rng, rng.Intn(3))
		case 3:
			return strings.Repeat("\U0010FFFF", 15+rng.Intn(4))
		case 4:
			return "日本語のテキストはとても長いのです" + flatRandLetters(rng, rng.Intn(3))
		case 5:
			return flatRandLetters(rng, 16)
		case 6:
			return flatRandLetters(rng, 17)
		case 7, 8, 9:
			return flatRandLetters(rng, 18+rng.Intn(50))
		default:
			return flatRandLetters(rng, 1+rng.Intn(15))
		}
	case ice.PrimitiveTypes.Binary:
		switch rng.Intn(20) {
		case 0:
			return []byte{}
		case 1:
			b := make([]byte, 4097+rng.Intn(500))
			rng.Read(b)
			return b
		case 2:
			return bytes.Repeat([]byte{0xff}, 15+rng.Intn(4))
		case 3:
			return append(bytes.Repeat([]byte{0xff}, 16), 1, 2, 3)
		case 4:
			return []byte{0}
		default:
			b := make([]byte, rng.Intn(40))
			rng.Read(b)
			return b
		}
	}
	panic(fmt.Sprint(typ))
}

func flatIsFloat(typ ice.PrimitiveType) bool {
	return typ == ice.PrimitiveTypes.Float32 || typ == ice.PrimitiveTypes.Float64
}

// flatColGen draws a column's values as one of several shapes: mixed with nulls, all null, a few
// repeated values, a constant, mostly null, no nulls; floats also all NaN, or NaN and zeros only.
func flatColGen(rng *rand.Rand, c flatModelCol) (func() any, string) {
	shapes := 6
	if flatIsFloat(c.typ) {
		shapes = 8
	}
	shape := rng.Intn(shapes)
	if c.req && (shape == 1 || shape == 4) {
		shape = 5
	}
	nullOr := func(p float64, v func() any) func() any {
		if c.req {
			p = 0
		}
		return func() any {
			if rng.Float64() < p {
				return nil
			}
			return v()
		}
	}
	draw := func() any { return flatValue(rng, c.typ) }
	asFloat := func(v float64) any {
		if c.typ == ice.PrimitiveTypes.Float32 {
			return float32(v)
		}
		return v
	}
	switch shape {
	case 0:
		return nullOr(0.2, draw), "mixed"
	case 1:
		return func() any { return nil }, "all null"
	case 2:
		pool := []any{draw(), draw(), draw()}
		return nullOr(0.1, func() any { return pool[rng.Intn(len(pool))] }), "three values"
	case 3:
		v := draw()
		return nullOr(0.3, func() any { return v }), "constant"
	case 4:
		return nullOr(0.9, draw), "mostly null"
	case 5:
		return nullOr(0, draw), "no nulls"
	case 6:
		return nullOr(0.2, func() any { return asFloat(math.NaN()) }), "all NaN"
	default:
		return nullOr(0.2, func() any {
			return asFloat([]float64{math.NaN(), 0, math.Copysign(0, -1)}[rng.Intn(3)])
		}), "NaN and zeros"
	}
}

func genFlatModel(rng *rand.Rand) flatModel {
	var m flatModel
	m.rowGroup = 5 + rng.Intn(600)
	gens := make([]func() any, len(flatModelCols))
	for i, c := range flatModelCols {
		var d string
		gens[i], d = flatColGen(rng, c)
		m.desc = append(m.desc, c.name+": "+d)
	}
	nb := 1 + rng.Intn(6)
	total := 0
	for b := 0; b < nb || total == 0; b++ {
		rows := rng.Intn(400)
		if rng.Intn(8) == 0 {
			rows = 0
		}
		cols := make([][]any, len(flatModelCols))
		for r := 0; r < rows; r++ {
			for c := range cols {
				cols[c] = append(cols[c], gens[c]())
			}
		}
		total += rows
		m.batches = append(m.batches, cols)
	}
	return m
}

func (m flatModel) rows() int {
	n := 0
	for _, b := range m.batches {
		n += len(b[0])
	}
	return n
}

// column is all the values of column c.
func (m flatModel) column(c int) []any {
	var out []any
	for _, b := range m.batches {
		out = append(out, b[c]...)
	}
	return out
}

func buildFlatBatch(mem memory.Allocator, asc *arrow.Schema, cols [][]any, rows int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(mem, asc)
	defer bld.Release()
	for c, vals := range cols {
		fb := bld.Field(c)
		for _, v := range vals {
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch b := fb.(type) {
			case *array.BooleanBuilder:
				b.Append(v.(bool))
			case *array.Int32Builder:
				b.Append(v.(int32))
			case *array.Int64Builder:
				b.Append(v.(int64))
			case *array.Float32Builder:
				b.Append(v.(float32))
			case *array.Float64Builder:
				b.Append(v.(float64))
			case *array.Date32Builder:
				b.Append(arrow.Date32(v.(int32)))
			case *array.Time64Builder:
				b.Append(arrow.Time64(v.(int64)))
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(v.(int64)))
			case *array.StringBuilder:
				b.Append(v.(string))
			case *array.BinaryBuilder:
				b.Append(v.([]byte))
			default:
				panic(fmt.Sprintf("builder %T", fb))
			}
		}
	}
	rb := bld.NewRecordBatch()
	if int(rb.NumRows()) != rows {
		panic("rows")
	}
	return rb
}

// source yields the model's batches, built anew from mem.
func (m flatModel) source(mem memory.Allocator, asc *arrow.Schema) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, cols := range m.batches {
			if !yield(buildFlatBatch(mem, asc, cols, len(cols[0])), nil) {
				return
			}
		}
	}
}

// createdBy is the writer a data file's footer names.
func createdBy(t *testing.T, df ice.DataFile) string {
	t.Helper()
	r, err := file.OpenParquetFile(strings.TrimPrefix(df.FilePath(), "file://"), false)
	require.NoError(t, err)
	defer r.Close()
	return r.MetaData().GetCreatedBy()
}

// readBackRows decodes a data file with pqarrow and returns its rows and its table.
func readBackRows(t *testing.T, df ice.DataFile) int64 {
	t.Helper()
	r, err := file.OpenParquetFile(strings.TrimPrefix(df.FilePath(), "file://"), false)
	require.NoError(t, err)
	defer r.Close()
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	require.NoError(t, err)
	tb, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer tb.Release()
	return tb.NumRows()
}

func collectFiles(ctx context.Context, w writeFunc, tbl *table.Table, asc *arrow.Schema,
	src iter.Seq2[arrow.RecordBatch, error], opts ...table.WriteRecordOption) ([]ice.DataFile, error) {
	var out []ice.DataFile
	for df, err := range w(ctx, tbl, asc, src, opts...) {
		if err != nil {
			return out, err
		}
		out = append(out, df)
	}
	return out, nil
}

func hexShort(b []byte) string {
	if b == nil {
		return "<absent>"
	}
	if len(b) > 40 {
		return fmt.Sprintf("%s...(%d bytes)", hex.EncodeToString(b[:40]), len(b))
	}
	return hex.EncodeToString(b)
}

func sameCounts(a, b map[int]int64) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// diffDataFiles is every difference of the metrics of got (the flat writer's) from want
// (iceberg-go's), column sizes and file size aside.
func diffDataFiles(want, got ice.DataFile) []string {
	var d []string
	add := func(f string, args ...any) { d = append(d, fmt.Sprintf(f, args...)) }
	if want.Count() != got.Count() {
		add("Count: iceberg-go %d, flat %d", want.Count(), got.Count())
	}
	for _, m := range []struct {
		name string
		a, b map[int]int64
	}{
		{"ValueCounts", want.ValueCounts(), got.ValueCounts()},
		{"NullValueCounts", want.NullValueCounts(), got.NullValueCounts()},
		{"NaNValueCounts", want.NaNValueCounts(), got.NaNValueCounts()},
	} {
		if !sameCounts(m.a, m.b) {
			add("%s: iceberg-go %v, flat %v", m.name, m.a, m.b)
		}
	}
	for _, m := range []struct {
		name string
		a, b map[int][]byte
	}{
		{"LowerBoundValues", want.LowerBoundValues(), got.LowerBoundValues()},
		{"UpperBoundValues", want.UpperBoundValues(), got.UpperBoundValues()},
	} {
		ids := map[int]bool{}
		for id := range m.a {
			ids[id] = true
		}
		for id := range m.b {
			ids[id] = true
		}
		for id := range ids {
			a, b := m.a[id], m.b[id]
			if !bytes.Equal(a, b) || (a == nil) != (b == nil) {
				add("%s[%d %s]: iceberg-go %s, flat %s", m.name, id, flatModelCols[min(id, len(flatModelCols))-1].name,
					hexShort(a), hexShort(b))
			}
		}
	}
	if want.ContentType() != got.ContentType() {
		add("ContentType: iceberg-go %v, flat %v", want.ContentType(), got.ContentType())
	}
	if want.FileFormat() != got.FileFormat() {
		add("FileFormat: iceberg-go %v, flat %v", want.FileFormat(), got.FileFormat())
	}
	so := func(p *int) string {
		if p == nil {
			return "nil"
		}
		return strconv.Itoa(*p)
	}
	if so(want.SortOrderID()) != so(got.SortOrderID()) {
		add("SortOrderID: iceberg-go %s, flat %s", so(want.SortOrderID()), so(got.SortOrderID()))
	}
	if !(len(want.Partition()) == 0 && len(got.Partition()) == 0) && !reflect.DeepEqual(want.Partition(), got.Partition()) {
		add("Partition: iceberg-go %v, flat %v", want.Partition(), got.Partition())
	}
	if !slices.Equal(want.EqualityFieldIDs(), got.EqualityFieldIDs()) {
		add("EqualityFieldIDs: iceberg-go %v, flat %v", want.EqualityFieldIDs(), got.EqualityFieldIDs())
	}
	if len(want.SplitOffsets()) != len(got.SplitOffsets()) {
		add("len(SplitOffsets): iceberg-go %d, flat %d", len(want.SplitOffsets()), len(got.SplitOffsets()))
	}
	var wantSizes, gotSizes []int
	for id := range want.ColumnSizes() {
		wantSizes = append(wantSizes, id)
	}
	for id, n := range got.ColumnSizes() {
		gotSizes = append(gotSizes, id)
		if n <= 0 {
			add("ColumnSizes[%d] = %d", id, n)
		}
	}
	slices.Sort(wantSizes)
	slices.Sort(gotSizes)
	if !slices.Equal(wantSizes, gotSizes) {
		add("ColumnSizes columns: iceberg-go %v, flat %v", wantSizes, gotSizes)
	}
	slices.Sort(d)
	return d
}

// flatMetricsVariants are table properties that change the metrics.
var flatMetricsVariants = []struct {
	name  string
	props ice.Properties
	none  []string // columns without any metrics
}{
	{"default", nil, nil},
	{"full", ice.Properties{table.DefaultWriteMetricsModeKey: "full"}, nil},
	{"per-column", ice.Properties{
		"write.metadata.metrics.column.s":   "none",
		"write.metadata.metrics.column.tz":  "none",
		"write.metadata.metrics.column.bin": "counts",
		"write.metadata.metrics.column.d":   "counts",
		"write.metadata.metrics.column.rs":  "truncate(4)",
		"write.metadata.metrics.column.l":   "truncate(4)",
	}, []string{"s", "tz"}},
	{"counts-default", ice.Properties{
		table.DefaultWriteMetricsModeKey:     "counts",
		"write.metadata.metrics.column.s":    "full",
		"write.metadata.metrics.column.bin":  "truncate(4)",
		"write.metadata.metrics.column.f":    "full",
		"write.metadata.metrics.column.rs":   "none",
		"write.metadata.metrics.column.dt":   "truncate(2)",
		"write.metadata.metrics.column.rd":   "full",
		"write.metadata.metrics.column.bool": "full", // no such column
	}, []string{"rs"}},
	{"none-default", ice.Properties{
		table.DefaultWriteMetricsModeKey:  "none",
		"write.metadata.metrics.column.i": "full",
		"write.metadata.metrics.column.s": "truncate(1)",
	}, []string{"b", "l", "f", "d", "rd", "dt", "tm", "ts", "tz", "rs", "bin"}},
}

// flatEncodingProps are the Parquet properties of a seed's tables: the flat writer honours them
// all, and none may change the metrics.
func flatEncodingProps(rng *rand.Rand) ice.Properties {
	p := ice.Properties{}
	pick := func(key string, vals ...string) {
		if v := vals[rng.Intn(len(vals))]; v != "" {
			p[key] = v
		}
	}
	pick(table.ParquetPageRowLimitKey, "", "", "17", "100")
	pick(table.ParquetPageSizeBytesKey, "", "", "512", "4096")
	pick(table.ParquetDictSizeBytesKey, "", "", "64")
	pick(table.ParquetCompressionKey, "", "zstd", "uncompressed")
	pick("parquet.enable.dictionary", "", "", "false", "true")
	return p
}

func flatSeeds(t *testing.T) []int64 {
	if v := os.Getenv("FLATFILES_SEED"); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err)
		return []int64{s}
	}
	return []int64{1, 2, 3, time.Now().UnixNano()}
}

// The flat writer's data files have iceberg-go's metrics: for random batches of every supported
// type, under the metrics modes of the table's properties, the DataFile of the file flatparquet
// writes equals the one of iceberg-go's writer but for the sizes (the writers split pages
// differently). The flat files commit, and DuckDB reads back what the batches held. Seeds are
// printed; FLATFILES_SEED=<seed> replays one.
func TestFlatFilesMetricsAsIcebergGo(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"f"}, nil))
	for _, seed := range flatSeeds(t) {
		rng := rand.New(rand.NewSource(seed))
		m := genFlatModel(rng)
		enc := flatEncodingProps(rng)
		t.Logf("seed %d: %d rows in %d batches, row groups of %d, %v; %s", seed, m.rows(), len(m.batches),
			m.rowGroup, enc, strings.Join(m.desc, ", "))
		for vi, v := range flatMetricsVariants {
			props := ice.Properties{}
			for k, x := range enc {
				props[k] = x
			}
			for k, x := range v.props {
				props[k] = x
			}
			name := fmt.Sprintf("s%d_%s", seed, strings.ReplaceAll(v.name, "-", "_"))
			if seed < 0 {
				name = fmt.Sprintf("sm%d_%s", -seed, strings.ReplaceAll(v.name, "-", "_"))
			}
			tbl, err := cat.CreateTable(ctx, table.Identifier{"f", name}, flatModelSchema(), catalog.WithProperties(props))
			require.NoError(t, err)
			asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
			require.NoError(t, err)

			theirs, err := collectFiles(ctx, table.WriteRecords, tbl, asc, m.source(memory.DefaultAllocator, asc),
				table.WithParquetRowGroupLimit(m.rowGroup))
			require.NoError(t, err, "seed %d %s", seed, v.name)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			ours, err := collectFiles(ctx, icetable.WriteDataFilesOfRowGroups(m.rowGroup), tbl, asc, m.source(mem, asc))
			require.NoError(t, err, "seed %d %s", seed, v.name)
			mem.AssertSize(t, 0)
			require.Len(t, theirs, 1, "seed %d %s", seed, v.name)
			require.Len(t, ours, 1, "seed %d %s", seed, v.name)
			require.True(t, strings.HasPrefix(createdBy(t, theirs[0]), "parquet-go"), createdBy(t, theirs[0]))
			require.Equal(t, "connectd", createdBy(t, ours[0]), "seed %d %s: the flat writer wrote the file", seed, v.name)
			require.Empty(t, diffDataFiles(theirs[0], ours[0]), "seed %d, metrics %s (%v)", seed, v.name, props)

			// every column has its size, but the ones without metrics
			sizes := ours[0].ColumnSizes()
			for i, c := range flatModelCols {
				if slices.Contains(v.none, c.name) {
					require.NotContains(t, sizes, i+1, "seed %d %s: column %s", seed, v.name, c.name)
				} else {
					require.Greater(t, sizes[i+1], int64(0), "seed %d %s: column %s", seed, v.name, c.name)
				}
			}
			require.Equal(t, int64(m.rows()), readBackRows(t, ours[0]))
			require.Equal(t, int64(m.rows()), readBackRows(t, theirs[0]))

			if vi != 0 {
				continue
			}
			tx := tbl.NewTransaction()
			require.NoError(t, tx.AddDataFiles(ctx, ours, nil))
			committed, err := tx.Commit(ctx)
			require.NoError(t, err)
			query, labels, want := flatDuckQuery(m)
			got := duckRows(t, committed.MetadataLocation(), query)
			require.Len(t, got, 1)
			gotVals := strings.Split(got[0], "|")
			require.Len(t, gotVals, len(want))
			for i := range want {
				require.Equal(t, want[i], gotVals[i], "seed %d: DuckDB's %s", seed, labels[i])
			}
		}
	}
}

// flatDuckQuery is a query over the model's table, with a label of each column it selects and the
// values DuckDB should answer it with. Strings are compared by their length and MD5.
func flatDuckQuery(m flatModel) (query string, labels, want []string) {
	var sel, filterSel, filterLabels, filterWant []string
	add := func(s string, e any) {
		sel = append(sel, s)
		labels = append(labels, s)
		if e == nil {
			e = "<nil>"
		}
		want = append(want, fmt.Sprint(e))
	}
	filter := func(label, s string, e int) {
		filterSel = append(filterSel, s)
		filterLabels = append(filterLabels, label)
		filterWant = append(filterWant, strconv.Itoa(e))
	}
	add("count(*)", m.rows())
	for i, c := range flatModelCols {
		n := 0
		for _, v := range m.column(i) {
			if v != nil {
				n++
			}
		}
		add(fmt.Sprintf("count(%s)", c.name), n)
	}
	ints := func(name string) (lo, hi any, n map[int64]int) {
		n = map[int64]int{}
		for _, v := range m.column(flatModelColIndex(name)) {
			var x int64
			switch v := v.(type) {
			case nil:
				continue
			case int32:
				x = int64(v)
			case int64:
				x = v
			}
			n[x]++
			if lo == nil || x < lo.(int64) {
				lo = x
			}
			if hi == nil || x > hi.(int64) {
				hi = x
			}
		}
		return lo, hi, n
	}
	strs := func(name string) (lo, hi any, n map[string]int) {
		n = map[string]int{}
		for _, v := range m.column(flatModelColIndex(name)) {
			if v == nil {
				continue
			}
			x := v.(string)
			n[x]++
			if lo == nil || x < lo.(string) {
				lo = x
			}
			if hi == nil || x > hi.(string) {
				hi = x
			}
		}
		return lo, hi, n
	}
	day := func(d any) any {
		if d == nil {
			return nil
		}
		return time.Unix(d.(int64)*86400, 0).UTC().Format("2006-01-02")
	}
	for _, col := range []string{"i", "l"} {
		lo, hi, n := ints(col)
		add(fmt.Sprintf("min(%s)", col), lo)
		add(fmt.Sprintf("max(%s)", col), hi)
		if hi != nil {
			filter(col+" = max", fmt.Sprintf("(SELECT count(*) FROM t WHERE %s = %d)", col, hi), n[hi.(int64)])
			filter(col+" = min", fmt.Sprintf("(SELECT count(*) FROM t WHERE %s = %d)", col, lo), n[lo.(int64)])
		}
	}
	lo, hi, n := ints("dt")
	add("CAST(min(dt) AS VARCHAR)", day(lo))
	add("CAST(max(dt) AS VARCHAR)", day(hi))
	if hi != nil {
		filter("dt = max", fmt.Sprintf("(SELECT count(*) FROM t WHERE dt = DATE '%s')", day(hi)), n[hi.(int64)])
	}
	for _, col := range []string{"ts", "tz"} {
		lo, hi, n := ints(col)
		add(fmt.Sprintf("epoch_us(min(%s))", col), lo)
		add(fmt.Sprintf("epoch_us(max(%s))", col), hi)
		if col == "ts" && lo != nil {
			filter("ts = min", fmt.Sprintf("(SELECT count(*) FROM t WHERE ts = make_timestamp(%d))", lo), n[lo.(int64)])
		}
	}
	for _, col := range []string{"s", "rs"} {
		lo, hi, n := strs(col)
		for _, e := range []struct {
			agg string
			v   any
		}{{"min", lo}, {"max", hi}} {
			var l, sum any
			if e.v != nil {
				l, sum = len(e.v.(string)), fmt.Sprintf("%x", md5.Sum([]byte(e.v.(string))))
			}
			add(fmt.Sprintf("strlen(%s(%s))", e.agg, col), l)
			add(fmt.Sprintf("md5(%s(%s))", e.agg, col), sum)
			if e.v != nil {
				filter(col+" = "+e.agg, fmt.Sprintf("(SELECT count(*) FROM t WHERE %s = '%s')", col, e.v), n[e.v.(string)])
			}
		}
	}
	nans, trues := 0, 0
	for _, v := range m.column(flatModelColIndex("d")) {
		if f, ok := v.(float64); ok && math.IsNaN(f) {
			nans++
		}
	}
	for _, v := range m.column(flatModelColIndex("b")) {
		if v.(bool) {
			trues++
		}
	}
	add("count(*) FILTER (WHERE isnan(d))", nans)
	add("count(*) FILTER (WHERE b)", trues)
	binLen := 0
	for _, v := range m.column(flatModelColIndex("bin")) {
		if v != nil {
			binLen += len(v.([]byte))
		}
	}
	add("coalesce(sum(octet_length(bin)), 0)", binLen)
	sel = append(sel, filterSel...)
	labels = append(labels, filterLabels...)
	want = append(want, filterWant...)
	return "SELECT " + strings.Join(sel, ", ") + " FROM t", labels, want
}

// flatCaseSchema is the schema of the tables of TestFlatFilesOnlyForFlatTables, with extra columns.
func flatCaseSchema(extra ...ice.NestedField) *ice.Schema {
	fields := []ice.NestedField{
		{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
		{ID: 2, Name: "k", Type: ice.PrimitiveTypes.Int32},
		{ID: 3, Name: "name", Type: ice.PrimitiveTypes.String},
		{ID: 4, Name: "v", Type: ice.PrimitiveTypes.Float64},
	}
	return ice.NewSchema(0, append(fields, extra...)...)
}

// appendAny appends row i's value to b: nulls now and then in nullable columns.
func appendAny(t *testing.T, b array.Builder, dt arrow.DataType, i int, nullable bool) {
	if nullable && i%7 == 3 {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(i%2 == 0)
	case *array.Int32Builder:
		b.Append(int32(i % 3))
	case *array.Int64Builder:
		b.Append(int64(i))
	case *array.Float64Builder:
		b.Append(float64(i) / 4)
	case *array.StringBuilder:
		b.Append(fmt.Sprintf("name-%d", i%5))
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(int64(i)*100 + 7))
	case *extensions.UUIDBuilder:
		b.Append(uuid.UUID{15: byte(i), 14: byte(i >> 8)})
	case *array.FixedSizeBinaryBuilder:
		v := make([]byte, dt.(*arrow.FixedSizeBinaryType).ByteWidth)
		v[0] = byte(i)
		b.Append(v)
	case *array.StructBuilder:
		b.Append(true)
		st := dt.(*arrow.StructType)
		for f := range b.NumField() {
			appendAny(t, b.FieldBuilder(f), st.Field(f).Type, i, st.Field(f).Nullable)
		}
	case *array.ListBuilder:
		b.Append(true)
		lt := dt.(*arrow.ListType)
		for j := range i % 3 {
			appendAny(t, b.ValueBuilder(), lt.Elem(), i+j, false)
		}
	default:
		t.Fatalf("no values for builder %T of %v", b, dt)
	}
}

func flatCaseBatch(t *testing.T, mem memory.Allocator, asc *arrow.Schema, from, rows int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(mem, asc)
	defer bld.Release()
	for c, f := range asc.Fields() {
		for i := from; i < from+rows; i++ {
			appendAny(t, bld.Field(c), f.Type, i, f.Nullable)
		}
	}
	return bld.NewRecordBatch()
}

func oneBatch(b arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) { yield(b, nil) }
}

// Only flat tables get the flat writer, told apart by the writer the files' footers name: an
// unpartitioned, unsorted table of primitive columns the flat writer supports, with Parquet
// properties it honours. Every other table's files are iceberg-go's. Rows round-trip either way.
func TestFlatFilesOnlyForFlatTables(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"o"}, nil))
	props := func(kv ...string) []catalog.CreateTableOpt {
		p := ice.Properties{}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return []catalog.CreateTableOpt{catalog.WithProperties(p)}
	}
	spec := ice.NewPartitionSpec(ice.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "k", Transform: ice.IdentityTransform{}})
	order, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{1}, Transform: ice.IdentityTransform{},
		Direction: table.SortASC, NullOrder: table.NullsFirst}})
	require.NoError(t, err)
	extra := func(typ ice.Type) *ice.Schema {
		return flatCaseSchema(ice.NestedField{ID: 5, Name: "x", Type: typ})
	}
	cases := []struct {
		name   string
		schema *ice.Schema
		opts   []catalog.CreateTableOpt
		flat   bool
		mayErr bool // iceberg-go cannot write it: an error is fine
	}{
		{"default", flatCaseSchema(), nil, true, false},
		{"uncompressed", flatCaseSchema(), props("write.parquet.compression-codec", "uncompressed"), true, false},
		{"zstd-level-3", flatCaseSchema(), props("write.parquet.compression-codec", "zstd", "write.parquet.compression-level", "3"), true, false},
		{"no-dictionary", flatCaseSchema(), props("parquet.enable.dictionary", "false"), true, false},
		{"no-dictionary-column", flatCaseSchema(), props("write.parquet.dict-encoding-enabled.column.name", "false"), true, false},
		{"page-version-2", flatCaseSchema(), props("write.parquet.page-version", "2"), true, false},
		{"format-parquet", flatCaseSchema(), props("write.format.default", "PARQUET"), true, false},
		{"small-pages", flatCaseSchema(), props("write.parquet.page-row-limit", "10", "write.parquet.page-size-bytes", "100"), true, false},
		{"format-version-1", flatCaseSchema(), props("format-version", "1"), true, false},
		{"partitioned", flatCaseSchema(), []catalog.CreateTableOpt{catalog.WithPartitionSpec(&spec)}, false, false},
		{"sorted", flatCaseSchema(), []catalog.CreateTableOpt{catalog.WithSortOrder(order)}, false, false},
		{"struct", extra(&ice.StructType{FieldList: []ice.NestedField{
			{ID: 6, Name: "a", Type: ice.PrimitiveTypes.Int64}, {ID: 7, Name: "b", Type: ice.PrimitiveTypes.String}}}), nil, false, false},
		{"list", extra(&ice.ListType{ElementID: 6, Element: ice.PrimitiveTypes.Int64, ElementRequired: true}), nil, false, false},
		{"decimal", extra(ice.DecimalTypeOf(10, 2)), nil, false, false},
		{"uuid", extra(ice.PrimitiveTypes.UUID), nil, false, false},
		{"fixed", extra(ice.FixedTypeOf(4)), nil, false, false},
		{"page-version-1", flatCaseSchema(), props("write.parquet.page-version", "1"), false, false},
		{"snappy", flatCaseSchema(), props("write.parquet.compression-codec", "snappy"), false, false},
		{"gzip", flatCaseSchema(), props("write.parquet.compression-codec", "gzip"), false, false},
		{"bloom-filter", flatCaseSchema(), props("write.parquet.bloom-filter-enabled.column.name", "true"), false, false},
		{"bloom-filter-max-bytes", flatCaseSchema(), props("write.parquet.bloom-filter-max-bytes", "1048576"), false, false},
		{"row-group-limit-garbage", flatCaseSchema(), props("write.parquet.row-group-limit", "lots"), false, true},
		{"avro", flatCaseSchema(), props("write.format.default", "avro"), false, true},
		{"orc", flatCaseSchema(), props("write.format.default", "orc"), false, true},
	}
	const rows = 300
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tbl, err := cat.CreateTable(ctx, table.Identifier{"o", strings.ReplaceAll(c.name, "-", "_")}, c.schema, c.opts...)
			require.NoError(t, err)
			asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
			require.NoError(t, err)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			var files []ice.DataFile
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s: the write panicked: %v", c.name, r)
					}
				}()
				files, err = collectFiles(ctx, icetable.WriteDataFilesOfRowGroups(0), tbl, asc, oneBatch(flatCaseBatch(t, mem, asc, 0, rows)))
			}()
			mem.AssertSize(t, 0)
			if err != nil {
				require.True(t, c.mayErr, "%s: %v", c.name, err)
				t.Logf("%s: %v", c.name, err)
				return
			}
			require.NotEmpty(t, files)
			var n int64
			for _, df := range files {
				by := createdBy(t, df)
				if c.flat {
					require.Equal(t, "connectd", by, "%s: the flat writer writes the files", c.name)
				} else {
					require.True(t, strings.HasPrefix(by, "parquet-go"), "%s: iceberg-go writes the files, not %q", c.name, by)
				}
				require.Equal(t, df.Count(), readBackRows(t, df), c.name)
				n += df.Count()
			}
			require.Equal(t, int64(rows), n, c.name)
		})
	}
}

// dataFilesUnder lists the files under the table's data directory.
func dataFilesUnder(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	dir := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data")
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return out
}

// With a small target file size the flat writer rolls to new files between batches: several files
// of distinct names, every row once.
func TestFlatFilesRoll(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"r"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"r", "t"}, flatCaseSchema(),
		catalog.WithProperties(ice.Properties{table.WriteTargetFileSizeBytesKey: "4096"}))
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(t, err)
	const batches, per = 24, 500
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	src := func(yield func(arrow.RecordBatch, error) bool) {
		for b := range batches {
			if !yield(flatCaseBatch(t, mem, asc, b*per, per), nil) {
				return
			}
		}
	}
	files, err := collectFiles(ctx, icetable.WriteDataFilesOfRowGroups(0), tbl, asc, src)
	require.NoError(t, err)
	mem.AssertSize(t, 0)
	require.Greater(t, len(files), 3, "rolled to several files")
	names := map[string]bool{}
	var total int64
	seen := make([]int, batches*per)
	for _, df := range files {
		require.False(t, names[df.FilePath()], "file name %s twice", df.FilePath())
		names[df.FilePath()] = true
		require.Equal(t, "connectd", createdBy(t, df))
		require.Greater(t, df.Count(), int64(0))
		total += df.Count()

		r, err := file.OpenParquetFile(strings.TrimPrefix(df.FilePath(), "file://"), false)
		require.NoError(t, err)
		fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
		require.NoError(t, err)
		tb, err := fr.ReadTable(ctx)
		require.NoError(t, err)
		require.Equal(t, df.Count(), tb.NumRows())
		for _, chunk := range tb.Column(0).Data().Chunks() {
			for _, id := range chunk.(*array.Int64).Int64Values() {
				seen[id]++
			}
		}
		// the bounds of id are the file's
		lo := df.LowerBoundValues()[1]
		hi := df.UpperBoundValues()[1]
		require.Len(t, lo, 8)
		require.Len(t, hi, 8)
		tb.Release()
		r.Close()
	}
	require.Equal(t, int64(batches*per), total)
	for id, n := range seen {
		require.Equal(t, 1, n, "id %d", id)
	}
	require.Len(t, dataFilesUnder(t, tbl), len(files), "no other file in the data directory")

	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddDataFiles(ctx, files, nil))
	committed, err := tx.Commit(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{fmt.Sprintf("%d|%d|0|%d", batches*per, batches*per, batches*per-1)},
		duckRows(t, committed.MetadataLocation(), `SELECT count(*), count(DISTINCT id), min(id), max(id) FROM t`))
}

// A source that fails fails the call: the error comes out, no DataFile does, every batch is
// released, and no file is left in the table's data directory, even ones the flat writer finished
// before the error.
func TestFlatFilesSourceError(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"e"}, nil))
	boom := errors.New("source failed")
	for _, c := range []struct {
		name   string
		per    int
		target string
	}{
		{"small-batches", 100, ""},
		{"large-batches", 5000, ""},
		{"finished-files", 5000, "4096"},
		{"finished-files-small-batches", 2000, "4096"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := ice.Properties{}
			if c.target != "" {
				p[table.WriteTargetFileSizeBytesKey] = c.target
			}
			tbl, err := cat.CreateTable(ctx, table.Identifier{"e", strings.ReplaceAll(c.name, "-", "_")}, flatCaseSchema(),
				catalog.WithProperties(p))
			require.NoError(t, err)
			asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
			require.NoError(t, err)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			src := func(yield func(arrow.RecordBatch, error) bool) {
				for b := range 2 {
					if !yield(flatCaseBatch(t, mem, asc, b*c.per, c.per), nil) {
						return
					}
				}
				yield(nil, boom)
			}
			var errs []error
			for df, err := range icetable.WriteDataFilesOfRowGroups(0)(ctx, tbl, asc, src) {
				require.Nil(t, df, "no DataFile comes out")
				errs = append(errs, err)
			}
			mem.AssertSize(t, 0)
			require.Len(t, errs, 1)
			require.ErrorIs(t, errs[0], boom)
			require.Empty(t, dataFilesUnder(t, tbl), "the flat writer removes what it wrote")
		})
	}
	// the same source written whole makes files, of the flat writer (so the cases above are its)
	tbl, err := cat.CreateTable(ctx, table.Identifier{"e", "whole"}, flatCaseSchema(),
		catalog.WithProperties(ice.Properties{table.WriteTargetFileSizeBytesKey: "4096"}))
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(t, err)
	src := func(yield func(arrow.RecordBatch, error) bool) {
		for b := range 2 {
			if !yield(flatCaseBatch(t, memory.DefaultAllocator, asc, b*5000, 5000), nil) {
				return
			}
		}
	}
	files, err := collectFiles(ctx, icetable.WriteDataFilesOfRowGroups(0), tbl, asc, src)
	require.NoError(t, err)
	require.Len(t, files, 2)
	for _, df := range files {
		require.Equal(t, "connectd", createdBy(t, df))
	}
	require.Len(t, dataFilesUnder(t, tbl), 2)
}
