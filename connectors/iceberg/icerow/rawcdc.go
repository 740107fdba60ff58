package icerow

import (
	"fmt"
	"time"

	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect"
)

// Columns of the raw CDC history model that readers of a history table (SCD materialization) rely on.
const (
	RawPrimaryKey      = "primary_key"
	RawOperation       = "operation"
	RawAfterPayload    = "after_payload"
	RawSourceTimestamp = "source_timestamp"
	RawSourceVersion   = "source_version"
	RawKafkaPartition  = "kafka_partition"
	RawKafkaOffset     = "kafka_offset"
	RawKafkaTimestamp  = "kafka_timestamp"
)

// RawCDCSchema is the raw CDC history model (one row per change event, never updated): what
// happened at the source, where it sits in the source log, and where it sits in Kafka.
// Extension: enabled per table with iceberg.table.<name>.raw-cdc=true.
var RawCDCSchema = &ice.StructType{FieldList: []ice.NestedField{
	{ID: 1, Name: "source_system", Type: ice.PrimitiveTypes.String},
	{ID: 2, Name: "source_schema", Type: ice.PrimitiveTypes.String},
	{ID: 3, Name: "source_table", Type: ice.PrimitiveTypes.String},
	{ID: 4, Name: RawPrimaryKey, Type: ice.PrimitiveTypes.String},
	{ID: 5, Name: RawOperation, Type: ice.PrimitiveTypes.String},
	{ID: 6, Name: "before_payload", Type: ice.PrimitiveTypes.String},
	{ID: 7, Name: RawAfterPayload, Type: ice.PrimitiveTypes.String},
	{ID: 8, Name: RawSourceTimestamp, Type: ice.PrimitiveTypes.TimestampTz},
	{ID: 9, Name: RawSourceVersion, Type: ice.PrimitiveTypes.String},
	{ID: 10, Name: "transaction_id", Type: ice.PrimitiveTypes.String},
	{ID: 11, Name: "kafka_topic", Type: ice.PrimitiveTypes.String, Required: true},
	{ID: 12, Name: RawKafkaPartition, Type: ice.PrimitiveTypes.Int32, Required: true},
	{ID: 13, Name: RawKafkaOffset, Type: ice.PrimitiveTypes.Int64, Required: true},
	{ID: 14, Name: RawKafkaTimestamp, Type: ice.PrimitiveTypes.TimestampTz},
	{ID: 15, Name: "ingested_at", Type: ice.PrimitiveTypes.TimestampTz},
}}

// str is v as a string column holds it; nil stays null.
func str(v any) any {
	if v == nil {
		return nil
	}
	return ToString(v)
}

// RawRow builds the raw history row (RawCDCSchema) of one record. value is the converted record value (a
// Debezium envelope, or anything else, which is stored as after_payload with op "c"), key the
// converted key.
func RawRow(r *connect.SinkRecord, value Row, key any, now time.Time) Row {
	row := Row{
		"kafka_topic":     r.OriginalTopic,
		"kafka_partition": r.OriginalPartition,
		"kafka_offset":    r.OriginalOffset,
		"primary_key":     JSONString(key),
		"ingested_at":     now,
	}
	if row["kafka_topic"] == "" {
		row["kafka_topic"], row["kafka_partition"], row["kafka_offset"] = r.Topic, r.Partition, r.Offset
	}
	if r.Timestamp >= 0 {
		row["kafka_timestamp"] = time.UnixMilli(r.Timestamp).UTC()
	}
	if value == nil { // tombstone
		row["operation"] = "tombstone"
		return row
	}
	if !DebeziumEnvelope(value) {
		row["operation"] = "c"
		row["after_payload"] = JSONString(value)
		return row
	}
	row["operation"] = value["op"]
	row["before_payload"] = JSONString(value["before"])
	row["after_payload"] = JSONString(value["after"])
	if src, ok := value["source"].(map[string]any); ok {
		row["source_system"] = str(src["connector"])
		if n, ok := src["name"]; ok && n != nil {
			row["source_system"] = fmt.Sprintf("%v:%v", src["connector"], n)
		}
		if s, ok := src["schema"]; ok && s != nil {
			row["source_schema"] = str(s)
		} else {
			row["source_schema"] = str(src["db"])
		}
		row["source_table"] = str(src["table"])
		if ts, ok := src["ts_ms"]; ok && ts != nil {
			if ms, err := ToInt64(ts); err == nil {
				row["source_timestamp"] = time.UnixMilli(ms).UTC()
			}
		}
		row["source_version"] = sourceVersion(src)
		for _, k := range []string{"txId", "gtid", "xid"} {
			if v, ok := src[k]; ok && v != nil {
				row["transaction_id"] = str(v)
				break
			}
		}
	}
	if row["source_timestamp"] == nil {
		if ms, err := ToInt64(value["ts_ms"]); err == nil && value["ts_ms"] != nil {
			row["source_timestamp"] = time.UnixMilli(ms).UTC()
		}
	}
	if tx, ok := value["transaction"].(map[string]any); ok && row["transaction_id"] == nil {
		row["transaction_id"] = str(tx["id"])
	}
	return row
}

// sourceVersion is the position of the change in the source log: Postgres lsn, MySQL
// binlog file:pos(:row), Oracle scn, SQL Server change_lsn, MongoDB ord.
func sourceVersion(src map[string]any) any {
	for _, k := range []string{"lsn", "scn", "change_lsn", "commit_lsn"} {
		if v, ok := src[k]; ok && v != nil {
			return str(v)
		}
	}
	if f, ok := src["file"]; ok && f != nil {
		s := fmt.Sprintf("%v:%v", f, src["pos"])
		if r, ok := src["row"]; ok && r != nil {
			s += fmt.Sprintf(":%v", r)
		}
		return s
	}
	if v, ok := src["ord"]; ok && v != nil {
		return fmt.Sprintf("%v:%v", src["ts_ms"], v)
	}
	return nil
}
