// Package restoredrill tests a restore: it restores an Iceberg table as of a snapshot or metadata file into
// a spare namespace, rebuilds the ClickHouse table from the restored copy into a spare database, compares
// the copies with the source (contents, reconcile at one cut, the user's key queries) and writes a dated
// evidence record of the drill (JSON and Markdown) with its verdict.
package restoredrill

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/connectd/connectd/lakeops/reconcile"
)

// Property keys of a restore drill, besides the reconcile ones (the source tables).
const (
	KeySnapshot     = "drill.snapshot-id"         // source snapshot restored (default: the current one)
	KeyMetadataFile = "drill.metadata-file"       // restore the table as this metadata file describes it
	KeyNamespace    = "drill.namespace"           // spare Iceberg namespace (required)
	KeyCHDatabase   = "drill.clickhouse.database" // spare ClickHouse database (required)
	KeyRecordDir    = "drill.record.dir"          // where the evidence records are written (default .)
	KeyQueryPrefix  = "drill.query."              // drill.query.<name>=SELECT ... FROM {table} ...
)

// Config is a parsed restore drill configuration.
type Config struct {
	Source       *reconcile.Config
	SnapshotID   int64
	MetadataFile string
	Namespace    string
	CHDatabase   string
	RecordDir    string
	Queries      []Query
}

// Query is a key query run against the source and the restored ClickHouse table ({table} stands for it).
type Query struct {
	Name string `json:"name"`
	SQL  string `json:"sql"`
}

// ParseConfig reads the properties of a drill.
func ParseConfig(props map[string]string) (*Config, error) {
	src, err := reconcile.ParseConfig(props)
	if err != nil {
		return nil, err
	}
	c := &Config{Source: src, MetadataFile: strings.TrimSpace(props[KeyMetadataFile]), Namespace: strings.TrimSpace(props[KeyNamespace]),
		CHDatabase: strings.TrimSpace(props[KeyCHDatabase]), RecordDir: strings.TrimSpace(props[KeyRecordDir])}
	if v := strings.TrimSpace(props[KeySnapshot]); v != "" {
		if c.SnapshotID, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, fmt.Errorf("%s=%q: want a snapshot id", KeySnapshot, v)
		}
	}
	if c.SnapshotID != 0 && c.MetadataFile != "" {
		return nil, fmt.Errorf("%s and %s exclude each other", KeySnapshot, KeyMetadataFile)
	}
	if c.Namespace == "" {
		return nil, fmt.Errorf("%s is required: the spare Iceberg namespace the table is restored into", KeyNamespace)
	}
	if ns, _, _ := strings.Cut(src.IcebergTable, "."); ns == c.Namespace {
		return nil, fmt.Errorf("%s=%s is the source table's namespace: give a spare one", KeyNamespace, c.Namespace)
	}
	if c.CHDatabase == "" {
		return nil, fmt.Errorf("%s is required: the spare ClickHouse database the table is rebuilt into", KeyCHDatabase)
	}
	if c.CHDatabase == src.CH.Database {
		return nil, fmt.Errorf("%s=%s is the source table's database: give a spare one", KeyCHDatabase, c.CHDatabase)
	}
	if c.RecordDir == "" {
		c.RecordDir = "."
	}
	for k, v := range props {
		if name, ok := strings.CutPrefix(k, KeyQueryPrefix); ok && strings.TrimSpace(v) != "" {
			if !strings.Contains(v, "{table}") {
				return nil, fmt.Errorf("%s: the query must name {table}", k)
			}
			c.Queries = append(c.Queries, Query{Name: name, SQL: strings.TrimSpace(v)})
		}
	}
	sort.Slice(c.Queries, func(i, j int) bool { return c.Queries[i].Name < c.Queries[j].Name })
	return c, nil
}

// RestoredTable is the restored copy's Iceberg identifier.
func (c *Config) RestoredTable() string {
	name := c.Source.IcebergTable[strings.LastIndexByte(c.Source.IcebergTable, '.')+1:]
	return c.Namespace + "." + name
}
