// Package apacheevents encodes and decodes the control-topic events of the Apache Iceberg Kafka Connect sink
// (org.apache.iceberg.connect.events, iceberg-kafka-connect-events 1.10.1) byte-compatibly with its Java
// classes, so that connectd workers and JVM workers running the Apache sink can share a control topic.
//
// The wire format is Iceberg's AvroEncoderUtil: the magic bytes C2 01, the writer's Avro schema as a Java
// DataOutput.writeUTF string (at most 65535 bytes of modified UTF-8), then the Avro binary datum. Encode
// writes the schema Java's AvroSchemaUtil.convert writes, so an event Java would write encodes to the same
// bytes (the golden tests compare them); Decode reads any writer schema, matching fields by "field-id".
//
// What the Java side requires of an event:
//
//   - Records are instantiated by their Avro full names: org.apache.iceberg.connect.events.Event, its
//     payloads (StartCommit, DataWritten, DataComplete, CommitToTable, CommitComplete), TableReference,
//     TopicPartitionOffset, and org.apache.iceberg.GenericDataFile (data_files), GenericDeleteFile
//     (delete_files), PartitionData (partition).
//   - No field the Java class does not know, in any of those records: although put ignores unknown ids, the
//     reader calls get for the field first, which throws "Unknown field ordinal". Event.Ext therefore follows
//     the datum, where AvroEncoderUtil.decode stops reading.
//   - The coordinator adds data_files as data and delete_files as deletes whatever their content, and calls
//     TableReference.identifier(), which rejects an empty table name and null characters in namespace
//     levels; Encode refuses such events.
//
// Partition values are written as TypeToSchema maps the partition type (all fields optional): boolean, int,
// long, float, double, string as themselves; date as int days; time, timestamp and timestamptz as long
// microseconds, the _ns types as long nanoseconds; uuid as fixed(16) "uuid_fixed"; binary as bytes;
// fixed[L] as fixed "fixed_L"; decimal(P,S) as fixed "decimal_P_S" of the fewest bytes that hold P digits
// (big-endian two's complement of the unscaled value, at scale S). Java reads them back as Boolean,
// Integer, Long, Float, Double, String, UUID, ByteBuffer, GenericData.Fixed and BigDecimal (its own writer
// cannot write a fixed partition value). Partition field names that are not Avro names are written
// sanitized (AvroSchemaUtil.sanitize) with the name in "iceberg-field-name"; Java's decoded PartitionData
// has the sanitized names, Decode's PartitionType the original ones.
//
// Of iceberg-go's DataFile, the distinct value counts and the block size have no field in this format and
// are dropped. Maps are written by ascending key, as Java's HashMap iterates small column ids.
package apacheevents
