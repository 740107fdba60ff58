package apacheevents

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect/avrotype"
)

func TestNotEvent(t *testing.T) {
	for _, b := range [][]byte{nil, {0xC2}, {0xC2, 0x02}, []byte(`{"type":"start"}`)} {
		require.False(t, IsEvent(b))
		_, err := Decode(b)
		require.True(t, errors.Is(err, ErrNotEvent), "%q: %v", b, err)
	}
}

// TestTruncated: every proper prefix of an event is an error, not a panic nor an event.
func TestTruncated(t *testing.T) {
	for _, name := range goldenNames {
		b, _ := golden(t, name)
		for n := 2; n < len(b); n++ {
			_, err := Decode(b[:n])
			require.Error(t, err, "%s cut at %d", name, n)
			require.False(t, errors.Is(err, ErrNotEvent))
		}
	}
}

// TestTrailingBytes: like Java, the reader ignores what follows the datum, but for the extension.
func TestTrailingBytes(t *testing.T) {
	b, _ := golden(t, "commit-complete")
	e, err := Decode(append(b, 1, 2, 3))
	require.NoError(t, err)
	require.Nil(t, e.Ext)

	e.Ext = []byte{}
	withExt, err := Encode(e)
	require.NoError(t, err)
	d, err := Decode(withExt)
	require.NoError(t, err)
	require.Equal(t, []byte{}, d.Ext)

	_, err = Decode(withExt[:len(withExt)-1])
	require.ErrorContains(t, err, "extension", "the marker without a length")
	e.Ext = []byte("xyz")
	withExt, err = Encode(e)
	require.NoError(t, err)
	_, err = Decode(withExt[:len(withExt)-1])
	require.ErrorContains(t, err, "extension")
}

// TestWriterSchema: the reader goes by the writer's schema and field ids, not by a fixed layout: fields in
// another order, fields it does not know, names in other namespaces.
func TestWriterSchema(t *testing.T) {
	pt := ordersSpec.PartitionType(ordersSchema)
	sch, err := eventSchema(DataWritten, pt)
	require.NoError(t, err)
	unknown := fld(99_999, "from_the_future", true, recordNode("x.Future", fld(1, "a", false, primitive(avrotype.String))))
	sch.fields = append([]*field{unknown}, sch.fields...)
	sch.fields[0], sch.fields[3] = sch.fields[3], sch.fields[0]
	payload := sch.fields[sch.fieldByID(idEventPayload)].typ
	payload.fields = append(payload.fields, fld(99_998, "more", false, primitive(avrotype.Long)))
	payload.fields[0], payload.fields[1] = payload.fields[1], payload.fields[0]
	arr, _ := payload.fields[payload.fieldByID(idDataWrittenData)].typ.optionOf()
	file := arr.items
	file.fields[0], file.fields[20] = file.fields[20], file.fields[0]
	future := recordNode("y.Z")
	future.fields = []*field{}
	file.fields = append(file.fields, fld(88_888, "zz", false, future))

	commit, id := uuid.New(), uuid.New()
	ts := time.UnixMicro(123).UTC()
	tref := newRecord(payload.fields[payload.fieldByID(idDataWrittenTable)].typ, map[int]any{
		idTableCatalog: "c", idTableNamespace: []any{"n"}, idTableName: "t"})
	partNode := file.fields[file.fieldByID(idPartition)].typ
	dataFile := newRecord(file, map[int]any{
		idContent: int32(0), idFilePath: "s3://x", idFileFormat: "parquet", idSpecID: int32(2),
		idPartition: &record{n: partNode, vals: []any{"bob", int32(3)}}, idRecordCount: int64(5), idFileSize: int64(6),
		88_888: &record{n: future},
	})
	vals := newRecord(payload, map[int]any{idDataWrittenCommit: commit[:], idDataWrittenTable: tref,
		idDataWrittenData: []any{dataFile}, 99_998: int64(7)})
	ev := newRecord(sch, map[int]any{idEventID: id[:], idEventType: int32(DataWritten), idEventTimestamp: int64(123),
		idEventGroupID: "g", idEventPayload: vals, 99_999: &record{n: unknown.typ.branches[1], vals: []any{"later"}}})
	b, err := appendJavaUTF(append([]byte(nil), magic...), schemaJSON(sch))
	require.NoError(t, err)
	w := writer{b: b}
	require.NoError(t, w.value(sch, ev))

	e, err := Decode(w.b)
	require.NoError(t, err)
	require.Equal(t, id, e.ID)
	require.Equal(t, ts, e.Timestamp)
	require.Equal(t, commit, e.CommitID)
	require.Equal(t, TableReference{Catalog: "c", Namespace: []string{"n"}, Name: "t"}, e.Table)
	data, deletes, err := e.Files(ordersSpec, ordersSchema)
	require.NoError(t, err)
	require.Nil(t, deletes)
	require.Len(t, data, 1)
	require.Equal(t, iceberg.ParquetFile, data[0].FileFormat())
	require.Equal(t, map[int]any{1000: "bob", 1001: iceberg.Date(3)}, data[0].Partition())
	require.Equal(t, int64(5), data[0].Count())
}

