//go:build !race

package store

// raceDetector: see race_on_test.go.
const raceDetector = false
