// Package scd materializes a Slowly Changing Dimension Type 2 table from an Iceberg history table
// (the sink's raw CDC history, or any append-only table with a key, a source version and a
// validity time per row): one row per version of a key with valid_from, valid_to (the next
// version's valid_from), is_current, source_version and record_hash.
//
// A run is incremental: it reads the history files added since the position recorded in the SCD
// table's last snapshot summary, recomputes the intervals of the keys they touch from those keys'
// whole history, and replaces those keys' rows in one snapshot that also records the new
// position. Plan and Commit are separate steps so that a process dying between them leaves
// nothing behind but unreferenced files: the next run plans again from the same position.
package scd
