//go:build !race

package api

// raceDetector tells whether the tests run under the race detector, whose shadow memory multiplies the
// process's RSS: memory bounds measure the product only without it.
const raceDetector = false
