package scd

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
)

// Connector property keys (connectd extensions of the Iceberg sink's keys) that configure SCD
// materialization, read by `connectd iceberg scd` and by the connector's schedule.
const (
	KeyPrefix = "iceberg.tables.scd."
	// KeyTables lists the history tables to materialize (namespace.name, comma-separated).
	KeyTables = KeyPrefix + "tables"
	// KeyInterval runs the materialization inside the connector every interval (ms); 0: never.
	KeyInterval = KeyPrefix + "interval-ms"
	// KeyTargetSuffix names each SCD table after its history table: <history><suffix>.
	KeyTargetSuffix = KeyPrefix + "target-suffix"
	// KeyAttributes are the attribute columns (comma-separated); empty: the whole payload.
	KeyAttributes    = KeyPrefix + "attributes"
	KeySkipUnchanged = KeyPrefix + "skip-unchanged"
	KeyDeleteMarkers = KeyPrefix + "delete-markers"
	KeyTargetFile    = KeyPrefix + "target-file-size-bytes"
	// Columns of a history table that is not the raw CDC model (an append table with a key and
	// a source version per row); KeyKeyColumn set switches from the raw CDC model to these.
	KeyKeyColumn       = KeyPrefix + "key-column"
	KeyVersionColumn   = KeyPrefix + "version-column"
	KeyValidFromColumn = KeyPrefix + "valid-from-column"
	KeyOpColumn        = KeyPrefix + "op-column"
	KeyPayloadColumn   = KeyPrefix + "payload-column"

	// Per history table (iceberg.table.<history>.<key>): the SCD table's name, and its attributes.
	TableKeyTarget     = "scd-table"
	TableKeyAttributes = "scd-attributes"

	DefaultTargetSuffix = "_scd"
)

// Config is the SCD materialization of a connector's properties.
type Config struct {
	Tables   []Options
	Interval time.Duration // 0: no schedule
}

// ParseConfig reads the iceberg.tables.scd.* keys (and iceberg.table.<history>.scd-*) of props.
func ParseConfig(props map[string]string) (Config, error) {
	var c Config
	if v := props[KeyInterval]; v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return c, fmt.Errorf("%s: %q is not a number of milliseconds", KeyInterval, v)
		}
		c.Interval = time.Duration(ms) * time.Millisecond
	}
	base := Options{Attributes: splitList(props[KeyAttributes])}
	var err error
	if base.SkipUnchanged, err = parseBool(props, KeySkipUnchanged); err != nil {
		return c, err
	}
	if base.DeleteMarkers, err = parseBool(props, KeyDeleteMarkers); err != nil {
		return c, err
	}
	if v := props[KeyTargetFile]; v != "" {
		if base.TargetFileSize, err = strconv.ParseInt(v, 10, 64); err != nil || base.TargetFileSize < 0 {
			return c, fmt.Errorf("%s: %q is not a size in bytes", KeyTargetFile, v)
		}
	}
	if k := props[KeyKeyColumn]; k != "" {
		base.Source = Source{KeyColumn: k, VersionColumn: props[KeyVersionColumn], ValidFromColumn: props[KeyValidFromColumn],
			OpColumn: props[KeyOpColumn], PayloadColumn: props[KeyPayloadColumn]}
	}
	suffix := DefaultTargetSuffix
	if v, ok := props[KeyTargetSuffix]; ok {
		suffix = v
	}
	for _, h := range splitList(props[KeyTables]) {
		o := base
		o.History = catalog.ToIdentifier(h)
		target := props["iceberg.table."+h+"."+TableKeyTarget]
		if target == "" {
			if suffix == "" {
				return c, fmt.Errorf("%s: empty, and %s has no iceberg.table.%s.%s", KeyTargetSuffix, h, h, TableKeyTarget)
			}
			target = h + suffix
		}
		o.Target = catalog.ToIdentifier(target)
		if v, ok := props["iceberg.table."+h+"."+TableKeyAttributes]; ok {
			o.Attributes = splitList(v)
		}
		if err := o.validate(); err != nil {
			return c, fmt.Errorf("%s: %w", h, err)
		}
		if strings.Join(o.Target, ".") == h {
			return c, fmt.Errorf("%s: the SCD table cannot be the history table", h)
		}
		c.Tables = append(c.Tables, o)
	}
	if c.Interval > 0 && len(c.Tables) == 0 {
		return c, fmt.Errorf("%s is set but %s lists no history table", KeyInterval, KeyTables)
	}
	return c, nil
}

func parseBool(props map[string]string, k string) (bool, error) {
	v := props[k]
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s: %q is not true or false", k, v)
	}
	return b, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