func TestEncodeErrors(t *testing.T) {
	_, err := Encode(&Event{Type: 9})
	require.ErrorContains(t, err, "unknown payload type")
	_, err = Encode(&Event{Type: CommitToTable})
	require.ErrorContains(t, err, "without a table name")
	_, err = Encode(&Event{Type: CommitToTable, Table: TableReference{Name: "t", Namespace: []string{"a\x00"}}})
	require.ErrorContains(t, err, "null character")

	pt := ordersSpec.PartitionType(ordersSchema)
	file := func(content iceberg.ManifestEntryContent, part map[int]any) iceberg.DataFile {
		b, err := iceberg.NewDataFileBuilder(ordersSpec, content, "s3://f", iceberg.ParquetFile, part, nil, nil, 1, 1)
		require.NoError(t, err)
		return b.Build()
	}
	e := &Event{Type: DataWritten, Table: TableReference{Name: "t"}, PartitionType: *pt}
	e.DataFiles = []iceberg.DataFile{file(iceberg.EntryContentData, map[int]any{1000: 5})}
	_, err = Encode(e)
	require.ErrorContains(t, err, "partition field 1000 (name): value 5 (int) for type string")
	e.DataFiles = []iceberg.DataFile{file(iceberg.EntryContentEqDeletes, nil)}
	_, err = Encode(e)
	require.ErrorContains(t, err, "in the wrong list")
	e.DataFiles, e.DeleteFiles = nil, []iceberg.DataFile{file(iceberg.EntryContentData, nil)}
	_, err = Encode(e)
	require.ErrorContains(t, err, "in the wrong list")
	e.DeleteFiles, e.DataFiles = nil, []iceberg.DataFile{file(iceberg.EntryContentData, map[int]any{1000: "a"})}
	e.PartitionType = iceberg.StructType{}
	_, err = Encode(e)
	require.ErrorContains(t, err, "partition field 1000 is not in the event's partition type")
}

// TestPartitionValues: the Go values a caller may hold for each partition type.
func TestPartitionValues(t *testing.T) {
	day := time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		typ  iceberg.Type
		in   any
		want any
	}{
		{iceberg.PrimitiveTypes.Int32, 7, int32(7)},
		{iceberg.PrimitiveTypes.Int32, iceberg.Int32Literal(7), int32(7)},
		{iceberg.PrimitiveTypes.Int64, int32(7), int64(7)},
		{iceberg.PrimitiveTypes.Date, iceberg.Date(19787), int32(19787)},
		{iceberg.PrimitiveTypes.Date, day, int32(19787)},
		{iceberg.PrimitiveTypes.TimestampTz, day, day.UnixMicro()},
		{iceberg.PrimitiveTypes.TimestampTz, iceberg.Timestamp(5), int64(5)},
		{iceberg.PrimitiveTypes.Time, time.Second, int64(1_000_000)},
		{iceberg.PrimitiveTypes.UUID, "6f1c7a1e-1111-4222-8333-944455556666", uuid.MustParse("6f1c7a1e-1111-4222-8333-944455556666").String()},
		{iceberg.DecimalTypeOf(9, 2), iceberg.Decimal{Val: decimalOf(-1), Scale: 2}, []byte{0xff, 0xff, 0xff, 0xff}},
		{iceberg.DecimalTypeOf(9, 2), iceberg.Decimal{Val: decimalOf(256), Scale: 2}, []byte{0, 0, 1, 0}},
	} {
		got, err := toAvroPartition(c.in, c.typ)
		require.NoError(t, err, "%v %v", c.typ, c.in)
		if u, ok := got.([]byte); ok && c.typ.Equals(iceberg.PrimitiveTypes.UUID) {
			got = uuid.UUID(u).String()
		}
		require.Equal(t, c.want, got, "%v %v", c.typ, c.in)
	}
	_, err := toAvroPartition(iceberg.Decimal{Val: decimalOf(1), Scale: 3}, iceberg.DecimalTypeOf(9, 2))
	require.ErrorContains(t, err, "scale 3")
	_, err = toAvroPartition(int64(1)<<40, iceberg.PrimitiveTypes.Int32)
	require.Error(t, err)
	_, err = toAvroPartition([]byte{1}, iceberg.FixedTypeOf(2))
	require.Error(t, err)
	require.Equal(t, 4, decimalRequiredBytes(9))
	require.Equal(t, 16, decimalRequiredBytes(38))
	require.Equal(t, 1, decimalRequiredBytes(2))
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{"a_b1": "a_b1", "näme": "näme", "1st": "_1st", "a b": "a_x20b",
		"s😀": "s_xD83D_xDE00", "a.b": "a_x2Eb", "_": "_"} {
		require.Equal(t, want, sanitize(in), in)
	}
}

func decimalOf(v int64) decimal128.Num { return decimal128.FromI64(v) }
