package restoredrill

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseConfig: ParseConfig never panics, and an error names a key of the config.
func FuzzParseConfig(f *testing.F) {
	base := map[string]string{"iceberg.catalog.type": "sql", "iceberg.catalog.uri": "jdbc:sqlite:/tmp/c.db",
		"iceberg.table": "cdc.customers", "clickhouse.hostname": "ch", "clickhouse.table": "customers",
		"clickhouse.database": "default", KeySnapshot: "42", KeyNamespace: "drill", KeyCHDatabase: "drill",
		KeyRecordDir: "/tmp/records", KeyQueryPrefix + "count": "SELECT count() FROM {table}"}
	_, err := ParseConfig(base)
	require.NoError(f, err)
	keys := slices.Sorted(maps.Keys(base))
	for i, v := range []string{"", " ", "cdc", "default", "-1", "9223372036854775808", "SELECT 1", "\xff", "x"} {
		f.Add(uint(i), v)
	}
	f.Fuzz(func(t *testing.T, i uint, v string) {
		p := maps.Clone(base)
		k := keys[i%uint(len(keys))]
		p[k] = v
		if _, err := ParseConfig(p); err != nil {
			require.True(t, slices.ContainsFunc(keys, func(key string) bool {
				// the clickhouse.* keys reach clickhouse.ParseConfig without their prefix
				return strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "configuration "+strings.TrimPrefix(key, "clickhouse."))
			}), "%s=%q: %v", k, v, err)
		}
	})
}
