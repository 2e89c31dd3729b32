//go:build unix

package runner

// NewMemRecorder gives the runner's external tests (benchmarks) the
// in-memory Recorder, to set the runner's own cost apart from the store's.
func NewMemRecorder() Recorder { return newMemRecorder() }
