package restoredrill

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/configfuzz"
)

// FuzzParseConfig: ParseConfig never panics, and an error names a key of the config.
func FuzzParseConfig(f *testing.F) {
	base := map[string]string{"iceberg.catalog.type": "sql", "iceberg.catalog.uri": "jdbc:sqlite:/tmp/c.db",
		"iceberg.table": "cdc.customers", "clickhouse.hostname": "ch", "clickhouse.table": "customers",
		"clickhouse.database": "default", KeySnapshot: "42", KeyNamespace: "drill", KeyCHDatabase: "drill",
		KeyRecordDir: "/tmp/records", KeyQueryPrefix + "count": "SELECT count() FROM {table}"}
	configfuzz.OneKey(f, base, []string{"", " ", "cdc", "default", "-1", "9223372036854775808", "SELECT 1", "\xff", "x"},
		func(p map[string]string) error { _, err := ParseConfig(p); return err })
}
