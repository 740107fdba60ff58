package apacheevents

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connect/values"
)

// dataFileValue is the GenericDataFile (or GenericDeleteFile) record n of f, as BaseFile.get writes it.
func dataFileValue(f iceberg.DataFile, n *node, pt *iceberg.StructType) (*record, error) {
	partNode := n.fields[n.fieldByID(idPartition)].typ
	part, err := partitionValue(f.Partition(), partNode, pt)
	if err != nil {
		return nil, err
	}
	vals := map[int]any{
		idContent:     int32(f.ContentType()),
		idFilePath:    f.FilePath(),
		idFileFormat:  string(f.FileFormat()),
		idSpecID:      f.SpecID(),
		idPartition:   part,
		idRecordCount: f.Count(),
		idFileSize:    f.FileSizeBytes(),
		idKeyMetadata: optBytes(f.KeyMetadata()),
	}
	for id, m := range map[int]map[int]int64{idColumnSizes: f.ColumnSizes(), idValueCounts: f.ValueCounts(),
		idNullCounts: f.NullValueCounts(), idNaNCounts: f.NaNValueCounts()} {
		vals[id] = mapValue(n, id, m, func(v int64) any { return v })
	}
	for id, m := range map[int]map[int][]byte{idLowerBounds: f.LowerBoundValues(), idUpperBounds: f.UpperBoundValues()} {
		vals[id] = mapValue(n, id, m, func(v []byte) any { return v })
	}
	if s := f.SplitOffsets(); s != nil {
		vals[idSplitOffsets] = anySlice(s, func(v int64) any { return v })
	}
	if ids := f.EqualityFieldIDs(); ids != nil {
		vals[idEqualityIDs] = anySlice(ids, func(v int) any { return int32(v) })
	}
	if id := f.SortOrderID(); id != nil {
		vals[idSortOrderID] = int32(*id)
	}
	vals[idFirstRowID] = optLong(f.FirstRowID())
	if p := f.ReferencedDataFile(); p != nil {
		vals[idReferencedFile] = *p
	}
	vals[idContentOffset] = optLong(f.ContentOffset())
	vals[idContentSize] = optLong(f.ContentSizeInBytes())
	return newRecord(n, vals), nil
}

// optBytes keeps a nil slice null: a nil []byte in an any is not a nil any.
func optBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

func anySlice[T any](s []T, conv func(T) any) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = conv(v)
	}
	return out
}

// mapValue is an int-keyed map as its array of key/value records, by ascending key (the order of Java's
// HashMap for small keys); a nil map is null.
func mapValue[V any](file *node, id int, m map[int]V, conv func(V) any) any {
	if m == nil {
		return nil
	}
	arr, _ := file.fields[file.fieldByID(id)].typ.optionOf()
	out := make([]any, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, &record{n: arr.items, vals: []any{int32(k), conv(m[k])}})
	}
	return out
}

// partitionValue is the PartitionData record of a file's partition values (by partition field id).
func partitionValue(values map[int]any, n *node, pt *iceberg.StructType) (*record, error) {
	r := &record{n: n, vals: make([]any, len(n.fields))}
	for i, f := range pt.FieldList {
		v, err := toAvroPartition(values[f.ID], f.Type)
		if err != nil {
			return nil, fmt.Errorf("partition field %d (%s): %w", f.ID, f.Name, err)
		}
		if v == nil && f.Required {
			return nil, fmt.Errorf("partition field %d (%s): required but null", f.ID, f.Name)
		}
		r.vals[i] = v
	}
	for id := range values {
		if !slices.ContainsFunc(pt.FieldList, func(f iceberg.NestedField) bool { return f.ID == id }) {
			return nil, fmt.Errorf("partition field %d is not in the event's partition type %v", id, pt)
		}
	}
	return r, nil
}

