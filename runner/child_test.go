//go:build unix

package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// A handoff's receiver has its agent's retries (the core decides them and
// their backoff) but no fallback: after its last attempt the parent gets
// the failure, with the agent's reason.
func TestChildRetriesThenParentGetsFailure(t *testing.T) {
	o := collab(t, `  cues:
    - id: LEAD
      agents: [lead]
      inputs:
        script:
          - handoff: {to: helper, task_id: T-1, context: {script: [{fail: nope}]}}
`, scriptAgent(t, "lead", "handoff_to: [helper]"),
		scriptAgent(t, "helper", "retry: {max_attempts: 2, backoff: 10ms}, fallback: [spare]"), scriptAgent(t, "spare", ""))
	rec := newMemRecorder()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	var attempts []string
	for _, e := range rec.of(record.EvAttemptEnded) {
		attempts = append(attempts, fmt.Sprintf("%s:%s:%d:%s", e.Cue, e.Agent, e.Attempt, e.State))
	}
	if want := "LEAD/1:helper:1:failed LEAD/1:helper:2:failed LEAD:lead:1:completed"; strings.Join(attempts, " ") != want {
		t.Errorf("attempts: %v, want %s", attempts, want)
	}
	got := outputsOf(t, rec, "LEAD")["handoff_helper"]
	if field(got, "status") != "failed" || !strings.Contains(fmt.Sprint(field(got, "reason")), "helper: ") {
		t.Errorf("handoff result: %v", got)
	}
	if s := rec.cueStates()["LEAD/1"]; s != string(record.CueFailed) {
		t.Errorf("the child is %q, want failed", s)
	}
}
