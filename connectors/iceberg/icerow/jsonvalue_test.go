package icerow_test

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// FuzzJSONKeyShape: for a JSON object that keyShape.read takes, the key and version are those of
// the converted map (keyOf, the version column's value), for ids of string and long members.
func FuzzJSONKeyShape(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","n":7,"v":"x"}`, `{"n":-0012,"id":"k1","v":null}`, `{"id":"a","id":"b","n":1}`,
		`{"id":"tab\t","n":1}`, `{"id":1,"n":123456789012345678}`, `{"n":1,"id":"é"}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	conv := icebergtest.SchemalessConverter(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, st, members, ok := icebergtest.ConvertedShape(t, conv, data)
		if !ok {
			return
		}
		for _, o := range []struct {
			IDColumns     []string
			VersionColumn string
		}{
			{IDColumns: []string{"id"}, VersionColumn: "n"},
			{IDColumns: []string{"n", "id"}, VersionColumn: "v"},
		} {
			ks := icerow.CompileKeyShape(st, o.IDColumns, o.VersionColumn)
			if ks == nil {
				continue
			}
			kb, ver, ok := ks.Read(data, nil)
			k := string(kb) // kb is valid until the next read
			lk, lver, lok := ks.Read(data, members)
			require.Equal(t, ok, lok, "%q: read found in the bytes and listed", data)
			if !ok {
				continue
			}
			require.Equal(t, k, string(lk), "%q", data)
			require.Equal(t, ver, lver, "%q", data)
			row, _, err := icerow.NewSchemaCache().RecordValue(nil, m)
			require.NoError(t, err)
			require.Equal(t, icerow.KeyOf(row, o.IDColumns), k, "%q", data)
			require.Equal(t, row[o.VersionColumn], ver, "%q", data)
		}
	})
}

// BenchmarkJSONShapeAppend: benchShapeRecord from its bytes into the builders of its columns, its
// members found in the bytes or listed by the converter's check (jsonvalue.Value.Members).
func BenchmarkJSONShapeAppend(b *testing.B) {
	rec, st := icebergtest.BenchShapeRecord(b)
	listed, ok := icebergtest.SchemalessConverter(b).SchemalessJSONObject(rec, nil)
	require.True(b, ok)
	for _, bc := range []struct {
		name    string
		members []jsonvalue.Member
	}{{"found", nil}, {"listed", listed}} {
		b.Run(bc.name, func(b *testing.B) {
			sc := icebergtest.ArrowSchemaOf(b, string(rec))
			bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			defer bld.Release()
			js := icerow.CompileShape(st, 1, sc.Fields())
			require.NotNil(b, js)
			b.SetBytes(int64(len(rec)))
			b.ReportAllocs()
			for i := range b.N {
				if !js.AppendRow(bld.Fields(), rec, bc.members) {
					b.Fatal("not of the shape")
				}
				if i%icetable.SpoolBatchRows == icetable.SpoolBatchRows-1 {
					bld.NewRecordBatch().Release()
				}
			}
		})
	}
}

// TestScanListedLikeFound: for random objects against random shapes, memberScan.scan over the members
// the converter listed says what it says finding them in the bytes, with the same value bounds.
func TestScanListedLikeFound(t *testing.T) {
	seed := icebergtest.ModelSeed(t, "JSONVALUE_SEED", 3)
	rng := rand.New(rand.NewSource(seed))
	conv := icebergtest.SchemalessConverter(t)
	names := []string{"id", "n", "s", "a\"b", "é", "long-member-name-of-forty-bytes-or-so-xx"}
	values := []string{`1`, `-7`, `007`, `123456789012345678`, `-123456789012345678`, `1234567890123456789`,
		`-1234567890123456789`, `1.5`, `-0.0`, `1e3`, `2E-2`, `"x"`, `""`, `"tab\t"`, `"é"`,
		`"` + strings.Repeat("p", 70) + `"`, `true`, `false`, `null`, `{"a":1}`, `[1,"]"]`, `[]`}
	kinds := []ice.Type{ice.PrimitiveTypes.Int64, ice.PrimitiveTypes.Float64, ice.PrimitiveTypes.String, ice.PrimitiveTypes.Bool}
	ws := []string{"", "", " ", "\n\t "}
	taken := 0
	for iter := range 20000 {
		st := &ice.StructType{}
		for i, nm := range names {
			if rng.Intn(2) == 0 {
				st.FieldList = append(st.FieldList, ice.NestedField{ID: i + 1, Name: nm, Type: kinds[rng.Intn(len(kinds))]})
			}
		}
		ms := icerow.NewMemberScan(st)
		// members of the shape with values of their kinds, mostly, else any
		type member struct{ name, value string }
		var mbs []member
		if rng.Intn(2) == 0 {
			for _, f := range st.FieldList {
				v := values[rng.Intn(len(values))]
				if rng.Intn(5) > 0 {
					v = map[ice.Type][]string{
						ice.PrimitiveTypes.Int64:   {`1`, `-7`, `007`, `123456789012345678`, `-123456789012345678`},
						ice.PrimitiveTypes.Float64: {`1.5`, `-0.0`, `1e3`, `2E-2`},
						ice.PrimitiveTypes.String:  {`"x"`, `""`, `"é"`, `"` + strings.Repeat("p", 70) + `"`},
						ice.PrimitiveTypes.Bool:    {`true`, `false`},
					}[f.Type][rng.Intn(2)]
				}
				mbs = append(mbs, member{f.Name, v})
			}
			if rng.Intn(3) == 0 {
				mbs = append(mbs, member{names[rng.Intn(len(names))], values[rng.Intn(len(values))]})
			}
			if rng.Intn(2) == 0 {
				rng.Shuffle(len(mbs), func(i, j int) { mbs[i], mbs[j] = mbs[j], mbs[i] })
			}
		} else {
			for range rng.Intn(7) {
				mbs = append(mbs, member{names[rng.Intn(len(names))], values[rng.Intn(len(values))]})
			}
		}
		var b strings.Builder
		b.WriteString(ws[rng.Intn(len(ws))] + "{")
		for m, mb := range mbs {
			if m > 0 {
				b.WriteString(ws[rng.Intn(len(ws))] + ",")
			}
			fmt.Fprintf(&b, "%s%q%s:%s%s", ws[rng.Intn(len(ws))], mb.name, ws[rng.Intn(len(ws))], ws[rng.Intn(len(ws))], mb.value)
		}
		b.WriteString(ws[rng.Intn(len(ws))] + "}")
		data := []byte(b.String())
		listed, ok := conv.SchemalessJSONObject(data, []jsonvalue.Member{})
		require.True(t, ok, "seed %d, iteration %d: %q", seed, iter, data)
		for range 2 { // the second time with the member order learnt
			found := ms.Scan(data, nil)
			pos, end := slices.Clone(ms.Pos), slices.Clone(ms.End)
			require.Equal(t, found, ms.Scan(data, listed), "seed %d, iteration %d: %q", seed, iter, data)
			if found {
				taken++
				require.Equal(t, pos, ms.Pos, "seed %d, iteration %d: %q", seed, iter, data)
				for m, p := range pos {
					if p >= 0 {
						require.Equal(t, end[m], ms.End[m], "seed %d, iteration %d: %q", seed, iter, data)
					}
				}
			}
		}
	}
	t.Logf("%d of the scans took the object", taken)
}

// A member scan that learned the order of a shape's names tells them from names of the same length
// that differ in one byte, for names of every length around the 8 bytes it compares as one word, at
// the end of an object too.
func TestMemberScanNearNames(t *testing.T) {
	for n := 1; n <= 10; n++ {
		name := strings.Repeat("n", n-1) + "e"
		st := &ice.StructType{FieldList: []ice.NestedField{
			{ID: 1, Name: name, Type: ice.PrimitiveTypes.Int64},
			{ID: 2, Name: "x", Type: ice.PrimitiveTypes.Int64},
		}}
		ms := icerow.NewMemberScan(st)
		require.NotNil(t, ms)
		record := func(first string) []byte { return fmt.Appendf(nil, `{"x":2,"%s":1}`, first) }
		require.True(t, ms.Scan(record(name), nil), "%q", name)
		for at := range n {
			near := []byte(name)
			near[at]++
			require.False(t, ms.Scan(record(string(near)), nil), "%q taken for %q", near, name)
			require.True(t, ms.Scan(record(name), nil), "%q", name)
		}
		require.False(t, ms.Scan(record(name+"e"), nil), "%q taken for %q", name+"e", name)
		require.False(t, ms.Scan(record(name[:n-1]), nil), "%q taken for %q", name[:n-1], name)
	}
}
