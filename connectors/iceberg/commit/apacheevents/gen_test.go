package apacheevents

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// A random event with the table (spec and schema) of its DataWritten files.
type genEvent struct {
	e      *Event
	spec   iceberg.PartitionSpec
	schema *iceberg.Schema
}

var genRunes = []rune("abcxyz09 _-./é€中😀\u0000\n\"\\")

func genString(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n + 1) {
		b.WriteRune(genRunes[r.IntN(len(genRunes))])
	}
	return b.String()
}

// genName is a non-empty string without null characters (Java's TableIdentifier rejects both).
func genName(r *rand.Rand) string {
	return "t" + strings.ReplaceAll(genString(r, 8), "\u0000", "")
}

func genBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func genUUID(r *rand.Rand) uuid.UUID { return uuid.UUID(genBytes(r, 16)) }

func genLong(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return int64(r.IntN(100))
	case 1:
		return -int64(r.IntN(1000))
	}
	return r.Int64() - r.Int64()
}

func genMicros(r *rand.Rand) time.Time {
	return time.UnixMicro(r.Int64N(1<<53) - 1<<52).UTC()
}

func optLongPtr(r *rand.Rand) *int64 {
	if r.IntN(3) == 0 {
		return nil
	}
	v := genLong(r)
	return &v
}

func optTimePtr(r *rand.Rand) *time.Time {
	if r.IntN(3) == 0 {
		return nil
	}
	v := genMicros(r)
	return &v
}

// genPartitionTypes are the source column types of the identity partitions of random specs.
func genPartitionType(r *rand.Rand) iceberg.Type {
	types := []iceberg.Type{iceberg.PrimitiveTypes.Bool, iceberg.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int64,
		iceberg.PrimitiveTypes.Float32, iceberg.PrimitiveTypes.Float64, iceberg.PrimitiveTypes.Date,
		iceberg.PrimitiveTypes.Time, iceberg.PrimitiveTypes.Timestamp, iceberg.PrimitiveTypes.TimestampTz,
		iceberg.PrimitiveTypes.TimestampNs, iceberg.PrimitiveTypes.TimestampTzNs, iceberg.PrimitiveTypes.String,
		iceberg.PrimitiveTypes.UUID, iceberg.PrimitiveTypes.Binary}
	switch n := r.IntN(len(types) + 2); {
	case n == len(types):
		return iceberg.FixedTypeOf(1 + r.IntN(20))
	case n == len(types)+1:
		p := 1 + r.IntN(38)
		return iceberg.DecimalTypeOf(p, r.IntN(p+1))
	default:
		return types[n]
	}
}

// genPartitionValue is a random value of t as iceberg-go holds it; floats are multiples of 1/8 below 1e6,
// which Java's toString writes as Go's 'f' format does.
func genPartitionValue(r *rand.Rand, t iceberg.Type) any {
	if r.IntN(5) == 0 {
		return nil
	}
	switch t := t.(type) {
	case iceberg.BooleanType:
		return r.IntN(2) == 0
	case iceberg.Int32Type:
		return int32(genLong(r))
	case iceberg.Int64Type:
		return genLong(r)
	case iceberg.Float32Type:
		return float32(r.IntN(8_000_000)-4_000_000) / 8
	case iceberg.Float64Type:
		return float64(r.IntN(8_000_000)-4_000_000) / 8
	case iceberg.DateType:
		return iceberg.Date(int32(genLong(r) % 3_000_000))
	case iceberg.TimeType:
		return iceberg.Time(r.Int64N(86_400_000_000))
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return iceberg.Timestamp(genMicros(r).UnixMicro())
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return iceberg.TimestampNano(genLong(r))
	case iceberg.StringType:
		return genString(r, 10)
	case iceberg.UUIDType:
		return genUUID(r)
	case iceberg.FixedType:
		return genBytes(r, t.Len())
	case iceberg.BinaryType:
		return genBytes(r, r.IntN(6))
	case iceberg.DecimalType:
		digits := []byte{'0'}
		for range r.IntN(t.Precision() + 1) {
			digits = append(digits, byte('0'+r.IntN(10)))
		}
		u, _ := new(big.Int).SetString(string(digits), 10)
		if r.IntN(2) == 0 {
			u.Neg(u)
		}
		return iceberg.Decimal{Val: decimal128.FromBigInt(u), Scale: t.Scale()}
	}
	panic(fmt.Sprint("type ", t))
}

