package maintenance

import (
	"fmt"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
)

// Keys of the connector's properties that set the maintenance policy of its tables.
const (
	KeyPrefix         = "iceberg.tables.maintenance."
	KeyTargetFileSize = KeyPrefix + "target-file-size-bytes"
	KeyMinInputFiles  = KeyPrefix + "min-input-files"
	KeyRetainLast     = KeyPrefix + "retain-last"
	KeyMaxSnapshotAge = KeyPrefix + "max-snapshot-age-ms"
	KeyExpireGrace    = KeyPrefix + "expire-grace-ms"
	KeyOrphanAge      = KeyPrefix + "orphan-age-ms"
	KeyDeletesHorizon = KeyPrefix + "deletes-horizon-ms"

	// KeyRetentionColumn and KeyRetentionMaxAge age rows out of every maintained table;
	// iceberg.table.<table>.retention-column and .retention-max-age-ms set them per table.
	KeyRetentionColumn = "iceberg.tables." + TableRetentionColumn
	KeyRetentionMaxAge = "iceberg.tables." + TableRetentionMaxAge
	// TableRetentionColumn and TableRetentionMaxAge are the suffixes of the per-table keys.
	TableRetentionColumn = "retention-column"
	TableRetentionMaxAge = "retention-max-age-ms"
)

// TableRetentionKeys are the keys of one table's retention, which override the connector's.
func TableRetentionKeys(table string) (column, maxAge string) {
	return "iceberg.table." + table + "." + TableRetentionColumn, "iceberg.table." + table + "." + TableRetentionMaxAge
}

// Policy is what maintenance does to a table.
type Policy struct {
	Compact CompactOptions
	Expire  ExpireOptions
	Orphans OrphanOptions
	// Retention, when enabled, deletes the rows older than its horizon before the other actions.
	Retention RetentionOptions
	// DeletesHorizon, when set, expires the rows of a table's <table>__deletes recorded longer ago
	// (ExpireDeletes), with the snapshot expiry; 0 keeps them.
	DeletesHorizon time.Duration
}

// ParsePolicy reads the iceberg.tables.maintenance.* keys of a connector's properties; a key
// left out keeps its default (see the option types; the expiry's grace is DefaultExpireGrace).
// A bad value is a *connect.ConfigError naming its key.
func ParsePolicy(props map[string]string) (Policy, error) {
	p := Policy{Expire: ExpireOptions{Grace: DefaultExpireGrace}}
	var err error
	num := func(key string) (int64, bool, error) {
		v, ok := props[key]
		if !ok || v == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, false, &connect.ConfigError{Name: key, Value: v, Message: "not a non-negative integer"}
		}
		return n, true, nil
	}
	if n, ok, err := num(KeyTargetFileSize); err != nil {
		return p, err
	} else if ok {
		p.Compact.TargetFileSize = n
	}
	if n, ok, err := num(KeyMinInputFiles); err != nil {
		return p, err
	} else if ok {
		p.Compact.MinInputFiles = int(n)
	}
	if n, ok, err := num(KeyRetainLast); err != nil {
		return p, err
	} else if ok {
		p.Expire.RetainLast = int(n)
	}
	if n, ok, err := num(KeyMaxSnapshotAge); err != nil {
		return p, err
	} else if ok {
		p.Expire.MaxAge = time.Duration(n) * time.Millisecond
	}
	if n, ok, err := num(KeyExpireGrace); err != nil {
		return p, err
	} else if ok {
		p.Expire.Grace = time.Duration(n) * time.Millisecond
	}
	if n, ok, err := num(KeyDeletesHorizon); err != nil {
		return p, err
	} else if ok {
		p.DeletesHorizon = time.Duration(n) * time.Millisecond
	}
	if p.Retention, err = ParseRetention(props, KeyRetentionColumn, KeyRetentionMaxAge); err != nil {
		return p, err
	}
	if n, ok, err := num(KeyOrphanAge); err != nil {
		return p, err
	} else if ok {
		p.Orphans.OlderThan = time.Duration(n) * time.Millisecond
		if p.Orphans.OlderThan < MinOrphanAge {
			return p, &connect.ConfigError{Name: KeyOrphanAge, Value: n, Message: fmt.Sprintf("%d ms is below the minimum %s", n, MinOrphanAge)}
		}
	}
	return p, nil
}

// ParseRetention reads a retention's column and max age (milliseconds) from props; both or
// neither must be set. A bad value is a *connect.ConfigError naming its key.
func ParseRetention(props map[string]string, columnKey, maxAgeKey string) (RetentionOptions, error) {
	var o RetentionOptions
	o.Column = props[columnKey]
	v := props[maxAgeKey]
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return o, &connect.ConfigError{Name: maxAgeKey, Value: v, Message: "not a positive integer"}
		}
		o.MaxAge = time.Duration(n) * time.Millisecond
	}
	if (o.Column == "") != (o.MaxAge == 0) {
		return o, &connect.ConfigError{Name: maxAgeKey, Value: v, Message: "set together with " + columnKey}
	}
	return o, nil
}

// ForTable is the policy of one table: its iceberg.table.<table>.retention.* keys, when set,
// replace the connector's retention.
func (p Policy) ForTable(props map[string]string, table string) (Policy, error) {
	ck, ak := TableRetentionKeys(table)
	if props[ck] == "" && props[ak] == "" {
		return p, nil
	}
	r, err := ParseRetention(props, ck, ak)
	if err != nil {
		return p, err
	}
	p.Retention = r
	return p, nil
}
