// Package icerow builds table rows: it turns a Kafka Connect record into the columns of an Iceberg table.
// Two front ends feed one column sink (Arrow builders of the table's columns, AppendValue/AppendRow):
// Connect values (SchemaCache.Read: Connect and schemaless values → Row and the struct type the row
// takes) and the raw bytes of a schemaless JSON object (JSONShape: members read straight into the
// builders; KeyShape: a keyed table's key and version read from the bytes). It decides a row's shape —
// the struct type a record's row takes (SchemaCache), which record types a table's existing columns
// take as they are (KeepColumnType, TypeForFormat) — and holds the value coercions rows share and the
// raw CDC history row. It knows nothing of tables, commits, tasks or connector configs.
package icerow
