package flatparquet_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/connectd/connectd/connectors/iceberg/flatparquet"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// duckPython is the project's reader venv's python (installed on first use), which has duckdb.
func duckPython(t *testing.T) string { return icebergtest.Python(t) }

const duckAggregates = `
import duckdb, json, sys
path, sql = sys.argv[1], sys.argv[2]
con = duckdb.connect()
row = con.execute(sql.replace("FILE", "read_parquet('%s', file_row_number=true)" % path.replace("'", "''"))).fetchone()
out = []
for v in row:
    if v is None:
        out.append("NULL")
    elif isinstance(v, float):
        out.append(repr(v))
    else:
        out.append(str(v))
json.dump(out, sys.stdout)
`

// duckExpr is one aggregate DuckDB computes and its value from the input.
type duckExpr struct {
	what, sql, want string
	float           bool // compare as numbers (DuckDB's repr and Go's formatting differ)
}

func qi(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

const duckMod = 1000003

// duckAggs gives the aggregates of column spec with values vals (in file order).
func duckAggs(spec colSpec, vals []cell) []duckExpr {
	c := qi(spec.col.Name)
	var nonNull []cell
	var rowsOf []int64
	for i, v := range vals {
		if !v.null {
			nonNull = append(nonNull, v)
			rowsOf = append(rowsOf, int64(i))
		}
	}
	nullOr := func(f func() string) string {
		if len(nonNull) == 0 {
			return "NULL"
		}
		return f()
	}
	ex := []duckExpr{{what: "count", sql: fmt.Sprintf("CAST(count(%s) AS VARCHAR)", c), want: strconv.Itoa(len(nonNull))}}
	st := modelStat(spec.kind, vals)
	// weighted sums: sum((row+1) * f(value)) checks that each value is in its row
	weighted := func(sqlTerm string, f func(v cell) int64) duckExpr {
		s := new(big.Int)
		for i, v := range nonNull {
			s.Add(s, new(big.Int).Mul(big.NewInt(rowsOf[i]+1), big.NewInt(f(v))))
		}
		return duckExpr{what: "weighted sum", sql: fmt.Sprintf("CAST(sum(CAST(file_row_number + 1 AS HUGEINT) * (%s)) AS VARCHAR)", sqlTerm), want: nullOr(func() string { return s.String() })}
	}
	intAggs := func(asBig string) {
		ex = append(ex,
			duckExpr{what: "min", sql: fmt.Sprintf("CAST(min(%s) AS VARCHAR)", asBig), want: nullOr(func() string { return strconv.FormatInt(int64(st.min.u), 10) })},
			duckExpr{what: "max", sql: fmt.Sprintf("CAST(max(%s) AS VARCHAR)", asBig), want: nullOr(func() string { return strconv.FormatInt(int64(st.max.u), 10) })},
			weighted(fmt.Sprintf("(%s) %% %d", asBig, duckMod), func(v cell) int64 { return int64(v.u) % duckMod }))
	}
	switch spec.kind {
	case kBool:
		ex = append(ex,
			duckExpr{what: "trues", sql: fmt.Sprintf("CAST(sum(CAST(%s AS INT)) AS VARCHAR)", c), want: nullOr(func() string {
				n := 0
				for _, v := range nonNull {
					n += int(v.u)
				}
				return strconv.Itoa(n)
			})},
			weighted(fmt.Sprintf("CASE WHEN %s IS NULL THEN NULL WHEN %s THEN 1 ELSE 2 END", c, c), func(v cell) int64 { return 2 - int64(v.u) }))
	case kInt32, kInt64:
		intAggs("CAST(" + c + " AS BIGINT)")
	case kDate:
		intAggs("(" + c + " - DATE '1970-01-01')")
	case kTime, kTimestamp, kTimestampTz:
		intAggs("epoch_us(" + c + ")")
	case kFloat32, kFloat64:
		f := func(v cell) float64 {
			if spec.kind == kFloat32 {
				return float64(math.Float32frombits(uint32(v.u)))
			}
			return math.Float64frombits(v.u)
		}
		fmin, fmax := math.Inf(1), math.Inf(-1)
		for _, v := range nonNull {
			fmin, fmax = math.Min(fmin, f(v)), math.Max(fmax, f(v))
		}
		ex = append(ex,
			duckExpr{what: "min", sql: fmt.Sprintf("CAST(min(%s) AS DOUBLE)", c), want: nullOr(func() string { return fmtFloat(fmin) }), float: true},
			duckExpr{what: "max", sql: fmt.Sprintf("CAST(max(%s) AS DOUBLE)", c), want: nullOr(func() string { return fmtFloat(fmax) }), float: true},
			weighted(fmt.Sprintf("CASE WHEN %s IS NULL THEN NULL WHEN %s > 0 THEN 1 WHEN %s < 0 THEN 3 ELSE 7 END", c, c, c), func(v cell) int64 {
				switch x := f(v); {
				case x > 0:
					return 1
				case x < 0:
					return 3
				}
				return 7
			}),
			weighted(fmt.Sprintf("CAST(CASE WHEN isinf(%s) THEN 0 ELSE round(%s) %% %d END AS BIGINT)", c, c, duckMod), func(v cell) int64 {
				x := f(v)
				if math.IsInf(x, 0) {
					return 0
				}
				return int64(math.Mod(math.Round(x), duckMod))
			}))
	case kString, kBinary:
		length := "strlen"
		if spec.kind == kBinary {
			length = "octet_length"
		}
		ex = append(ex,
			duckExpr{what: "min", sql: fmt.Sprintf("hex(min(%s))", c), want: nullOr(func() string { return strings.ToUpper(hex.EncodeToString([]byte(st.min.s))) })},
			duckExpr{what: "max", sql: fmt.Sprintf("hex(max(%s))", c), want: nullOr(func() string { return strings.ToUpper(hex.EncodeToString([]byte(st.max.s))) })},
			weighted(fmt.Sprintf("%s(%s)", length, c), func(v cell) int64 { return int64(len(v.s)) }),
			weighted(fmt.Sprintf("CASE WHEN %s(%s) = 0 THEN 0 ELSE CAST('0x' || left(hex(%s), 2) AS INTEGER) + 1 END", length, c, c), func(v cell) int64 {
				if len(v.s) == 0 {
					return 0
				}
				return int64(v.s[0]) + 1
			}))
	}
	return ex
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// sameDuck compares DuckDB's answer with the expected one.
func sameDuck(e duckExpr, got string) bool {
	if got == e.want {
		return true
	}
	if !e.float {
		return false
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(e.want, 64)
	return err1 == nil && err2 == nil && g == w
}

// TestDuckDBReads: DuckDB reads a file with every type, nulls, several row groups and pages,
// dictionary and plain columns, and computes the same aggregates as the input gives.
func TestDuckDBReads(t *testing.T) {
	py := duckPython(t)
	for _, codec := range []flatparquet.Codec{flatparquet.Zstd, flatparquet.Uncompressed} {
		t.Run(fmt.Sprint("codec=", codec), func(t *testing.T) {
			r := newRand(int64(42 + codec))
			cols := allKindsCols()
			// a second dictionary variant of each column with low cardinality
			for i, c := range allKindsCols() {
				c.col.Name += "_d"
				c.col.FieldID = 1000 + i
				c.col.Dictionary = !c.col.Dictionary
				cols = append(cols, c)
			}
			tc := &tcase{cols: cols}
			gens := make([]*valueGen, len(cols))
			for i, c := range cols {
				g := newValueGen(r, c.kind, c.col.Required)
				g.special = 0.05
				if !c.col.Required {
					g.nullP = 0.2
				}
				if i >= len(cols)/2 {
					g.pool = nil
					if c.kind != kBool {
						pg := &valueGen{k: c.kind, special: 0.2, maxLen: 30}
						for range 8 {
							g.pool = append(g.pool, pg.fresh(r))
						}
					}
				}
				gens[i] = g
			}
			for range 3 {
				bd := batchData{cols: make([][]cell, len(cols))} // (sliced batches are TestRoundTripArrowGo's)
				for c, spec := range cols {
					for range 1500 {
						bd.cols[c] = append(bd.cols[c], duckSafe(spec.kind, gens[c].next(r)))
					}
				}
				tc.batches = append(tc.batches, bd)
			}
			tc.opts = flatparquet.Options{RowGroupRows: 1700, PageRows: 300, PageBytes: 2048, DictBytes: 512, Codec: codec}
			data, md, err := writeCase(tc)
			if err != nil {
				t.Fatal(err)
			}
			if md.NumRowGroups() < 2 {
				t.Fatalf("want several row groups, got %d", md.NumRowGroups())
			}
			path := filepath.Join(t.TempDir(), "f.parquet")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			exprs := []duckExpr{{what: "rows", sql: "CAST(count(*) AS VARCHAR)", want: strconv.Itoa(tc.totalRows())}}
			owner := []string{"file"}
			for c, spec := range cols {
				for _, e := range duckAggs(spec, tc.column(c)) {
					exprs = append(exprs, e)
					owner = append(owner, spec.col.Name)
				}
			}
			sqls := make([]string, len(exprs))
			for i, e := range exprs {
				sqls[i] = e.sql
			}
			sql := "SELECT " + strings.Join(sqls, ",\n  ") + "\nFROM FILE"
			cmd := exec.Command(py, "-c", duckAggregates, path, sql)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("duckdb: %v\n%s\nSQL:\n%s", err, stderr.String(), sql)
			}
			var got []string
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("duckdb output %s: %v", out, err)
			}
			if len(got) != len(exprs) {
				t.Fatalf("duckdb gave %d values, want %d", len(got), len(exprs))
			}
			for i, e := range exprs {
				if !sameDuck(e, got[i]) {
					t.Errorf("column %s: %s (%s): DuckDB %s, want %s", owner[i], e.what, e.sql, got[i], e.want)
				}
			}
		})
	}
}

// duckSafe keeps values in DuckDB's ranges (its timestamps and dates have infinity sentinels and
// narrower ranges; TIME is within a day) and drops NaN (DuckDB orders NaN above +Inf).
func duckSafe(k kind, v cell) cell {
	if v.null {
		return v
	}
	switch k {
	case kDate:
		v.u = uint64(int64(int32(v.u)) % 2_000_000)
	case kTime:
		x := int64(v.u) % 86_400_000_000
		if x < 0 {
			x += 86_400_000_000
		}
		v.u = uint64(x)
	case kTimestamp, kTimestampTz:
		v.u = uint64(int64(v.u) % 9_000_000_000_000_000)
	case kFloat32:
		if f := math.Float32frombits(uint32(v.u)); f != f {
			v.u = uint64(math.Float32bits(1.5))
		}
	case kFloat64:
		if math.IsNaN(math.Float64frombits(v.u)) {
			v.u = math.Float64bits(-2.25)
		}
	}
	return v
}
