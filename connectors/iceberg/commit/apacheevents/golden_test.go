package apacheevents

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// The golden events are written by the Apache sink's own classes (testdata/iceberg/apache-events/capture.sh):
// NAME.b64 the bytes, NAME.txt every field as the Java classes decode them.
var goldenDir = filepath.Join("..", "..", "..", "..", "testdata", "iceberg", "apache-events")

func golden(t *testing.T, name string) (b []byte, text string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(goldenDir, name+".b64"))
	require.NoError(t, err)
	b, err = base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	txt, err := os.ReadFile(filepath.Join(goldenDir, name+".txt"))
	require.NoError(t, err)
	return b, string(txt)
}

// The tables of Gen.java.
var (
	ordersSchema = iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)})
	ordersSpec = iceberg.NewPartitionSpecID(2,
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "name", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "ts_day", Transform: iceberg.DayTransform{}})
	typesSchema, typesSpec = typesTable()
)

func typesTable() (*iceberg.Schema, iceberg.PartitionSpec) {
	types := []iceberg.Type{iceberg.PrimitiveTypes.Bool, iceberg.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int64,
		iceberg.PrimitiveTypes.Float32, iceberg.PrimitiveTypes.Float64, iceberg.PrimitiveTypes.Date,
		iceberg.PrimitiveTypes.Time, iceberg.PrimitiveTypes.Timestamp, iceberg.PrimitiveTypes.TimestampTz,
		iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.UUID, iceberg.FixedTypeOf(3),
		iceberg.PrimitiveTypes.Binary, iceberg.DecimalTypeOf(9, 2), iceberg.DecimalTypeOf(38, 10),
		iceberg.PrimitiveTypes.TimestampTzNs, iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.String,
		iceberg.PrimitiveTypes.TimestampTz}
	names := []string{"b", "i", "l", "f", "d", "dt", "t", "ts", "tstz", "s", "u", "fx", "bin", "dec", "dec38", "tsns",
		"näme 1", "s\U0001F600", "tstz2"}
	var fields []iceberg.NestedField
	var parts []iceberg.PartitionField
	for i, typ := range types {
		fields = append(fields, iceberg.NestedField{ID: i + 1, Name: names[i], Type: typ, Required: true})
		if i < 18 {
			parts = append(parts, iceberg.PartitionField{SourceIDs: []int{i + 1}, FieldID: 1000 + i, Name: names[i],
				Transform: iceberg.IdentityTransform{}})
		}
	}
	parts = append(parts,
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1018, Name: "l_bucket", Transform: iceberg.BucketTransform{NumBuckets: 16}},
		iceberg.PartitionField{SourceIDs: []int{10}, FieldID: 1019, Name: "s_trunc", Transform: iceberg.TruncateTransform{Width: 4}},
		iceberg.PartitionField{SourceIDs: []int{8}, FieldID: 1020, Name: "ts_year", Transform: iceberg.YearTransform{}},
		iceberg.PartitionField{SourceIDs: []int{9}, FieldID: 1021, Name: "tstz_month", Transform: iceberg.MonthTransform{}},
		iceberg.PartitionField{SourceIDs: []int{19}, FieldID: 1022, Name: "tstz2_hour", Transform: iceberg.HourTransform{}})
	return iceberg.NewSchema(0, fields...), iceberg.NewPartitionSpecID(7, parts...)
}

var goldenTables = map[string]struct {
	spec   iceberg.PartitionSpec
	schema *iceberg.Schema
}{
	"data-written-unpartitioned": {*iceberg.UnpartitionedSpec, ordersSchema},
	"data-written-null":          {*iceberg.UnpartitionedSpec, ordersSchema},
	"data-written-partitioned":   {ordersSpec, ordersSchema},
	"data-written-types":         {typesSpec, typesSchema},
}

var goldenNames = []string{"start-commit", "data-written-unpartitioned", "data-written-null",
	"data-written-partitioned", "data-written-types", "data-complete", "data-complete-null", "commit-to-table",
	"commit-to-table-null", "commit-complete", "commit-complete-null"}

