package icetable

import ice "github.com/apache/iceberg-go"

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
