// Package maintenance keeps Iceberg tables written by the sink healthy: compaction that rewrites
// small data files with the deletes that apply to them, in the table's sort order when it has one
// (compact.go, sort.go), manifest rewrite (manifests.go), snapshot expiry that keeps the sink's
// offsets and the recent heads (expire.go) and orphan file removal (orphans.go); every snapshot it
// commits carries the sink's summary entries (offsets.go, summary.go). Run (run.go) does them in
// order, on a table and then its <table>__deletes companion, with a Policy (policy.go) read from the
// connector's iceberg.tables.maintenance.* keys; `connectd iceberg maintain` is its command, and
// the connector runs it between commit rounds with iceberg.tables.maintenance.interval-ms
// (connector.go registers it: this package imports the connector's, not the other way round).
// Every action is safe next to a sink that keeps committing.
package maintenance
