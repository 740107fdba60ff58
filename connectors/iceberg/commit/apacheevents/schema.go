package apacheevents

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect/avrotype"
)

// The Avro full names of the records: the Java reader instantiates these classes by name.
const (
	nsEvents       = "org.apache.iceberg.connect.events"
	nameEvent      = nsEvents + ".Event"
	nameTableRef   = nsEvents + ".TableReference"
	nameTPO        = nsEvents + ".TopicPartitionOffset"
	nameDataFile   = "org.apache.iceberg.GenericDataFile"
	nameDeleteFile = "org.apache.iceberg.GenericDeleteFile"
	namePartition  = "org.apache.iceberg.PartitionData"
)

var payloadNames = map[PayloadType]string{
	StartCommit:    nsEvents + ".StartCommit",
	DataWritten:    nsEvents + ".DataWritten",
	DataComplete:   nsEvents + ".DataComplete",
	CommitToTable:  nsEvents + ".CommitToTable",
	CommitComplete: nsEvents + ".CommitComplete",
}

// Field ids of the Java event classes.
const (
	idEventID        = 10_500
	idEventType      = 10_501
	idEventTimestamp = 10_502
	idEventGroupID   = 10_503
	idEventPayload   = 10_504

	idCommitCompleteCommit = 10_000
	idCommitCompleteValid  = 10_001

	idDataCompleteCommit  = 10_100
	idDataCompleteAssigns = 10_101
	idDataCompleteElement = 10_102

	idStartCommitCommit = 10_200

	idDataWrittenCommit   = 10_300
	idDataWrittenTable    = 10_301
	idDataWrittenData     = 10_302
	idDataWrittenDataElem = 10_303
	idDataWrittenDeletes  = 10_304
	idDataWrittenDelElem  = 10_305

	idCommitToTableCommit   = 10_400
	idCommitToTableTable    = 10_401
	idCommitToTableSnapshot = 10_402
	idCommitToTableValid    = 10_403

	idTableCatalog   = 10_600
	idTableNamespace = 10_601
	idTableNsElement = 10_602
	idTableName      = 10_603

	idTPOTopic     = 10_700
	idTPOPartition = 10_701
	idTPOOffset    = 10_702
	idTPOTimestamp = 10_703
)

// commitIDField is the commit_id field id of each payload.
var commitIDField = map[PayloadType]int{
	StartCommit:    idStartCommitCommit,
	DataWritten:    idDataWrittenCommit,
	DataComplete:   idDataCompleteCommit,
	CommitToTable:  idCommitToTableCommit,
	CommitComplete: idCommitCompleteCommit,
}

// named returns a named type's node for a full name.
func named(k kind, full string) *node {
	ns, name := avrotype.SplitName(full)
	return &node{kind: k, name: name, namespace: ns}
}

func primitive(k kind, props ...prop) *node { return &node{kind: k, props: props} }

// The schemas of Iceberg's TypeToSchema for the primitive types.
func uuidNode() *node {
	n := named(avrotype.Fixed, "uuid_fixed")
	n.size = 16
	n.props = []prop{{"logicalType", "uuid"}}
	return n
}

func timestampNode(utc bool) *node {
	return primitive(avrotype.Long, prop{"logicalType", "timestamp-micros"}, prop{"adjust-to-utc", utc})
}

// fld is a record field as TypeToSchema makes it: optional fields are unions with null first and a null
// default.
func fld(id int, name string, optional bool, typ *node) *field {
	f := &field{name: name, typ: typ, id: id}
	if optional {
		f.typ, f.hasDefault = toOption(typ), true
	}
	f.props = []prop{{"field-id", id}}
	return f
}

func toOption(n *node) *node {
	if n.kind == avrotype.Null || n.kind == avrotype.Union {
		return n
	}
	return &node{kind: avrotype.Union, branches: []*node{{kind: avrotype.Null}, n}}
}

func withDoc(f *field, doc string) *field {
	f.doc = doc
	return f
}

func recordNode(full string, fields ...*field) *node {
	n := named(avrotype.Record, full)
	n.fields = fields
	return n
}

