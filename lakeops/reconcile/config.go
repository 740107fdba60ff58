// Package reconcile compares a ClickHouse table written by the ClickHouse sink with the Iceberg table written
// by the Iceberg sink from the same change stream, at a consistent cut of Kafka offsets, and rebuilds the
// ClickHouse table from an Iceberg snapshot.
package reconcile

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connectors/clickhouse"
)

// Property keys of a reconcile/rebuild properties file (all can also be given as key=value arguments).
const (
	KeyIcebergTable    = "iceberg.table"             // namespace.table of the Iceberg current-state table
	KeyIcebergGroup    = "iceberg.group.id"          // consumer group whose offsets the snapshot summaries hold
	KeyIcebergVersion  = "iceberg.version-column"    // default: _cdc_version when the table has it
	KeyCHTable         = "clickhouse.table"          // table in clickhouse.database
	KeyCHVersion       = "clickhouse.version-column" // default: the ReplacingMergeTree version argument
	KeyCHDeleted       = "clickhouse.deleted-column" // default: the ReplacingMergeTree is_deleted argument
	KeyKeyColumns      = "key.columns"               // comma-separated; default: the Iceberg identifier fields
	KeyColumns         = "columns"                   // compared columns; default: every column of both tables
	KeyExcludeColumns  = "columns.exclude"           // columns left out of the comparison
	KeyBucketColumn    = "bucket.column"             // a date/timestamp column: time buckets; none: key-hash buckets
	KeyBucketWidth     = "bucket.width"              // time bucket width (Go duration, e.g. 1h, 24h)
	KeyBuckets         = "buckets"                   // number of key-hash buckets (default 16)
	KeyMaxKeys         = "max.keys"                  // mismatching keys listed (default 100)
	KeyLagTolerance    = "lag.tolerance.records"     // lag above this many records is an error (default: any lag is fine)
	KeyKafkaBootstrap  = "kafka.bootstrap.servers"   // optional: read in-flight records to leave their keys out
	KeyCHGroup         = "clickhouse.group.id"       // the ClickHouse connector's consumer group (connect-<name>)
	KeyTopics          = "topics"                    // the topics feeding both tables (default: those the offsets of either layer name)
	icebergCatalogPfx  = "iceberg.catalog."
	icebergCatalogName = "iceberg.catalog"
	clickhousePfx      = "clickhouse."
)

// Config is a parsed reconcile/rebuild configuration.
type Config struct {
	CatalogName  string
	CatalogProps map[string]string // iceberg.catalog.* without the prefix, as the Iceberg sink takes them
	IcebergTable string
	IcebergGroup string
	IcebergVer   string

	CH         *clickhouse.Config // clickhouse.* without the prefix, as the ClickHouse sink takes them
	CHProps    map[string]string
	CHTable    string
	CHVersion  string
	CHDeleted  string
	KeyColumns []string
	Columns    []string
	Exclude    []string

	BucketColumn string
	BucketWidth  time.Duration
	Buckets      int
	MaxKeys      int
	LagTolerance int64 // < 0: no limit

	KafkaBootstrap string
	CHGroup        string
	Topics         []string
}

// ParseConfig reads the properties of a reconcile or rebuild run.
func ParseConfig(props map[string]string) (*Config, error) {
	c := &Config{CatalogProps: map[string]string{}, CHProps: map[string]string{}, Buckets: 16, MaxKeys: 100, LagTolerance: -1,
		BucketWidth: 24 * time.Hour}
	for k, v := range props {
		switch {
		case k == icebergCatalogName:
			c.CatalogName = v
		case strings.HasPrefix(k, icebergCatalogPfx):
			c.CatalogProps[strings.TrimPrefix(k, icebergCatalogPfx)] = v
		case strings.HasPrefix(k, clickhousePfx) && k != KeyCHTable && k != KeyCHVersion && k != KeyCHDeleted && k != KeyCHGroup:
			c.CHProps[strings.TrimPrefix(k, clickhousePfx)] = v
		}
	}
	c.IcebergTable = strings.TrimSpace(props[KeyIcebergTable])
	c.IcebergGroup = strings.TrimSpace(props[KeyIcebergGroup])
	c.IcebergVer = strings.TrimSpace(props[KeyIcebergVersion])
	c.CHTable = strings.TrimSpace(props[KeyCHTable])
	c.CHVersion = strings.TrimSpace(props[KeyCHVersion])
	c.CHDeleted = strings.TrimSpace(props[KeyCHDeleted])
	c.KeyColumns = SplitList(props[KeyKeyColumns])
	c.Columns = SplitList(props[KeyColumns])
	c.Exclude = SplitList(props[KeyExcludeColumns])
	c.BucketColumn = strings.TrimSpace(props[KeyBucketColumn])
	c.KafkaBootstrap = strings.TrimSpace(props[KeyKafkaBootstrap])
	c.CHGroup = strings.TrimSpace(props[KeyCHGroup])
	c.Topics = SplitList(props[KeyTopics])
	if c.CHGroup != "" && c.KafkaBootstrap == "" {
		return nil, fmt.Errorf("%s needs %s", KeyCHGroup, KeyKafkaBootstrap)
	}
	if c.IcebergTable == "" || !strings.Contains(c.IcebergTable, ".") {
		return nil, fmt.Errorf("%s is required (namespace.table)", KeyIcebergTable)
	}
	if len(c.CatalogProps) == 0 {
		return nil, fmt.Errorf("iceberg.catalog.* properties are required (as the Iceberg sink takes them)")
	}
	if c.CHTable == "" {
		return nil, fmt.Errorf("%s is required", KeyCHTable)
	}
	ch, err := clickhouse.ParseConfig(c.CHProps)
	if err != nil {
		return nil, fmt.Errorf("clickhouse.* properties: %w", err)
	}
	c.CH = ch
	if v := strings.TrimSpace(props[KeyBucketWidth]); v != "" {
		if c.BucketWidth, err = time.ParseDuration(v); err != nil || c.BucketWidth <= 0 {
			return nil, fmt.Errorf("%s=%q: want a positive duration such as 1h", KeyBucketWidth, v)
		}
	}
	for key, dst := range map[string]*int{KeyBuckets: &c.Buckets, KeyMaxKeys: &c.MaxKeys} {
		if v := strings.TrimSpace(props[key]); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%s=%q: want a positive number", key, v)
			}
			*dst = n
		}
	}
	if v := strings.TrimSpace(props[KeyLagTolerance]); v != "" {
		if c.LagTolerance, err = strconv.ParseInt(v, 10, 64); err != nil || c.LagTolerance < 0 {
			return nil, fmt.Errorf("%s=%q: want a number of records >= 0", KeyLagTolerance, v)
		}
	}
	return c, nil
}

// SplitList is the items of a comma-separated property value (key.columns, topics, and the table lists of
// the commands built on this configuration), trimmed, empty ones left out.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
