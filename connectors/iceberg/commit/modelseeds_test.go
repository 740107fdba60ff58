package commit

import (
	"os"
	"strconv"
	"testing"
)

// modelSeeds are the seeds a model test runs: from base, or the seed in the environment variable name
// (to replay one), as many as count, or the number in name+"S" (to widen the search).
func modelSeeds(t *testing.T, name string, base int64, count int) (first int64, n int) {
	t.Helper()
	if s := os.Getenv(name); s != "" {
		base, _ = strconv.ParseInt(s, 10, 64)
	}
	if s := os.Getenv(name + "S"); s != "" {
		count, _ = strconv.Atoi(s)
	}
	t.Logf("seeds %d.. (%s), %d of them (%sS)", base, name, count, name)
	return base, count
}