func genEventOf(r *rand.Rand, typ PayloadType) genEvent {
	e := &Event{ID: genUUID(r), Type: typ, Timestamp: genMicros(r), GroupID: genString(r, 12), CommitID: genUUID(r)}
	if r.IntN(3) == 0 {
		e.Ext = genBytes(r, r.IntN(5))
	}
	table := func() {
		e.Table = TableReference{Catalog: genString(r, 6), Name: genName(r), Namespace: []string{}}
		for range r.IntN(3) {
			e.Table.Namespace = append(e.Table.Namespace, genName(r))
		}
	}
	g := genEvent{e: e}
	switch typ {
	case DataWritten:
		table()
		g.spec, g.schema = genTable(r)
		e.PartitionType = *g.spec.PartitionType(g.schema)
		e.DataFiles = genFiles(r, g.spec, &e.PartitionType, false)
		e.DeleteFiles = genFiles(r, g.spec, &e.PartitionType, true)
	case DataComplete:
		if r.IntN(5) > 0 {
			e.Assignments = []TopicPartitionOffset{}
			for range r.IntN(4) {
				e.Assignments = append(e.Assignments, TopicPartitionOffset{Topic: genString(r, 8),
					Partition: int32(genLong(r)), Offset: optLongPtr(r), Timestamp: optTimePtr(r)})
			}
		}
	case CommitToTable:
		table()
		e.SnapshotID, e.ValidThrough = optLongPtr(r), optTimePtr(r)
	case CommitComplete:
		e.ValidThrough = optTimePtr(r)
	}
	return g
}

