package apacheevents

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// PayloadType is the Java PayloadType's id, the event's "type" field.
type PayloadType int

const (
	StartCommit    PayloadType = 0
	DataWritten    PayloadType = 1
	DataComplete   PayloadType = 2
	CommitToTable  PayloadType = 3
	CommitComplete PayloadType = 4
)

func (t PayloadType) String() string {
	switch t {
	case StartCommit:
		return "START_COMMIT"
	case DataWritten:
		return "DATA_WRITTEN"
	case DataComplete:
		return "DATA_COMPLETE"
	case CommitToTable:
		return "COMMIT_TO_TABLE"
	case CommitComplete:
		return "COMMIT_COMPLETE"
	}
	return "PayloadType(" + strconv.Itoa(int(t)) + ")"
}

// TableReference is the Java TableReference: the catalog name and the table identifier.
type TableReference struct {
	Catalog   string
	Namespace []string
	Name      string
}

// TopicPartitionOffset is one assignment of a DataComplete event: the next offset to consume and the
// timestamp of the last record, both absent when the worker consumed nothing of the partition.
type TopicPartitionOffset struct {
	Topic     string
	Partition int32
	Offset    *int64
	Timestamp *time.Time
}

// Event is one control event. Which fields are set depends on Type (see the field comments); the others are
// ignored by Encode and left zero by Decode.
type Event struct {
	ID        uuid.UUID
	Type      PayloadType
	Timestamp time.Time // written in microseconds; Decode returns UTC
	GroupID   string
	CommitID  uuid.UUID // every payload type

	Table TableReference // DataWritten, CommitToTable

	// PartitionType is the partition type of the DataWritten files' spec (the empty struct when
	// unpartitioned): Encode needs it for the schema; Decode fills it from the writer's schema (field ids,
	// names before Avro sanitizing, types, optionality).
	PartitionType iceberg.StructType
	// DataFiles and DeleteFiles of a DataWritten event; nil is the absent (null) list. Decode leaves them
	// nil: iceberg-go's files need the table's spec, so Files converts what Decode read.
	DataFiles, DeleteFiles []iceberg.DataFile

	Assignments []TopicPartitionOffset // DataComplete; nil is the absent (null) list

	SnapshotID   *int64     // CommitToTable
	ValidThrough *time.Time // CommitToTable, CommitComplete

	// Ext is this project's extension of any event, which Java's reader must not see: nil is none. It is
	// not a field of the event record, because the Java classes fail on a field id they do not know (their
	// reader asks the record for the field's value before setting it, and get throws for unknown ids).
	// It follows the Avro datum instead (extMarker, then Avro bytes), where AvroEncoderUtil.decode stops.
	Ext []byte

	// raw files of a decoded DataWritten event, for Files.
	rawData, rawDeletes       []*record
	hasRawData, hasRawDeletes bool
}

// extMarker starts the extension after the Avro datum; Java never writes bytes there.
var extMarker = []byte("\x00connectd-ext\x01")

// ErrNotEvent is returned by Decode for bytes without AvroEncoderUtil's magic bytes.
var ErrNotEvent = errors.New("apacheevents: not an Apache Iceberg control event (no magic bytes C2 01)")

var magic = []byte{0xC2, 0x01}

// IsEvent reports whether b starts with AvroEncoderUtil's magic bytes.
func IsEvent(b []byte) bool { return bytes.HasPrefix(b, magic) }
