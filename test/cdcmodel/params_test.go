package cdcmodel

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// params of a run, from the environment (make soak sets them).
type params struct {
	seed       int64
	streams    int // per round
	total      int // all rounds
	kills      int // per round
	partitions int
	shrink     time.Duration
	bare       float64 // < 0: the generator's default
	// skippedTails: partitions end with records the sink never gets (tombstones dropped by the Filter
	// SMT, values tolerated by errors.tolerance=all, dead-lettered ones), and the group must reach the end
	skippedTails bool
}

func envInt(t *testing.T, name string, def int64) int64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, v)
	}
	return n
}

// readParams reads CDC_SEED (default: random), CDC_STREAMS (per round, 2000), CDC_TOTAL_STREAMS (all rounds),
// CDC_KILLS (per round, 3), CDC_PARTITIONS (3), CDC_SHRINK_SECONDS (300), CDC_BARE_TOMBSTONES (a rate) and
// CDC_SKIPPED_TAILS (1: every test runs with skipped tails; the *SkippedTails tests always do).
func readParams(t *testing.T) params {
	p := params{
		seed:       envInt(t, "CDC_SEED", time.Now().UnixNano()%1_000_000_000),
		streams:    int(envInt(t, "CDC_STREAMS", 2000)),
		total:      int(envInt(t, "CDC_TOTAL_STREAMS", 0)),
		kills:      int(envInt(t, "CDC_KILLS", 3)),
		partitions: int(envInt(t, "CDC_PARTITIONS", 3)),
		shrink:     time.Duration(envInt(t, "CDC_SHRINK_SECONDS", 300)) * time.Second,
		bare:       -1,
	}
	p.skippedTails = envInt(t, "CDC_SKIPPED_TAILS", 0) == 1
	if p.total > 0 && p.total < p.streams {
		p.streams = p.total
	}
	p.total = max(p.total, p.streams)
	if v := os.Getenv("CDC_BARE_TOMBSTONES"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			t.Fatalf("CDC_BARE_TOMBSTONES=%q: want a rate between 0 and 1", v)
		}
		p.bare = f
	}
	return p
}
