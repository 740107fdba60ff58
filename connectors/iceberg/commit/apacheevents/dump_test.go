package apacheevents

import (
	"encoding/hex"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// dump prints e as testdata/iceberg/apache-events/Dump.java prints the Java classes' view of it, with data
// and deletes as the DataWritten files.
func dump(t testing.TB, e *Event, data, deletes []iceberg.DataFile) string {
	t.Helper()
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	add("id=%s", e.ID)
	add("type=%d", e.Type)
	add("timestamp=%d", e.Timestamp.UnixMicro())
	add("group_id=%s", e.GroupID)
	add("payload=%s", payloadNames[e.Type])
	add("commit_id=%s", e.CommitID)
	table := func() { add("table=%s|%s|%s", e.Table.Catalog, strings.Join(e.Table.Namespace, "."), e.Table.Name) }
	switch e.Type {
	case DataWritten:
		table()
		dumpFiles(t, &out, "data_files", "org.apache.iceberg.GenericDataFile", data, &e.PartitionType)
		dumpFiles(t, &out, "delete_files", "org.apache.iceberg.GenericDeleteFile", deletes, &e.PartitionType)
	case DataComplete:
		if e.Assignments == nil {
			add("assignments=null")
			break
		}
		add("assignments=%d", len(e.Assignments))
		for i, a := range e.Assignments {
			ts := "null"
			if a.Timestamp != nil {
				ts = strconv.FormatInt(a.Timestamp.UnixMicro(), 10)
			}
			add("assignments[%d]=%s|%d|%s|%s", i, a.Topic, a.Partition, optStr(a.Offset), ts)
		}
	case CommitToTable:
		table()
		add("snapshot_id=%s", optStr(e.SnapshotID))
		add("valid_through_ts=%s", optMicrosStr(e))
	case CommitComplete:
		add("valid_through_ts=%s", optMicrosStr(e))
	}
	return strings.Join(out, "\n") + "\n"
}

func optMicrosStr(e *Event) string {
	if e.ValidThrough == nil {
		return "null"
	}
	return strconv.FormatInt(e.ValidThrough.UnixMicro(), 10)
}

func optStr[T any](v *T) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}

func dumpFiles(t testing.TB, out *[]string, key, class string, files []iceberg.DataFile, pt *iceberg.StructType) {
	if files == nil {
		*out = append(*out, key+"=null")
		return
	}
	*out = append(*out, fmt.Sprintf("%s=%d", key, len(files)))
	for i, f := range files {
		k := fmt.Sprintf("%s[%d].", key, i)
		add := func(name string, format string, args ...any) {
			*out = append(*out, k+name+"="+fmt.Sprintf(format, args...))
		}
		add("class", "%s", class)
		add("content", "%d", f.ContentType())
		add("file_path", "%s", f.FilePath())
		add("file_format", "%s", f.FileFormat())
		add("spec_id", "%d", f.SpecID())
		add("partition", "%d", len(pt.FieldList))
		part := f.Partition()
		for j, pf := range pt.FieldList {
			req := "optional"
			if pf.Required {
				req = "required"
			}
			add(fmt.Sprintf("partition[%d]", j), "%d|%s|%s|%s|%s", pf.ID, sanitize(pf.Name), pf.Type, req, javaPartitionValue(t, part[pf.ID], pf.Type))
		}
		add("record_count", "%d", f.Count())
		add("file_size_in_bytes", "%d", f.FileSizeBytes())
		add("column_sizes", "%s", javaMap(f.ColumnSizes(), func(v int64) string { return strconv.FormatInt(v, 10) }))
		add("value_counts", "%s", javaMap(f.ValueCounts(), func(v int64) string { return strconv.FormatInt(v, 10) }))
		add("null_value_counts", "%s", javaMap(f.NullValueCounts(), func(v int64) string { return strconv.FormatInt(v, 10) }))
		add("nan_value_counts", "%s", javaMap(f.NaNValueCounts(), func(v int64) string { return strconv.FormatInt(v, 10) }))
		add("lower_bounds", "%s", javaMap(f.LowerBoundValues(), hex.EncodeToString))
		add("upper_bounds", "%s", javaMap(f.UpperBoundValues(), hex.EncodeToString))
		if f.KeyMetadata() == nil {
			add("key_metadata", "null")
		} else {
			add("key_metadata", "%s", hex.EncodeToString(f.KeyMetadata()))
		}
		add("split_offsets", "%s", javaList(f.SplitOffsets()))
		add("equality_ids", "%s", javaList(f.EqualityFieldIDs()))
		add("sort_order_id", "%s", optStr(f.SortOrderID()))
		add("first_row_id", "%s", optStr(f.FirstRowID()))
		add("referenced_data_file", "%s", optStr(f.ReferencedDataFile()))
		add("content_offset", "%s", optStr(f.ContentOffset()))
		add("content_size_in_bytes", "%s", optStr(f.ContentSizeInBytes()))
	}
}

func javaMap[V any](m map[int]V, str func(V) string) string {
	if m == nil {
		return "null"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d=%s", k, str(m[k])))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func javaList[T any](s []T) string {
	if s == nil {
		return "null"
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// javaPartitionValue is Dump.partition's "Class:value" of the Java reader's value for a partition value.
func javaPartitionValue(t testing.TB, v any, typ iceberg.Type) string {
	t.Helper()
	a, err := toAvroPartition(v, typ)
	if err != nil {
		t.Fatalf("partition value: %v", err)
	}
	if a == nil {
		return "null"
	}
	switch typ := typ.(type) {
	case iceberg.BooleanType:
		return fmt.Sprintf("Boolean:%v", a)
	case iceberg.Int32Type, iceberg.DateType:
		return fmt.Sprintf("Integer:%d", a)
	case iceberg.Int64Type, iceberg.TimeType, iceberg.TimestampType, iceberg.TimestampTzType,
		iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return fmt.Sprintf("Long:%d", a)
	case iceberg.Float32Type:
		return "Float:" + javaFloat(float64(a.(float32)), 32)
	case iceberg.Float64Type:
		return "Double:" + javaFloat(a.(float64), 64)
	case iceberg.StringType:
		return "String:" + javaEsc(a.(string))
	case iceberg.UUIDType:
		return "UUID:" + uuid.UUID(a.([]byte)).String()
	case iceberg.BinaryType:
		return "ByteBuffer:" + hex.EncodeToString(a.([]byte))
	case iceberg.FixedType: // Java's reader keeps a GenericData.Fixed
		return "Fixed:" + hex.EncodeToString(a.([]byte))
	case iceberg.DecimalType:
		u := decimalFromBytes(a.([]byte))
		return "BigDecimal:" + plainDecimal(u, typ.Scale())
	}
	t.Fatalf("partition type %v", typ)
	return ""
}

// javaFloat is Float/Double.toString for the values the tests use (plain notation between 1e-3 and 1e7).
func javaFloat(f float64, bits int) string {
	s := strconv.FormatFloat(f, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func plainDecimal(u *big.Int, scale int) string {
	neg := u.Sign() < 0
	s := new(big.Int).Abs(u).String()
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func javaEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == '\\' {
			fmt.Fprintf(&b, "\\u%04x", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
