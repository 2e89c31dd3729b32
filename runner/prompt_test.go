package runner

import (
	"strings"
	"testing"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/spec"
)

func TestRenderPrompt(t *testing.T) {
	task := &Task{RunID: "r1", CueID: "impl", AgentID: "coder", Attempt: 2,
		Inputs: map[string]any{"feature": "search", "n": 3.0}, Blackboard: map[string]any{"plan": "ok"}}
	tests := []struct {
		name      string
		agent     spec.Agent
		cuePrompt string
		want      string
	}{
		{"agent prompt", spec.Agent{Prompt: "Implement {{.inputs.feature}} ({{.cue_id}}, try {{.attempt}}, plan {{.blackboard.plan}})"}, "",
			"Implement search (impl, try 2, plan ok)"},
		{"the cue's prompt wins", spec.Agent{Prompt: "agent's"}, "cue's {{.run_id}}", "cue's r1"},
		{"no prompt: the task", spec.Agent{}, "", "Task impl (run r1, attempt 2).\n\nInputs:\n- feature: search\n- n: 3\n\nBlackboard:\n- plan: ok"},
		{"other keys are asked for", spec.Agent{Prompt: "Go.", Provides: []string{"text", "summary", "risk"}}, "",
			"Go.\n\nEnd your reply with a JSON object holding these keys: summary, risk."},
		{"text alone asks for nothing", spec.Agent{Prompt: "Go.", Provides: []string{"text"}}, "", "Go."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderPrompt(&tt.agent, tt.cuePrompt, task)
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	_, err := renderPrompt(&spec.Agent{Prompt: "{{.inputs.missing}}"}, "", task)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a missing input: got %v, want an error naming it", err)
	}
}

// The blackboard in a prompt says who wrote each value (seed 004 §2:
// "(by researcher)"), in the plain task and to a template.
func TestPromptBoardAuthors(t *testing.T) {
	task := &Task{RunID: "r1", CueID: "impl", Attempt: 1, Blackboard: map[string]any{"plan": "ok"},
		BlackboardEntries: map[string]protocols.BoardEntry{"plan": {Value: "ok", Version: 3, Author: "researcher"}}}
	got, err := renderPrompt(&spec.Agent{}, "", task)
	if want := "Blackboard:\n- plan: ok (version 3, by researcher)"; err != nil || !strings.HasSuffix(got, want) {
		t.Fatalf("got %q, %v; want it to end with %q", got, err, want)
	}
	got, err = renderPrompt(&spec.Agent{Prompt: "{{.blackboard.plan}} by {{.blackboard_entries.plan.author}}"}, "", task)
	if err != nil || got != "ok by researcher" {
		t.Fatalf("template: got %q, %v", got, err)
	}
}
