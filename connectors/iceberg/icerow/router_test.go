package icerow_test

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// oneTable is the Tables of a router whose records all go to one table of spec, spooled into
// columns spool (nil: not spooled).
type oneTable struct {
	spec  icerow.TableSpec
	spool *icerow.SpoolColumns
}

func (o *oneTable) Table(string) *icerow.TableSpec { return &o.spec }

func (o *oneTable) Spool(string, *connect.SinkRecord) *icerow.SpoolColumns { return o.spool }

// routerCase is a router of one static table of spec and a record of BenchShapeRecord's shape.
func routerCase(t testing.TB, spec icerow.TableSpec, spool *icerow.SpoolColumns) (*icerow.Router, *oneTable, *connect.SinkRecord) {
	rec, _ := icebergtest.BenchShapeRecord(t)
	conv := icebergtest.SchemalessConverter(t)
	members, ok := conv.SchemalessJSONObject(rec, nil)
	require.True(t, ok)
	tables := &oneTable{spec: spec, spool: spool}
	rt := icerow.NewRouter(icerow.Routing{Tables: []string{"db.t"}}, tables)
	r := &connect.SinkRecord{Topic: "t", Value: &jsonvalue.Value{Bytes: rec, Topic: "t", Conv: conv, Members: members}}
	return rt, tables, r
}

// spoolColumns are the columns of an append table's open segment for records of BenchShapeRecord.
func spoolColumns(t testing.TB) *icerow.SpoolColumns {
	rec, _ := icebergtest.BenchShapeRecord(t)
	sc := icebergtest.ArrowSchemaOf(t, string(rec))
	return &icerow.SpoolColumns{SchemaID: 1, Fields: sc.Fields(), Fits: map[*ice.StructType]error{}}
}

// TestRouterJSONSpooled: a JSON object is converted until its struct type is known to fit the spooled
// columns; then the objects of that shape are read from their bytes, into the row the converted one
// makes, without an allocation.
func TestRouterJSONSpooled(t *testing.T) {
	rt, tables, r := routerCase(t, icerow.TableSpec{}, spoolColumns(t))
	now := time.Unix(0, 0)
	tgs, err := rt.Route(r, now)
	require.NoError(t, err)
	require.Len(t, tgs, 1)
	converted := tgs[0]
	require.Nil(t, converted.Shape)
	require.NotNil(t, converted.Row)
	require.Equal(t, icerow.OpInsert, converted.Op)

	tgs, err = rt.Route(r, now)
	require.NoError(t, err)
	require.Nil(t, tgs[0].Shape, "not known to fit: converted")

	tables.spool.Fits[converted.Struct] = nil
	tgs, err = rt.Route(r, now)
	require.NoError(t, err)
	require.Len(t, tgs, 1)
	require.NotNil(t, tgs[0].Shape)
	require.Nil(t, tgs[0].Row)
	require.Same(t, converted.Struct, tgs[0].Struct)

	// the bytes into the columns make the converted row
	fields := tables.spool.Fields
	sc := icebergtest.ArrowSchemaOf(t, string(r.Value.(*jsonvalue.Value).Bytes))
	fromBytes, fromRow := array.NewRecordBuilder(memory.DefaultAllocator, sc), array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer fromBytes.Release()
	defer fromRow.Release()
	tgs[0].Shape.AppendScanned(fromBytes.Fields(), r.Value.(*jsonvalue.Value).Bytes)
	require.NoError(t, icerow.AppendRow(fromRow.Fields(), fields, converted.Row))
	a, b := fromBytes.NewRecordBatch(), fromRow.NewRecordBatch()
	defer a.Release()
	defer b.Release()
	require.Equal(t, icerow.RecordToRows(b), icerow.RecordToRows(a))

	allocs := testing.AllocsPerRun(100, func() {
		if tgs, err := rt.Route(r, now); err != nil || tgs[0].Shape == nil {
			t.Fatal("not read from the bytes")
		}
	})
	require.Zero(t, allocs, "allocations per record read from its bytes into spooled columns")
}

// TestRouterJSONKeyed: a keyed upsert table's JSON objects of the shape last converted are read for
// their key and version only, which are those of the converted row, without an allocation.
func TestRouterJSONKeyed(t *testing.T) {
	rt, _, r := routerCase(t, icerow.TableSpec{IDColumns: []string{"id", "name"}, Upsert: true, Delta: true, VersionColumn: "version"}, nil)
	now := time.Unix(0, 0)
	tgs, err := rt.Route(r, now)
	require.NoError(t, err)
	require.Len(t, tgs, 1)
	converted := tgs[0]
	require.False(t, converted.AsBytes)
	require.Equal(t, icerow.OpUpdate, converted.Op)
	require.Equal(t, icerow.KeyOf(converted.Row, []string{"id", "name"}), string(converted.Key))
	require.Equal(t, converted.Row["version"], converted.Version)
	key := string(converted.Key)

	tgs, err = rt.Route(r, now)
	require.NoError(t, err)
	require.Len(t, tgs, 1)
	require.True(t, tgs[0].AsBytes)
	require.Nil(t, tgs[0].Row)
	require.Equal(t, icerow.OpUpdate, tgs[0].Op)
	require.Same(t, converted.Struct, tgs[0].Struct)
	require.Equal(t, key, string(tgs[0].Key))
	require.Equal(t, converted.Version, tgs[0].Version)

	allocs := testing.AllocsPerRun(100, func() {
		if tgs, err := rt.Route(r, now); err != nil || !tgs[0].AsBytes {
			t.Fatal("not read from the bytes")
		}
	})
	// the version, an int64 in an interface, is the one allocation a record of this shape makes
	// unless it is a small integer
	require.LessOrEqual(t, allocs, 1.0, "allocations per keyed record read from its bytes")
}

// BenchmarkRouterJSON: one record of BenchShapeRecord's shape through Router.Route on the JSON fast
// paths: read into an append table's spooled columns (spooled: the scan; the append is the
// segment's, BenchmarkJSONShapeAppend), and read for a keyed table's key and version (keyed).
func BenchmarkRouterJSON(b *testing.B) {
	for _, bc := range []struct {
		name  string
		spec  icerow.TableSpec
		spool func(testing.TB) *icerow.SpoolColumns
	}{
		{"spooled", icerow.TableSpec{}, spoolColumns},
		{"keyed", icerow.TableSpec{IDColumns: []string{"id"}, Upsert: true, Delta: true}, func(testing.TB) *icerow.SpoolColumns { return nil }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rt, tables, r := routerCase(b, bc.spec, bc.spool(b))
			now := time.Unix(0, 0)
			tgs, err := rt.Route(r, now)
			require.NoError(b, err)
			if sp := tables.spool; sp != nil {
				sp.Fits[tgs[0].Struct] = nil
			}
			b.SetBytes(int64(len(r.Value.(*jsonvalue.Value).Bytes)))
			b.ReportAllocs()
			for range b.N {
				tgs, _ := rt.Route(r, now)
				if tgs[0].Shape == nil && !tgs[0].AsBytes {
					b.Fatal("not read from the bytes")
				}
			}
		})
	}
}
