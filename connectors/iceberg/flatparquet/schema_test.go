package flatparquet_test

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"
)

// allKindsCols is one column of each type, optional and required, dictionary every other one.
func allKindsCols() []colSpec {
	var cols []colSpec
	for _, req := range []bool{false, true} {
		for k := range numKinds {
			i := len(cols)
			cols = append(cols, colSpec{kind: k})
			c := &cols[i].col
			c.Name = k.String()
			if req {
				c.Name += "_req"
			}
			c.FieldID = 100 + i*3
			c.Type = k.iceberg()
			c.Required = req
			c.Dictionary = i%2 == 0
		}
	}
	return cols
}

// TestSchemaMatchesArrowGo: each column's Parquet schema (physical, logical and converted type,
// field id, repetition) reads back as that of arrow-go's file of the same batches, and arrow-go
// reads the file back as iceberg-go's Arrow schema.
func TestSchemaMatchesArrowGo(t *testing.T) {
	cols := allKindsCols()
	r := newRand(7)
	tc := &tcase{cols: cols, batches: genBatches(r, cols, 1, func() int { return 20 })}
	data, _, err := writeCase(tc)
	if err != nil {
		t.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(icebergSchema(cols), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	// the schema of arrow-go's own file as arrow-go reads it back: the reader derives the
	// converted type from the logical type (a timestamp without zone reads back without
	// TIMESTAMP_MICROS from either file)
	theirs, err := writeArrowGo(tc)
	if err != nil {
		t.Fatal(err)
	}
	theirRdr, err := file.NewParquetReader(bytes.NewReader(theirs))
	if err != nil {
		t.Fatal(err)
	}
	defer theirRdr.Close()
	want := theirRdr.MetaData().Schema

	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	got := rdr.MetaData().Schema
	if got.NumColumns() != want.NumColumns() {
		t.Fatalf("%d columns, arrow-go: %d", got.NumColumns(), want.NumColumns())
	}
	for i := range want.NumColumns() {
		g, w := got.Column(i), want.Column(i)
		name := w.Name()
		if g.Name() != name {
			t.Errorf("column %d: name %q, want %q", i, g.Name(), name)
		}
		if g.PhysicalType() != w.PhysicalType() {
			t.Errorf("%s: physical type %s, arrow-go %s", name, g.PhysicalType(), w.PhysicalType())
		}
		if !g.LogicalType().Equals(w.LogicalType()) {
			t.Errorf("%s: logical type %s, arrow-go %s", name, g.LogicalType(), w.LogicalType())
		}
		if g.ConvertedType() != w.ConvertedType() {
			t.Errorf("%s: converted type %s, arrow-go %s", name, g.ConvertedType(), w.ConvertedType())
		}
		if g.SchemaNode().FieldID() != w.SchemaNode().FieldID() {
			t.Errorf("%s: field id %d, arrow-go %d", name, g.SchemaNode().FieldID(), w.SchemaNode().FieldID())
		}
		if g.SchemaNode().RepetitionType() != w.SchemaNode().RepetitionType() {
			t.Errorf("%s: repetition %s, arrow-go %s", name, g.SchemaNode().RepetitionType(), w.SchemaNode().RepetitionType())
		}
		if g.ColumnOrder() != parquet.ColumnOrders.TypeDefinedOrder {
			t.Errorf("%s: column order is not TypeDefinedOrder", name)
		}
	}
	if got.Root().NumFields() != len(cols) {
		t.Errorf("root has %d fields, want %d (flat)", got.Root().NumFields(), len(cols))
	}

	// arrow-go maps the file back to iceberg-go's Arrow types with the field ids.
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	rsc, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range asc.Fields() {
		rf := rsc.Field(i)
		if rf.Name != f.Name || !arrow.TypeEqual(rf.Type, f.Type) || rf.Nullable != f.Nullable {
			t.Errorf("read back as %s, iceberg-go's Arrow field is %s", rf, f)
		}
		wantID, _ := f.Metadata.GetValue("PARQUET:field_id")
		gotID, _ := rf.Metadata.GetValue("PARQUET:field_id")
		if gotID != wantID {
			t.Errorf("%s: read back field id %q, want %q", f.Name, gotID, wantID)
		}
	}
}