func genTable(r *rand.Rand) (iceberg.PartitionSpec, *iceberg.Schema) {
	var fields []iceberg.NestedField
	var parts []iceberg.PartitionField
	for i := range r.IntN(4) {
		name := fmt.Sprintf("c%d", i)
		if r.IntN(3) == 0 {
			name = fmt.Sprintf("%d %s", i, genName(r)) // not an Avro name
		}
		fields = append(fields, iceberg.NestedField{ID: i + 1, Name: name, Type: genPartitionType(r)})
		parts = append(parts, iceberg.PartitionField{SourceIDs: []int{i + 1}, FieldID: 1000 + i, Name: name,
			Transform: iceberg.IdentityTransform{}})
	}
	if len(fields) == 0 {
		fields = append(fields, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	}
	return iceberg.NewPartitionSpecID(r.IntN(5), parts...), iceberg.NewSchema(0, fields...)
}

func genFiles(r *rand.Rand, spec iceberg.PartitionSpec, pt *iceberg.StructType, deletes bool) []iceberg.DataFile {
	if r.IntN(4) == 0 {
		return nil
	}
	files := []iceberg.DataFile{}
	for range r.IntN(3) {
		files = append(files, genFile(r, spec, pt, deletes))
	}
	return files
}

func genFile(r *rand.Rand, spec iceberg.PartitionSpec, pt *iceberg.StructType, deletes bool) iceberg.DataFile {
	content, format := iceberg.EntryContentData, []iceberg.FileFormat{iceberg.ParquetFile, iceberg.AvroFile, iceberg.OrcFile}[r.IntN(3)]
	if deletes {
		content = []iceberg.ManifestEntryContent{iceberg.EntryContentPosDeletes, iceberg.EntryContentEqDeletes}[r.IntN(2)]
		if content == iceberg.EntryContentPosDeletes && r.IntN(2) == 0 {
			format = iceberg.PuffinFile
		}
	}
	part, logical := map[int]any{}, map[int]string{}
	for _, f := range pt.FieldList {
		part[f.ID] = genPartitionValue(r, f.Type)
		if l := logicalTypeOf(f.Type); l != "" {
			logical[f.ID] = l
		}
	}
	b, err := iceberg.NewDataFileBuilder(spec, content, "s3://b/"+genName(r), format, part, logical, nil,
		int64(r.IntN(1000)), int64(r.IntN(1<<20)))
	if err != nil {
		panic(err)
	}
	longs := func() map[int]int64 {
		m := map[int]int64{}
		for range 1 + r.IntN(3) {
			m[1+r.IntN(20)] = int64(r.IntN(1000))
		}
		return m
	}
	bounds := func() map[int][]byte {
		m := map[int][]byte{}
		for range 1 + r.IntN(3) {
			m[1+r.IntN(20)] = genBytes(r, r.IntN(9))
		}
		return m
	}
	if r.IntN(2) == 0 {
		b.ColumnSizes(longs()).ValueCounts(longs()).NullValueCounts(longs()).NaNValueCounts(longs())
		b.LowerBoundValues(bounds()).UpperBoundValues(bounds())
	}
	if r.IntN(3) == 0 {
		b.KeyMetadata(genBytes(r, 1+r.IntN(4)))
	}
	if r.IntN(2) == 0 {
		b.SplitOffsets([]int64{4, 4 + int64(r.IntN(100))})
	}
	if content == iceberg.EntryContentEqDeletes {
		b.EqualityFieldIDs([]int{1 + r.IntN(3)})
	}
	if r.IntN(2) == 0 {
		b.SortOrderID(r.IntN(3))
	}
	if r.IntN(3) == 0 {
		b.FirstRowID(int64(r.IntN(1 << 40)))
	}
	if content == iceberg.EntryContentPosDeletes && r.IntN(2) == 0 {
		b.ReferencedDataFile("s3://b/" + genName(r)).ContentOffset(int64(r.IntN(100))).ContentSizeInBytes(int64(r.IntN(100)))
	}
	return b.Build()
}

func genEvents(r *rand.Rand, n int) []genEvent {
	out := make([]genEvent, n)
	for i := range out {
		out[i] = genEventOf(r, PayloadType(i%5))
	}
	return out
}

// seedOf draws a seed, or takes APACHEEVENTS_SEED to repeat a run.
func seedOf(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("APACHEEVENTS_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "APACHEEVENTS_SEED")
	}
	t.Logf("seed %d (APACHEEVENTS_SEED=%d repeats the run)", seed, seed)
	return seed
}

// TestRoundTrip: random events read back as they were written, and encoding what was read writes the same
// bytes again.
func TestRoundTrip(t *testing.T) {
	seed := seedOf(t)
	r := rand.New(rand.NewPCG(seed, 0))
	for i, g := range genEvents(r, 500) {
		b, err := Encode(g.e)
		require.NoError(t, err, "seed %d event %d", seed, i)
		d, err := Decode(b)
		require.NoError(t, err, "seed %d event %d", seed, i)
		var data, deletes []iceberg.DataFile
		if d.Type == DataWritten {
			require.True(t, d.PartitionType.Equals(&g.e.PartitionType), "seed %d event %d: partition type %v, want %v", seed, i, &d.PartitionType, &g.e.PartitionType)
			data, deletes, err = d.Files(g.spec, g.schema)
			require.NoError(t, err, "seed %d event %d", seed, i)
		}
		require.Equal(t, dump(t, g.e, g.e.DataFiles, g.e.DeleteFiles), dump(t, d, data, deletes), "seed %d event %d", seed, i)
		require.Equal(t, g.e.Ext, d.Ext, "seed %d event %d", seed, i)
		d.DataFiles, d.DeleteFiles = data, deletes
		again, err := Encode(d)
		require.NoError(t, err, "seed %d event %d", seed, i)
		requireSameBytes(t, b, again)
	}
}
