//go:build !race

package runner_test

// raceDetector: see race_on_test.go.
const raceDetector = false
