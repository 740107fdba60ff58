// Package erase removes the stored values of given keys from every copy the sinks wrote: the Iceberg
// current-state table, its <table>__deletes companion, the raw history and SCD tables (deletes, rewrite of
// the affected files, snapshot expiry, removal of the files that held the keys), and the ClickHouse table
// (a synchronous mutation). It then reads the files themselves to verify that no readable copy remains,
// and records what it removed where and what it could not reach.
package erase

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/lakeops/reconcile"
)

// Property keys of an erase run, besides the reconcile ones (iceberg.catalog.*, iceberg.table,
// clickhouse.*, clickhouse.table, key.columns, topics, kafka.bootstrap.servers).
const (
	KeyHistoryTables = "erase.history.tables"  // raw history tables (raw-cdc), matched on primary_key
	KeySCDTables     = "erase.scd.tables"      // SCD Type 2 tables, matched on erase.scd.key-column
	KeySCDKeyColumn  = "erase.scd.key-column"  // default business_key
	KeyDeletesTable  = "erase.deletes.table"   // default <iceberg.table>__deletes when it exists; "none" skips it
	KeyNoClickHouse  = "erase.clickhouse.skip" // true: leave ClickHouse out (the record says so)
)

// Config is a parsed erase configuration.
type Config struct {
	*reconcile.Config
	HistoryTables []string
	SCDTables     []string
	SCDKeyColumn  string
	DeletesTable  string // "" : the default; "none": skipped
	SkipCH        bool
}

// ParseConfig reads the properties of an erase run.
func ParseConfig(props map[string]string) (*Config, error) {
	p := map[string]string{}
	for k, v := range props {
		p[k] = v
	}
	skip := strings.EqualFold(strings.TrimSpace(p[KeyNoClickHouse]), "true")
	if skip && p[reconcile.KeyCHTable] == "" {
		p[reconcile.KeyCHTable] = "unused"
	}
	rc, err := reconcile.ParseConfig(p)
	if err != nil {
		return nil, err
	}
	c := &Config{Config: rc, HistoryTables: reconcile.SplitList(p[KeyHistoryTables]), SCDTables: reconcile.SplitList(p[KeySCDTables]),
		SCDKeyColumn: strings.TrimSpace(p[KeySCDKeyColumn]), DeletesTable: strings.TrimSpace(p[KeyDeletesTable]), SkipCH: skip}
	if c.SCDKeyColumn == "" {
		c.SCDKeyColumn = "business_key"
	}
	for _, key := range []string{KeyHistoryTables, KeySCDTables} {
		for _, t := range reconcile.SplitList(p[key]) {
			if !strings.Contains(t, ".") {
				return nil, fmt.Errorf("%s: %q: want namespace.table", key, t)
			}
		}
	}
	return c, nil
}
