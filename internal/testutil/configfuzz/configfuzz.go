// Package configfuzz is the fuzz target shape of a config parser that reads REST-posted strings: a valid
// config with one key's value replaced by the fuzzer's string.
package configfuzz

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// OneKey fuzzes parse with base (which must parse) after one of its keys, picked by the fuzzer, is given an
// arbitrary value: parse must not panic, and an error must name a key of the config (keys under
// clickhouse. may be named without that prefix, as the ClickHouse sink's own parser names them).
func OneKey(f *testing.F, base map[string]string, seeds []string, parse func(map[string]string) error) {
	require.NoError(f, parse(base))
	keys := slices.Sorted(maps.Keys(base))
	for i, v := range seeds {
		f.Add(uint(i), v)
	}
	f.Fuzz(func(t *testing.T, i uint, v string) {
		p := maps.Clone(base)
		k := keys[i%uint(len(keys))]
		p[k] = v
		if err := parse(p); err != nil {
			require.True(t, slices.ContainsFunc(keys, func(key string) bool {
				return strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "configuration "+strings.TrimPrefix(key, "clickhouse."))
			}), "%s=%q: %v", k, v, err)
		}
	})
}
