// Package icerow builds table rows: it turns a Kafka Connect record into the columns of an Iceberg table.
// Two front ends feed one column sink (Arrow builders of the table's columns: AppendValue, AppendRow):
// Connect values (SchemaCache.Read: Connect and schemaless values → Row and the struct type the row
// takes) and the raw bytes of a schemaless JSON object (JSONShape: members read straight into the
// builders; KeyShape: a keyed table's key and version read from the bytes). It is the one place that
// decides a row's shape: the struct type a record's row takes (SchemaCache), the change it makes
// (Record.Change: op, an envelope's after or before), the columns a table needs for it (TableShape,
// KeepColumnType, TypeForFormat). It also holds the value coercions rows share, a row's key (KeyOf),
// the order of a key's versions (CompareVersion; EnvelopeVersion: a change event's source position as
// a string that orders as the positions do), the raw CDC history row (RawRow) and Arrow read back into
// rows (RecordToRows). It knows nothing of tables, commits, tasks or connector configs.
package icerow