func list(elementID int, items *node) *node {
	return &node{kind: avrotype.Array, items: items, props: []prop{{"element-id", elementID}}}
}

// intMap is AvroSchemaUtil.createMap for a map with int keys: an array of key/value records.
func intMap(keyID, valueID int, value *node) *node {
	kv := recordNode("k"+strconv.Itoa(keyID)+"_v"+strconv.Itoa(valueID),
		&field{name: "key", typ: primitive(avrotype.Int), id: keyID, props: []prop{{"field-id", keyID}}},
		&field{name: "value", typ: value, id: valueID, props: []prop{{"field-id", valueID}}})
	return &node{kind: avrotype.Array, items: kv, props: []prop{{"logicalType", "map"}}}
}

func tableRefNode() *node {
	return recordNode(nameTableRef,
		fld(idTableCatalog, "catalog", false, primitive(avrotype.String)),
		fld(idTableNamespace, "namespace", false, list(idTableNsElement, primitive(avrotype.String))),
		fld(idTableName, "name", false, primitive(avrotype.String)))
}

// eventSchema is the schema Java's Event constructor makes for the payload (AvroUtil.convert of the event
// struct).
func eventSchema(t PayloadType, partitionType *iceberg.StructType) (*node, error) {
	payload, err := payloadSchema(t, partitionType)
	if err != nil {
		return nil, err
	}
	return recordNode(nameEvent,
		fld(idEventID, "id", false, uuidNode()),
		fld(idEventType, "type", false, primitive(avrotype.Int)),
		fld(idEventTimestamp, "timestamp", false, timestampNode(true)),
		fld(idEventGroupID, "group_id", false, primitive(avrotype.String)),
		fld(idEventPayload, "payload", false, payload)), nil
}

func payloadSchema(t PayloadType, partitionType *iceberg.StructType) (*node, error) {
	name, ok := payloadNames[t]
	if !ok {
		return nil, fmt.Errorf("unknown payload type %d", t)
	}
	commit := fld(commitIDField[t], "commit_id", false, uuidNode())
	switch t {
	case StartCommit:
		return recordNode(name, commit), nil
	case DataWritten:
		dataFile, err := dataFileFields(partitionType)
		if err != nil {
			return nil, err
		}
		deleteFile, _ := dataFileFields(partitionType)
		return recordNode(name, commit,
			fld(idDataWrittenTable, "table_reference", false, tableRefNode()),
			fld(idDataWrittenData, "data_files", true, list(idDataWrittenDataElem, recordNode(nameDataFile, dataFile...))),
			fld(idDataWrittenDeletes, "delete_files", true, list(idDataWrittenDelElem, recordNode(nameDeleteFile, deleteFile...))),
		), nil
	case DataComplete:
		tpo := recordNode(nameTPO,
			fld(idTPOTopic, "topic", false, primitive(avrotype.String)),
			fld(idTPOPartition, "partition", false, primitive(avrotype.Int)),
			fld(idTPOOffset, "offset", true, primitive(avrotype.Long)),
			fld(idTPOTimestamp, "timestamp", true, timestampNode(true)))
		return recordNode(name, commit, fld(idDataCompleteAssigns, "assignments", true, list(idDataCompleteElement, tpo))), nil
	case CommitToTable:
		return recordNode(name, commit,
			fld(idCommitToTableTable, "table_reference", false, tableRefNode()),
			fld(idCommitToTableSnapshot, "snapshot_id", true, primitive(avrotype.Long)),
			fld(idCommitToTableValid, "valid_through_ts", true, timestampNode(true))), nil
	default: // CommitComplete
		return recordNode(name, commit, fld(idCommitCompleteValid, "valid_through_ts", true, timestampNode(true))), nil
	}
}

// Field ids of DataFile.getType (Iceberg 1.10.1).
const (
	idContent        = 134
	idFilePath       = 100
	idFileFormat     = 101
	idSpecID         = 141
	idPartition      = 102
	idRecordCount    = 103
	idFileSize       = 104
	idColumnSizes    = 108
	idValueCounts    = 109
	idNullCounts     = 110
	idNaNCounts      = 137
	idLowerBounds    = 125
	idUpperBounds    = 128
	idKeyMetadata    = 131
	idSplitOffsets   = 132
	idEqualityIDs    = 135
	idSortOrderID    = 140
	idFirstRowID     = 142
	idReferencedFile = 143
	idContentOffset  = 144
	idContentSize    = 145
)

