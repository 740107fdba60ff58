package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the collector's target when GOGC is not set: the heap may grow to 1.5x what is
// live instead of Go's 2x. A sink worker's live heap is mostly buffered records, so its peak memory
// follows this headroom; the collector's extra CPU is small beside decoding and encoding. GOGC (and
// GOMEMLIMIT) set in the environment take precedence, as for any Go program.
const defaultGCPercent = 50

func setupGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}
