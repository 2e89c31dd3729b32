//go:build race

package store

// raceDetector: the tests run under the race detector, which allocates
// where a normal build does not (sync.Pool drops what it is given at random).
const raceDetector = true