// TestGoldenDecode: every field of the Java classes' events reads as the Java classes read it, and encoding
// the decoded event again gives the same bytes.
func TestGoldenDecode(t *testing.T) {
	for _, name := range goldenNames {
		t.Run(name, func(t *testing.T) {
			b, want := golden(t, name)
			require.True(t, IsEvent(b))
			e, err := Decode(b)
			require.NoError(t, err)
			var data, deletes []iceberg.DataFile
			if e.Type == DataWritten {
				tbl := goldenTables[name]
				data, deletes, err = e.Files(tbl.spec, tbl.schema)
				require.NoError(t, err)
				require.True(t, e.PartitionType.Equals(tbl.spec.PartitionType(tbl.schema)),
					"partition type %v, spec's %v", &e.PartitionType, tbl.spec.PartitionType(tbl.schema))
			}
			require.Equal(t, want, dump(t, e, data, deletes))

			e.DataFiles, e.DeleteFiles = data, deletes
			again, err := Encode(e)
			require.NoError(t, err)
			require.Equal(t, string(schemaText(t, b)), string(schemaText(t, again)), "schema")
			requireSameBytes(t, b, again)
		})
	}
}

func schemaText(t *testing.T, b []byte) string {
	s, _, err := readJavaUTF(b[2:])
	require.NoError(t, err)
	return s
}

// TestGoldenFields spells out the fields of a few golden events.
func TestGoldenFields(t *testing.T) {
	commit := uuid.MustParse("6f1c7a1e-1111-4222-8333-944455556666")
	b, _ := golden(t, "start-commit")
	e, err := Decode(b)
	require.NoError(t, err)
	require.Equal(t, StartCommit, e.Type)
	require.Equal(t, "connect-cdc-golden", e.GroupID)
	require.Equal(t, commit, e.CommitID)
	require.Equal(t, uuid.MustParse("00000000-0000-4000-8000-000000000001"), e.ID)
	require.Equal(t, time.UnixMicro(1709600000123457).UTC(), e.Timestamp)

	b, _ = golden(t, "data-complete")
	e, err = Decode(b)
	require.NoError(t, err)
	require.Equal(t, DataComplete, e.Type)
	require.Len(t, e.Assignments, 4)
	require.Equal(t, "topic-a", e.Assignments[0].Topic)
	require.Equal(t, int64(42), *e.Assignments[0].Offset)
	require.Equal(t, time.UnixMicro(1709600000123456-5).UTC(), *e.Assignments[0].Timestamp)
	require.Nil(t, e.Assignments[1].Offset)
	require.Nil(t, e.Assignments[1].Timestamp)
	require.Equal(t, int32(3), e.Assignments[3].Partition)
	require.Equal(t, time.UnixMicro(-1).UTC(), *e.Assignments[3].Timestamp)

	b, _ = golden(t, "commit-to-table")
	e, err = Decode(b)
	require.NoError(t, err)
	require.Equal(t, TableReference{Catalog: "prod", Namespace: []string{"db", "sales"}, Name: "orders"}, e.Table)
	require.Equal(t, int64(8123456789012345678), *e.SnapshotID)

	b, _ = golden(t, "data-written-partitioned")
	e, err = Decode(b)
	require.NoError(t, err)
	data, deletes, err := e.Files(ordersSpec, ordersSchema)
	require.NoError(t, err)
	require.Len(t, data, 2)
	require.Equal(t, map[int]any{1000: "alice", 1001: iceberg.Date(19787)}, data[0].Partition())
	require.Equal(t, map[int]any{1000: nil, 1001: nil}, data[1].Partition())
	require.Equal(t, []int64{4}, data[0].SplitOffsets())
	require.Equal(t, map[int][]byte{1: {1, 0, 0, 0, 0, 0, 0, 0}, 2: []byte("alice"), 3: le(1709600000123456 - 86_400_000_000)}, data[0].LowerBoundValues())
	require.Len(t, deletes, 2)
	require.Equal(t, iceberg.EntryContentEqDeletes, deletes[0].ContentType())
	require.Equal(t, []int{1, 2}, deletes[0].EqualityFieldIDs())
	require.Equal(t, iceberg.EntryContentPosDeletes, deletes[1].ContentType())
	require.Equal(t, iceberg.PuffinFile, deletes[1].FileFormat())
	require.Equal(t, data[0].FilePath(), *deletes[1].ReferencedDataFile())
	require.Equal(t, int64(4), *deletes[1].ContentOffset())
	require.Equal(t, int64(40), *deletes[1].ContentSizeInBytes())

	_, _, err = e.Files(*iceberg.UnpartitionedSpec, ordersSchema)
	require.ErrorContains(t, err, "written with spec 2")
}

func le(v int64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

// requireSameBytes fails at the first differing byte instead of printing both.
func requireSameBytes(t *testing.T, want, got []byte) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			t.Fatalf("bytes differ at %d of %d: want % x, got % x", i, len(want), want[i:min(i+16, len(want))], got[i:min(i+16, len(got))])
		}
	}
	require.Equal(t, len(want), len(got), "length")
}
