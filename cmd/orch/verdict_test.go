package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
)

// TestVerdictOfACompletedRunReadsNothing: a run started by this orch run
// whose cues all completed gets its verdict from the runner's result; the
// store (nil here: any read would panic) is read only for a continued
// run's whole duration or for failed cues, which a short run paid for on
// every run.
func TestVerdictOfACompletedRunReadsNothing(t *testing.T) {
	var out bytes.Buffer
	res := &runner.Result{RunID: "0123456789ab", State: record.RunCompleted,
		Cues: []record.CueOutcome{{ID: "A", State: record.CueCompleted}, {ID: "B", State: record.CueCompleted}}}
	printVerdict(&streams{out: &out}, nil, nil, res, 1500*time.Millisecond, 10, false)
	if want := "run 0123456789ab completed in 1.5s: 2 completed\n"; out.String() != want {
		t.Errorf("verdict %q, want %q", out.String(), want)
	}
}
