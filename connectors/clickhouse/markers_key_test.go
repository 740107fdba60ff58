package clickhouse

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A key's marker text does not depend on the numeric type its converter gave it: markers written while
// records came as schemaless JSON (float64) are found when they come with a schema (int64), and back.
func TestMarkerKeyNumericTypes(t *testing.T) {
	want := markerKey(map[string]any{"id": int64(1000000), "region": "eu"})
	for _, v := range []any{float64(1e6), float32(1e6), json.Number("1000000"), int32(1000000), uint64(1000000)} {
		require.Equal(t, want, markerKey(map[string]any{"id": v, "region": "eu"}), "%T", v)
	}
	require.NotEqual(t, markerKey(map[string]any{"id": 1.5}), markerKey(map[string]any{"id": int64(1)}))
}
