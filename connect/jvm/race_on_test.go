//go:build race

package jvm

// raceDetector tells whether the tests run under the race detector, whose instrumentation multiplies the
// process's CPU time: CPU bounds measure the product only without it.
const raceDetector = true
