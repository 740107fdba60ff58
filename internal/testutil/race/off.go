//go:build !race

// Package race tells tests whether they run under the race detector, whose instrumentation multiplies a
// process's CPU time and memory: CPU and memory bounds measure the product only without it.
package race

// Enabled is whether the race detector is on.
const Enabled = false
