package maintenance

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// FuzzParseActions: ParseActions never panics and never returns an empty action set without an error.
func FuzzParseActions(f *testing.F) {
	for _, s := range []string{"", " ", ",", "compact", "compact,vacuum", "rewrite-manifests, expire-snapshots,remove-orphans,", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseActions(s)
		if err == nil {
			require.NotEqual(t, Actions{}, a)
		}
	})
}

// FuzzParsePolicy: ParsePolicy and ParseRetention never panic, and their errors are ConfigErrors naming a key.
func FuzzParsePolicy(f *testing.F) {
	base := map[string]string{KeyTargetFileSize: "134217728", KeyMinInputFiles: "5", KeyRetainLast: "3",
		KeyMaxSnapshotAge: "86400000", KeyExpireGrace: "0", KeyOrphanAge: "259200000", KeyDeletesHorizon: "0",
		KeyRetentionColumn: "ts", KeyRetentionMaxAge: "60000"}
	_, err := ParsePolicy(base)
	require.NoError(f, err)
	keys := slices.Sorted(maps.Keys(base))
	for i, v := range []string{"", " ", "ten", "-1", "0", "9223372036854775807", "9223372036854775808", "+5", "1e3", "\xff"} {
		f.Add(uint(i), v)
	}
	f.Fuzz(func(t *testing.T, i uint, v string) {
		p := maps.Clone(base)
		k := keys[i%uint(len(keys))]
		p[k] = v
		_, err := ParsePolicy(p)
		if err == nil {
			return
		}
		var ce *connect.ConfigError
		require.True(t, errors.As(err, &ce), "%s=%q: %v", k, v, err)
		require.Contains(t, keys, ce.Name)
	})
}