// dataFileFields are the fields of DataFile.getType(partitionType), in its order and with its docs.
func dataFileFields(partitionType *iceberg.StructType) ([]*field, error) {
	part, err := partitionNode(partitionType)
	if err != nil {
		return nil, err
	}
	long, integer := func() *node { return primitive(avrotype.Long) }, func() *node { return primitive(avrotype.Int) }
	return []*field{
		withDoc(fld(idContent, "content", true, integer()), "Contents of the file: 0=data, 1=position deletes, 2=equality deletes"),
		withDoc(fld(idFilePath, "file_path", false, primitive(avrotype.String)), "Location URI with FS scheme"),
		withDoc(fld(idFileFormat, "file_format", false, primitive(avrotype.String)), "File format name: avro, orc, or parquet"),
		withDoc(fld(idSpecID, "spec_id", true, integer()), "Partition spec ID"),
		withDoc(fld(idPartition, "partition", false, part), "Partition data tuple, schema based on the partition spec"),
		withDoc(fld(idRecordCount, "record_count", false, long()), "Number of records in the file"),
		withDoc(fld(idFileSize, "file_size_in_bytes", false, long()), "Total file size in bytes"),
		withDoc(fld(idColumnSizes, "column_sizes", true, intMap(117, 118, long())), "Map of column id to total size on disk"),
		withDoc(fld(idValueCounts, "value_counts", true, intMap(119, 120, long())), "Map of column id to total count, including null and NaN"),
		withDoc(fld(idNullCounts, "null_value_counts", true, intMap(121, 122, long())), "Map of column id to null value count"),
		withDoc(fld(idNaNCounts, "nan_value_counts", true, intMap(138, 139, long())), "Map of column id to number of NaN values in the column"),
		withDoc(fld(idLowerBounds, "lower_bounds", true, intMap(126, 127, primitive(avrotype.Bytes))), "Map of column id to lower bound"),
		withDoc(fld(idUpperBounds, "upper_bounds", true, intMap(129, 130, primitive(avrotype.Bytes))), "Map of column id to upper bound"),
		withDoc(fld(idKeyMetadata, "key_metadata", true, primitive(avrotype.Bytes)), "Encryption key metadata blob"),
		withDoc(fld(idSplitOffsets, "split_offsets", true, list(133, long())), "Splittable offsets"),
		withDoc(fld(idEqualityIDs, "equality_ids", true, list(136, integer())), "Equality comparison field IDs"),
		withDoc(fld(idSortOrderID, "sort_order_id", true, integer()), "Sort order ID"),
		withDoc(fld(idFirstRowID, "first_row_id", true, long()), "The first row ID assigned to the first row in the data file"),
		withDoc(fld(idReferencedFile, "referenced_data_file", true, primitive(avrotype.String)), "Fully qualified location (URI with FS scheme) of a data file that all deletes reference"),
		withDoc(fld(idContentOffset, "content_offset", true, long()), "The offset in the file where the content starts"),
		withDoc(fld(idContentSize, "content_size_in_bytes", true, long()), "The length of referenced content stored in the file"),
	}, nil
}

// partitionNode is the PartitionData record of a partition type.
func partitionNode(pt *iceberg.StructType) (*node, error) {
	n := recordNode(namePartition)
	n.fields = []*field{}
	if pt == nil {
		return n, nil
	}
	for _, f := range pt.FieldList {
		typ, err := primitiveSchema(f.Type)
		if err != nil {
			return nil, fmt.Errorf("partition field %d (%s): %w", f.ID, f.Name, err)
		}
		if f.Name == "" {
			return nil, fmt.Errorf("partition field %d has no name", f.ID)
		}
		af := fld(f.ID, sanitize(f.Name), !f.Required, typ)
		if af.name != f.Name {
			af.props = []prop{{"iceberg-field-name", f.Name}, {"field-id", f.ID}}
		}
		af.doc = f.Doc
		n.fields = append(n.fields, af)
	}
	return n, nil
}