// toAvroPartition converts a partition value as iceberg-go holds it (the Go value of its Literal, or a plain
// Go number, time or slice) to the Avro value of TypeToSchema's mapping of t.
func toAvroPartition(v any, t iceberg.Type) (any, error) {
	if l, ok := v.(iceberg.Literal); ok {
		v = l.Any()
	}
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) { return nil, fmt.Errorf("value %v (%T) for type %v", v, v, t) }
	switch t := t.(type) {
	case iceberg.UnknownType:
		return nil, nil
	case iceberg.BooleanType:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case iceberg.Int32Type, iceberg.DateType:
		if i, ok := partitionLong(v, t); ok && i >= math.MinInt32 && i <= math.MaxInt32 {
			return int32(i), nil
		}
	case iceberg.Int64Type, iceberg.TimeType, iceberg.TimestampType, iceberg.TimestampTzType,
		iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		if i, ok := partitionLong(v, t); ok {
			return i, nil
		}
	case iceberg.Float32Type:
		switch f := v.(type) {
		case float32:
			return f, nil
		case float64:
			return float32(f), nil
		}
	case iceberg.Float64Type:
		switch f := v.(type) {
		case float64:
			return f, nil
		case float32:
			return float64(f), nil
		}
	case iceberg.StringType:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case iceberg.UUIDType:
		switch u := v.(type) {
		case uuid.UUID:
			return u[:], nil
		case [16]byte:
			return u[:], nil
		case []byte:
			if len(u) == 16 {
				return u, nil
			}
		case string:
			if p, err := uuid.Parse(u); err == nil {
				return p[:], nil
			}
		}
	case iceberg.FixedType:
		if b, ok := v.([]byte); ok && len(b) == t.Len() {
			return b, nil
		}
	case iceberg.BinaryType:
		if b, ok := v.([]byte); ok {
			return b, nil
		}
	case iceberg.DecimalType:
		var d iceberg.Decimal
		switch x := v.(type) {
		case iceberg.Decimal:
			d = x
		case iceberg.DecimalLiteral:
			d = iceberg.Decimal(x)
		default:
			return bad()
		}
		if d.Scale != t.Scale() {
			return nil, fmt.Errorf("decimal of scale %d for type %v", d.Scale, t)
		}
		return values.DecimalToFixed(values.Decimal{Unscaled: d.Val.BigInt()}, decimalRequiredBytes(t.Precision()))
	}
	return bad()
}

// partitionLong is an integer, date, time or timestamp partition value as the number Avro writes: iceberg-go's
// value of the type, a Go time (a time.Duration for a time of day), or a plain integer.
func partitionLong(v any, t iceberg.Type) (int64, bool) {
	switch t.(type) {
	case iceberg.DateType:
		switch d := v.(type) {
		case iceberg.Date:
			return int64(d), true
		case time.Time:
			return d.UTC().Unix() / 86400, true // a date's midnight; floor below for earlier times
		}
	case iceberg.TimeType:
		switch d := v.(type) {
		case iceberg.Time:
			return int64(d), true
		case time.Duration:
			return d.Microseconds(), true
		}
	case iceberg.TimestampType, iceberg.TimestampTzType:
		switch d := v.(type) {
		case iceberg.Timestamp:
			return int64(d), true
		case time.Time:
			return d.UnixMicro(), true
		}
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		switch d := v.(type) {
		case iceberg.TimestampNano:
			return int64(d), true
		case time.Time:
			return d.UnixNano(), true
		}
	}
	return values.Integer(v)
}

// decimalFromBytes reads a big-endian two's complement unscaled value.
func decimalFromBytes(b []byte) *big.Int { return values.DecimalFromBytes(b, 0).Unscaled }

