//go:build race

package main

// raceDetector: the tests run under the race detector, which makes orch
// several times slower and its memory several times larger.
const raceDetector = true
