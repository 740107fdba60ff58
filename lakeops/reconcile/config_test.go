package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func baseProps() map[string]string {
	return map[string]string{"iceberg.catalog.type": "sql", "iceberg.catalog.uri": "jdbc:sqlite:/tmp/c.db",
		"iceberg.table": "cdc.customers", "clickhouse.hostname": "ch", "clickhouse.table": "customers"}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(baseProps())
	require.NoError(t, err)
	require.Equal(t, "ch", c.CH.Host)
	require.Equal(t, 9000, c.CH.Port)
	require.Equal(t, map[string]string{"type": "sql", "uri": "jdbc:sqlite:/tmp/c.db"}, c.CatalogProps)
	require.Equal(t, 16, c.Buckets)
	require.Equal(t, int64(-1), c.LagTolerance)

	for key, val := range map[string]string{
		"iceberg.table": "customers", "clickhouse.table": "", "buckets": "0", "max.keys": "x",
		"lag.tolerance.records": "-1", "bucket.width": "day", "clickhouse.group.id": "connect-ch",
	} {
		p := baseProps()
		p[key] = val
		_, err := ParseConfig(p)
		require.Error(t, err, "%s=%q", key, val)
		require.Contains(t, err.Error(), key)
	}
	_, err = ParseRebuildOptions(map[string]string{KeyWindowColumn: "id"})
	require.ErrorContains(t, err, KeyWindowFrom)
	_, err = ParseRebuildOptions(map[string]string{KeyRebuildSnapshot: "abc"})
	require.ErrorContains(t, err, KeyRebuildSnapshot)
}

// FuzzRecordKey: Kafka record keys are untrusted input; reading one never panics.
func FuzzRecordKey(f *testing.F) {
	for _, s := range []string{`{"id":"a"}`, `{"schema":{},"payload":{"id":1}}`, `"x"`, `12`, `null`, `{"id":{"n":1}}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = recordKey(b, []string{"id"})
		_, _ = recordKey(b, []string{"a", "b"})
		_, _ = decodeCDCVersion(string(b))
	})
}