// Files converts the files of a decoded DataWritten event to iceberg-go DataFiles of spec (whose id must be
// the files' spec_id) and schema sc, which give the partition values their iceberg-go types: string, bool,
// int32, int64, float32, float64, []byte (binary, fixed), iceberg.Date, iceberg.Time, iceberg.Timestamp,
// iceberg.TimestampNano, uuid.UUID and iceberg.Decimal. A list the event has as null stays nil.
func (e *Event) Files(spec iceberg.PartitionSpec, sc *iceberg.Schema) (data, deletes []iceberg.DataFile, err error) {
	if e.Type != DataWritten {
		return nil, nil, fmt.Errorf("apacheevents: files of a %v event", e.Type)
	}
	if !e.hasRawData && !e.hasRawDeletes { // an event made by the caller, not decoded
		return e.DataFiles, e.DeleteFiles, nil
	}
	pt := spec.PartitionType(sc)
	conv := func(raw []*record, ok bool, what string) ([]iceberg.DataFile, error) {
		if !ok {
			return nil, nil
		}
		out := make([]iceberg.DataFile, len(raw))
		for i, r := range raw {
			f, err := fileFromRecord(r, spec, pt)
			if err != nil {
				return nil, fmt.Errorf("apacheevents: %s %d: %w", what, i, err)
			}
			out[i] = f
		}
		return out, nil
	}
	if data, err = conv(e.rawData, e.hasRawData, "data file"); err != nil {
		return nil, nil, err
	}
	if deletes, err = conv(e.rawDeletes, e.hasRawDeletes, "delete file"); err != nil {
		return nil, nil, err
	}
	return data, deletes, nil
}

