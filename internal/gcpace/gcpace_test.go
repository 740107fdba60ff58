package gcpace

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGCMemoryLimit(t *testing.T) {
	for _, c := range []struct{ live, nonHeap, ceiling, want int64 }{
		{10 << 20, 20 << 20, 0, gcFloor},                // a small heap: the floor, Go's default pacing below it
		{200 << 20, 20 << 20, 0, 320 << 20},             // a large one: 1.5 times the live heap, and the rest
		{200 << 20, 20 << 20, 300 << 20, 300 << 20},     // never past the cgroup's share
		{10 << 20, 20 << 20, 100 << 20, 100 << 20},      // a cgroup share below the floor
		{math.MaxInt64 - 10, 1 << 20, 0, math.MaxInt64}, // no overflow to a negative limit
		{200 << 20, -(1 << 20), 0, 300 << 20},           // metrics read apart: no negative rest
	} {
		require.Equal(t, c.want, gcMemoryLimit(c.live, c.nonHeap, c.ceiling), "live %d, non-heap %d, ceiling %d", c.live, c.nonHeap, c.ceiling)
	}
}

// After each collection the pacer sets the soft memory limit from what the collection left.
func TestGCPacerFollowsCollections(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const ceiling = 1 << 40
	newGCPacer(ceiling).arm()
	for _, ballast := range []int{0, 400 << 20} {
		held := make([]byte, ballast)
		debug.SetMemoryLimit(math.MaxInt64)
		var limit int64
		require.Eventually(t, func() bool {
			runtime.GC()
			limit = debug.SetMemoryLimit(-1)
			return limit != math.MaxInt64
		}, 10*time.Second, 10*time.Millisecond, "no limit set after a collection")
		require.GreaterOrEqual(t, limit, int64(gcFloor))
		require.GreaterOrEqual(t, limit, int64(len(held))*3/2, "room for half the live heap past it")
		runtime.KeepAlive(held)
	}
}
