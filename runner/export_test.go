//go:build unix

package runner

import "github.com/orch-cli/orch/runner/record"

// NewMemRecorder gives the runner's external tests (benchmarks) the
// in-memory Recorder, to set the runner's own cost apart from the store's.
func NewMemRecorder() record.Recorder { return newMemRecorder() }
