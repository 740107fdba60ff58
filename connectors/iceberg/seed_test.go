package iceberg

import (
	"os"
	"strconv"
	"testing"
)

// modelSeed is a model test's seed: def, or the value of the environment variable env to replay a
// failure; it is logged either way.
func modelSeed(t testing.TB, env string, def int64) int64 {
	seed := def
	if s := os.Getenv(env); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", env, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (%s)", seed, env)
	return seed
}
