package maintenance

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy(map[string]string{"iceberg.tables.upsert-mode-enabled": "true"})
	require.NoError(t, err)
	require.Equal(t, Policy{Expire: ExpireOptions{Grace: DefaultExpireGrace}}, p, "no keys: every default")

	p, err = ParsePolicy(map[string]string{
		KeyTargetFileSize: "134217728", KeyMinInputFiles: "4", KeyRetainLast: "10",
		KeyMaxSnapshotAge: "86400000", KeyOrphanAge: "259200000", KeyExpireGrace: "0",
	})
	require.NoError(t, err)
	require.Equal(t, int64(128<<20), p.Compact.TargetFileSize)
	require.Equal(t, 4, p.Compact.MinInputFiles)
	require.Equal(t, 10, p.Expire.RetainLast)
	require.Equal(t, 24*time.Hour, p.Expire.MaxAge)
	require.Zero(t, p.Expire.Grace, "0: no grace")
	require.Equal(t, 72*time.Hour, p.Orphans.OlderThan)

	for k, v := range map[string]string{KeyRetainLast: "ten", KeyTargetFileSize: "-1", KeyOrphanAge: "60000"} {
		_, err := ParsePolicy(map[string]string{k: v})
		require.ErrorContains(t, err, k)
	}
}

func TestParseRetentionPolicy(t *testing.T) {
	props := map[string]string{KeyRetentionColumn: "ts", KeyRetentionMaxAge: "86400000"}
	p, err := ParsePolicy(props)
	require.NoError(t, err)
	require.Equal(t, RetentionOptions{Column: "ts", MaxAge: 24 * time.Hour}, p.Retention)

	// a table's keys replace the connector's for that table only
	props["iceberg.table.db.hist.retention-column"] = "ingested_at"
	props["iceberg.table.db.hist.retention-max-age-ms"] = "3600000"
	tp, err := p.ForTable(props, "db.hist")
	require.NoError(t, err)
	require.Equal(t, RetentionOptions{Column: "ingested_at", MaxAge: time.Hour}, tp.Retention)
	op, err := p.ForTable(props, "db.other")
	require.NoError(t, err)
	require.Equal(t, p.Retention, op.Retention)

	for _, bad := range []map[string]string{
		{KeyRetentionColumn: "ts"},
		{KeyRetentionMaxAge: "1000"},
		{KeyRetentionColumn: "ts", KeyRetentionMaxAge: "0"},
		{KeyRetentionColumn: "ts", KeyRetentionMaxAge: "a day"},
	} {
		_, err := ParsePolicy(bad)
		require.ErrorContains(t, err, KeyRetentionMaxAge, "%v", bad)
	}
	_, err = Policy{}.ForTable(map[string]string{"iceberg.table.db.hist.retention-column": "ts"}, "db.hist")
	require.ErrorContains(t, err, "iceberg.table.db.hist.retention-max-age-ms")
}