// primitiveSchema is TypeToSchema.primitive.
func primitiveSchema(t iceberg.Type) (*node, error) {
	switch t := t.(type) {
	case iceberg.UnknownType:
		return primitive(avrotype.Null), nil
	case iceberg.BooleanType:
		return primitive(avrotype.Boolean), nil
	case iceberg.Int32Type:
		return primitive(avrotype.Int), nil
	case iceberg.Int64Type:
		return primitive(avrotype.Long), nil
	case iceberg.Float32Type:
		return primitive(avrotype.Float), nil
	case iceberg.Float64Type:
		return primitive(avrotype.Double), nil
	case iceberg.DateType:
		return primitive(avrotype.Int, prop{"logicalType", "date"}), nil
	case iceberg.TimeType:
		return primitive(avrotype.Long, prop{"logicalType", "time-micros"}), nil
	case iceberg.TimestampType:
		return timestampNode(false), nil
	case iceberg.TimestampTzType:
		return timestampNode(true), nil
	case iceberg.TimestampNsType:
		return primitive(avrotype.Long, prop{"logicalType", "timestamp-nanos"}, prop{"adjust-to-utc", false}), nil
	case iceberg.TimestampTzNsType:
		return primitive(avrotype.Long, prop{"logicalType", "timestamp-nanos"}, prop{"adjust-to-utc", true}), nil
	case iceberg.StringType:
		return primitive(avrotype.String), nil
	case iceberg.UUIDType:
		return uuidNode(), nil
	case iceberg.FixedType:
		n := named(avrotype.Fixed, "fixed_"+strconv.Itoa(t.Len()))
		n.size = t.Len()
		return n, nil
	case iceberg.BinaryType:
		return primitive(avrotype.Bytes), nil
	case iceberg.DecimalType:
		n := named(avrotype.Fixed, "decimal_"+strconv.Itoa(t.Precision())+"_"+strconv.Itoa(t.Scale()))
		n.size = decimalRequiredBytes(t.Precision())
		n.props = []prop{{"logicalType", "decimal"}, {"precision", t.Precision()}, {"scale", t.Scale()}}
		return n, nil
	}
	return nil, fmt.Errorf("type %v cannot be a partition type here", t)
}

// decimalRequiredBytes is TypeUtil.decimalRequiredBytes: the fewest bytes whose two's complement holds every
// unscaled value of the precision.
func decimalRequiredBytes(precision int) int {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil) // values are below 10^p
	for n := 1; ; n++ {
		max := new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)) // 2^(8n-1) - 1 is the largest
		if max.Cmp(limit) >= 0 {
			return n
		}
	}
}

// sanitize is AvroSchemaUtil.sanitize over Java chars (UTF-16 units): a name Avro cannot take has each
// character other than a letter, digit or _ replaced by _xHEX (a leading digit by _digit).
func sanitize(name string) string {
	units := utf16.Encode([]rune(name))
	valid := len(units) > 0
	for i, c := range units {
		if !javaLetter(c) && c != '_' && (i == 0 || !javaDigit(c)) {
			valid = false
			break
		}
	}
	if valid {
		return name
	}
	var b strings.Builder
	for i, c := range units {
		switch {
		case javaLetter(c) || c == '_' || (i > 0 && javaDigit(c)):
			b.WriteString(string(utf16.Decode(units[i : i+1])))
		case javaDigit(c):
			b.WriteByte('_')
			b.WriteString(string(utf16.Decode(units[i : i+1])))
		default:
			b.WriteString("_x" + strings.ToUpper(strconv.FormatUint(uint64(c), 16)))
		}
	}
	return b.String()
}

// Character.isLetter / isDigit of one char: a surrogate half is neither.
func javaLetter(c uint16) bool { return !utf16.IsSurrogate(rune(c)) && unicode.IsLetter(rune(c)) }
func javaDigit(c uint16) bool  { return !utf16.IsSurrogate(rune(c)) && unicode.IsDigit(rune(c)) }
