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
