// Package icetable writes Kafka records into Iceberg tables and commits them: it plans a commit (appends,
// upserts by key with equality deletes, early files written while records arrive), applies it with the
// records' next offsets in the snapshot summary, evolves and creates tables, and writes the rows that
// package icerow builds into Parquet pages. Between commits it holds the records: spool segments of
// append tables, and a keyed table's buffer at one record per key (KeyIndex: the records planDelta would
// let the later ones supersede). It knows nothing of connector configs or tasks: callers hand it typed
// TableOptions.
package icetable
