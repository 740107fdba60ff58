package icetable_test

import (
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// FuzzJSONValueRow: a JSON object that appendJSON takes for the shape of its converted map becomes the
// row segment.add makes of that map.
func FuzzJSONValueRow(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"n":-0012,"amount":1e3,"s":"x","ok":true}`,
		`{"amount":-0.0,"id":123456789012345678,"s":"","ok":false,"n":null}`,
		`{"id":7,"amount":2,"s":"a b","x":"ignored"}`,
		`{"id":1,"id":2}`, `{"s":"tab\t"}`, `{"amount":1E-400,"n":00}`, `{"amount":1.5e400}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	conv := icebergtest.SchemalessConverter(f)
	sc := icebergtest.ArrowSchemaOf(f, `{"id":1,"n":1,"amount":1.5,"s":"x","ok":true}`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, st, members, ok := icebergtest.ConvertedShape(t, conv, data)
		if !ok {
			return
		}
		slow, err := icetable.NewSegment(nil, dir, icetable.TP{Topic: "t", Partition: 0}, 1, sc)
		require.NoError(t, err)
		defer slow.Remove()
		js := icerow.CompileShape(st, slow.SchemaID, slow.Fields)
		if js == nil {
			return
		}
		var want []icerow.Row
		for _, listed := range [][]jsonvalue.Member{nil, members} { // found in the bytes, and listed
			fast, err := icetable.NewSegment(nil, dir, icetable.TP{Topic: "t", Partition: 0}, 1, sc)
			require.NoError(t, err)
			defer fast.Remove()
			if ok, err := fast.AppendJSON(js, data, listed, 0); !ok || err != nil {
				require.NoError(t, err)
				require.Nil(t, listed, "%q: taken as found in the bytes, refused as listed", data)
				return
			}
			if want == nil {
				require.NoError(t, slow.Add(m, 0), "appendJSON took %q, segment.add refused its map", data)
				want = segmentRows(t, slow, sc)
			}
			require.Equal(t, want, segmentRows(t, fast, sc), "%q (listed: %v)", data, listed != nil)
		}
	})
}

func segmentRows(t *testing.T, s *icetable.Segment, sc *arrow.Schema) []icerow.Row {
	require.NoError(t, s.Seal())
	var rows []icerow.Row
	var n, skipped int
	for rec, err := range s.Batches(sc, s.SchemaID, 0, &n, &skipped) {
		require.NoError(t, err)
		rows = append(rows, icerow.RecordToRows(rec)...)
		rec.Release()
	}
	return rows
}

// FuzzJSONRoundRows: a keyed record buffered as bytes and planned as such gets, from keyRows, the
// values of the converted map in the planned columns, and from
// buildDataRecord the data (or delete) row that buildRecord makes of the converted map, for the table
// created from its own shape, for another and for the delete rows of a table keyed by id.
func FuzzJSONRoundRows(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"n":-0012,"amount":1e3,"s":"x","ok":true}`, `{"id":"a","n":7,"v":"x"}`,
		`{"amount":-0.0,"id":123456789012345678,"s":"","ok":false,"n":null}`, `{"id":1,"id":2}`,
		`{"id":7,"amount":2,"s":"a b","x":"ignored"}`, `{"s":"tab\t"}`, `{"amount":1E-400,"n":00}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	conv := icebergtest.SchemalessConverter(f)
	other := icebergtest.ArrowSchemaOf(f, `{"id":1,"n":1,"amount":1.5,"s":"x","ok":true}`)
	deletes := icebergtest.ArrowSchemaOf(f, `{"id":1}`) // the equality-delete rows of a table keyed by id
	f.Fuzz(func(t *testing.T, data []byte) {
		m, st, _, ok := icebergtest.ConvertedShape(t, conv, data)
		if !ok {
			return
		}
		row, _, err := icerow.NewSchemaCache().RecordValue(nil, m)
		require.NoError(t, err)
		jv := &jsonvalue.Value{Bytes: data, Topic: "t", Conv: conv}
		names := []string{"id", "n", "missing"}
		for k := range m {
			names = append(names, k)
		}
		recs := []icetable.Rec{{Op: icerow.OpUpdate, Schema: st, JSON: jv}}
		require.NoError(t, icetable.KeyRows(recs, names, true))
		for _, n := range names {
			require.Equal(t, row[n], recs[0].Row[n], "%q: column %s", data, n)
		}
		own, err := table.SchemaToArrowSchema(ice.NewSchema(0, st.FieldList...), nil, true, false)
		require.NoError(t, err)
		for _, sc := range []*arrow.Schema{own, other, deletes} {
			want, werr := icerow.BuildRecord(sc, []icerow.Row{row})
			got, gerr := icetable.BuildDataRecord(sc, sc.Fields(), 0, []*icetable.Rec{{Op: icerow.OpUpdate, Schema: st, JSON: jv}}, map[*ice.StructType]*icerow.JSONShape{})
			if werr != nil {
				require.Error(t, gerr, "%q: buildRecord refused the map, buildDataRecord took the bytes", data)
				continue
			}
			require.NoError(t, gerr, "%q", data)
			for c := 0; c < int(want.NumCols()); c++ {
				require.True(t, array.Equal(want.Column(c), got.Column(c)), "%q: column %s: %v != %v", data, want.ColumnName(c), want.Column(c), got.Column(c))
			}
			want.Release()
			got.Release()
		}
	})
}

// BenchmarkSpoolWrite: rows of benchShapeRecord from their bytes into a segment
// and its spool file, sealed at the end: the Put side of an append table. sys-ns/row is the
// process's system CPU per row (mostly the kernel copying batches into the file's pages: cheap for
// pages the system has cached before, dear on a virtual machine whose host backs guest memory on
// first touch); spool-B/row is the file's size per row.
func BenchmarkSpoolWrite(b *testing.B) {
	rec, st := icebergtest.BenchShapeRecord(b)
	s, err := icetable.NewSegment(nil, b.TempDir(), icetable.TP{Topic: "t", Partition: 0}, 1, icebergtest.ArrowSchemaOf(b, string(rec)))
	require.NoError(b, err)
	defer s.Remove()
	js := icerow.CompileShape(st, 1, s.Fields)
	require.NotNil(b, js)
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	b.SetBytes(int64(len(rec)))
	b.ResetTimer()
	for i := range b.N {
		if ok, err := s.AppendJSON(js, rec, nil, int64(i)); !ok || err != nil {
			b.Fatal("not appended", err)
		}
	}
	require.NoError(b, s.Seal())
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	b.ReportMetric(float64(r1.Stime.Nano()-r0.Stime.Nano())/float64(b.N), "sys-ns/row")
	b.ReportMetric(float64(s.Size)/float64(b.N), "spool-B/row")
}
