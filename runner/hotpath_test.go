//go:build unix

package runner

import (
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// TestPlainChainAsksTheLoopNothing: between one plain process's exit and
// the next cue's GO, an attempt makes no request to the loop (each is two
// goroutine switches on a chain's critical path): its task is ended as the
// loop takes its report, and the task tree still says how each ended.
func TestPlainChainAsksTheLoopNothing(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + `  cues:
    - {id: A, agents: [ok]}
    - {id: B, agents: [ok], dependencies: [A]}
    - {id: C, agents: [no], dependencies: [B]}
`,
		"agents.yaml": "agent: {id: ok, command: [\"true\"]}\n---\nagent: {id: no, command: [\"false\"]}\n",
	})
	var calls int64 = -1
	ended := map[string]string{}
	testHookRunOver = func(r *run) {
		calls = r.loopCalls.Load()
		for _, n := range r.nodes {
			_, why := r.tasks.Working(n.ref)
			ended[n.id] = why
		}
	}
	defer func() { testHookRunOver = nil }()
	rec := newMemRecorder()
	if res := runPlan(t, p, rec, nil); res.State != record.RunFailed {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	wantStates(t, rec, map[string]string{"A": "completed", "B": "completed", "C": "failed"})
	if calls != 0 {
		t.Errorf("the attempts made %d requests to the loop, want none", calls)
	}
	for cue, how := range map[string]string{"A": "completed", "B": "completed", "C": "failed"} {
		if !strings.Contains(ended[cue], "ended (task "+cue+" "+how+")") {
			t.Errorf("task %s: %q, want it ended %s", cue, ended[cue], how)
		}
	}
}