func fileFromRecord(r *record, spec iceberg.PartitionSpec, pt *iceberg.StructType) (iceberg.DataFile, error) {
	g := getter{r: r}
	path := g.str(idFilePath)
	format, err := iceberg.FileFormatFromString(g.str(idFileFormat))
	if err != nil && g.err == nil {
		g.err = fmt.Errorf("file_format: %w", err)
	}
	content := iceberg.EntryContentData
	if c, ok := g.optInt(idContent); ok {
		content = iceberg.ManifestEntryContent(c)
	}
	if specID, ok := g.optInt(idSpecID); ok && int(specID) != spec.ID() {
		return nil, fmt.Errorf("%s: written with spec %d, given spec %d", path, specID, spec.ID())
	}
	partition, logical, err := partitionFromRecord(g.record(idPartition), pt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	count, size := g.long(idRecordCount), g.long(idFileSize)
	if g.err != nil {
		return nil, g.err
	}
	b, err := iceberg.NewDataFileBuilder(spec, content, path, format, partition, logical, nil, count, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m := g.longMap(idColumnSizes); m != nil {
		b.ColumnSizes(m)
	}
	if m := g.longMap(idValueCounts); m != nil {
		b.ValueCounts(m)
	}
	if m := g.longMap(idNullCounts); m != nil {
		b.NullValueCounts(m)
	}
	if m := g.longMap(idNaNCounts); m != nil {
		b.NaNValueCounts(m)
	}
	if m := g.bytesMap(idLowerBounds); m != nil {
		b.LowerBoundValues(m)
	}
	if m := g.bytesMap(idUpperBounds); m != nil {
		b.UpperBoundValues(m)
	}
	if k := g.optBytes(idKeyMetadata); k != nil {
		b.KeyMetadata(k)
	}
	if s := g.longs(idSplitOffsets); s != nil {
		b.SplitOffsets(s)
	}
	if ids := g.ints(idEqualityIDs); ids != nil {
		b.EqualityFieldIDs(ids)
	}
	if v, ok := g.optInt(idSortOrderID); ok {
		b.SortOrderID(int(v))
	}
	if v, ok := g.optLong(idFirstRowID); ok {
		b.FirstRowID(v)
	}
	if v, ok := g.optStr(idReferencedFile); ok {
		b.ReferencedDataFile(v)
	}
	if v, ok := g.optLong(idContentOffset); ok {
		b.ContentOffset(v)
	}
	if v, ok := g.optLong(idContentSize); ok {
		b.ContentSizeInBytes(v)
	}
	if g.err != nil {
		return nil, fmt.Errorf("%s: %w", path, g.err)
	}
	return b.Build(), nil
}

// partitionFromRecord reads the partition values of the spec's partition type pt from the writer's
// PartitionData record, by field id, with the logical types NewDataFileBuilder wants.
func partitionFromRecord(r *record, pt *iceberg.StructType) (map[int]any, map[int]string, error) {
	if r == nil {
		return nil, nil, fmt.Errorf("no partition record")
	}
	values := make(map[int]any, len(pt.FieldList))
	logical := map[int]string{}
	for _, f := range pt.FieldList {
		raw, ok := r.get(f.ID)
		if !ok {
			return nil, nil, fmt.Errorf("partition field %d (%s) is not in the event's partition type", f.ID, f.Name)
		}
		v, err := fromAvroPartition(raw, f.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("partition field %d (%s): %w", f.ID, f.Name, err)
		}
		values[f.ID] = v
		if l := logicalTypeOf(f.Type); l != "" {
			logical[f.ID] = l
		}
	}
	return values, logical, nil
}

// logicalTypeOf is the Avro logical type iceberg-go's manifest writer keys a partition value's conversion on.
func logicalTypeOf(t iceberg.Type) string {
	switch t.(type) {
	case iceberg.DateType:
		return "date"
	case iceberg.TimeType:
		return "time-micros"
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return "timestamp-micros"
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return "timestamp-nanos"
	case iceberg.DecimalType:
		return "decimal"
	case iceberg.UUIDType:
		return "uuid"
	}
	return ""
}

// fromAvroPartition converts a decoded Avro partition value to iceberg-go's Go value of t (see Files).
func fromAvroPartition(v any, t iceberg.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) { return nil, fmt.Errorf("Avro value %T for type %v", v, t) }
	switch t := t.(type) {
	case iceberg.UnknownType:
		return nil, nil
	case iceberg.BooleanType:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case iceberg.Int32Type:
		if i, ok := v.(int32); ok {
			return i, nil
		}
	case iceberg.Int64Type, iceberg.TimeType, iceberg.TimestampType, iceberg.TimestampTzType,
		iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		var i int64
		switch x := v.(type) {
		case int64:
			i = x
		case int32: // Java's reader promotes int to long
			i = int64(x)
		default:
			return bad()
		}
		switch t.(type) {
		case iceberg.TimeType:
			return iceberg.Time(i), nil
		case iceberg.TimestampType, iceberg.TimestampTzType:
			return iceberg.Timestamp(i), nil
		case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			return iceberg.TimestampNano(i), nil
		}
		return i, nil
	case iceberg.Float32Type:
		if f, ok := v.(float32); ok {
			return f, nil
		}
	case iceberg.Float64Type:
		switch f := v.(type) {
		case float64:
			return f, nil
		case float32:
			return float64(f), nil
		}
	case iceberg.DateType:
		if i, ok := v.(int32); ok {
			return iceberg.Date(i), nil
		}
	case iceberg.StringType:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case iceberg.UUIDType:
		if b, ok := v.([]byte); ok && len(b) == 16 {
			return uuid.UUID(b), nil
		}
		if s, ok := v.(string); ok {
			return uuid.Parse(s)
		}
	case iceberg.FixedType:
		if b, ok := v.([]byte); ok && len(b) == t.Len() {
			return bytes.Clone(b), nil
		}
	case iceberg.BinaryType:
		if b, ok := v.([]byte); ok {
			return bytes.Clone(b), nil
		}
	case iceberg.DecimalType:
		b, ok := v.([]byte)
		if !ok || len(b) > 16 && !fitsDecimal128(b) {
			return bad()
		}
		u := decimalFromBytes(b)
		if u.BitLen() > 127 {
			return nil, fmt.Errorf("decimal of %d bits for type %v", u.BitLen(), t)
		}
		return iceberg.Decimal{Val: decimal128.FromBigInt(u), Scale: t.Scale()}, nil
	}
	return bad()
}

// fitsDecimal128 reports whether a two's complement longer than 16 bytes only sign-extends one that fits.
func fitsDecimal128(b []byte) bool {
	ext := byte(0)
	if b[0]&0x80 != 0 {
		ext = 0xFF
	}
	for _, c := range b[:len(b)-16] {
		if c != ext {
			return false
		}
	}
	return true
}
