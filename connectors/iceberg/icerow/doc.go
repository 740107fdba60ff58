// Package icerow builds table rows: it turns a Kafka Connect record into what each table it goes to
// takes of it. A record enters it once, through Router.Route, which picks the tables, reads the record
// by one of two front ends and gives per table its Target (op, row or bytes of a known shape, struct
// type, key, version). The front ends are Connect values (SchemaCache.Read: Connect and schemaless
// values → Row and the struct type the row takes) and the raw bytes of a schemaless JSON object of a
// shape the router remembers (JSONShape: members read straight into a table's Arrow builders;
// KeyShape: a keyed table's key and version). Both feed one column sink (Arrow builders of the
// table's columns: AppendValue, AppendRow, JSONShape.AppendScanned). It is the one place that decides
// a row's shape: the struct type a record's row takes (SchemaCache), the change it makes
// (Record.Change: op, an envelope's after or before), the columns a table needs for it (TableShape,
// KeepColumnType, TypeForFormat). It also holds the value coercions rows share, a row's key (KeyOf),
// the order of a key's versions (CompareVersion; EnvelopeVersion: a change event's source position as
// a string that orders as the positions do), the raw CDC history row (RawRow) and Arrow read back into
// rows (RecordToRows). It knows nothing of tables, commits, tasks or connector configs: a table's
// needs reach it as a TableSpec.
package icerow
