package attempt

import (
	"os"
	"path/filepath"
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
			got, err := RenderPrompt(&tt.agent, tt.cuePrompt, task)
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	// A fan-out's item: named by its as (and item) in a template, given in
	// the plain rendering.
	item := &Task{RunID: "r1", CueID: "IMPL[db]", Attempt: 1, Item: []byte(`{"id":"db","title":"Database"}`), ItemName: "task"}
	if got, err := RenderPrompt(&spec.Agent{}, "Implement {{.task.title}} ({{.item.id}})", item); err != nil || got != "Implement Database (db)" {
		t.Errorf("an item's template: %q, %v", got, err)
	}
	if got, _ := RenderPrompt(&spec.Agent{}, "", item); got != `Task IMPL[db] (run r1, attempt 1).`+"\n\n"+`Its item (task): {"id":"db","title":"Database"}` {
		t.Errorf("an item's plain rendering: %q", got)
	}
	_, err := RenderPrompt(&spec.Agent{Prompt: "{{.inputs.missing}}"}, "", task)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a missing input: got %v, want an error naming it", err)
	}
}

// The blackboard in a prompt says who wrote each value (docs/design.md#the-blackboard:
// "(by researcher)"), in the plain task and to a template.
func TestPromptBoardAuthors(t *testing.T) {
	task := &Task{RunID: "r1", CueID: "impl", Attempt: 1, Blackboard: map[string]any{"plan": "ok"},
		BlackboardEntries: map[string]protocols.BoardEntry{"plan": {Value: "ok", Version: 3, Author: "researcher"}}}
	got, err := RenderPrompt(&spec.Agent{}, "", task)
	if want := "Blackboard:\n- plan: ok (version 3, by researcher)"; err != nil || !strings.HasSuffix(got, want) {
		t.Fatalf("got %q, %v; want it to end with %q", got, err, want)
	}
	got, err = RenderPrompt(&spec.Agent{Prompt: "{{.blackboard.plan}} by {{.blackboard_entries.plan.author}}"}, "", task)
	if err != nil || got != "ok by researcher" {
		t.Fatalf("template: got %q, %v", got, err)
	}
}

// A fan-out's item reaches a plain agent as ORCH_ITEM (JSON), or, past
// the size of one environment value, in a file named by ORCH_ITEM_FILE.
// The input directory exists only while a file needs it: remove deletes
// the one it made, and leaves alone a path it never made.
func TestInputVarsItem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "C.a.1.in")
	vars, remove, err := InputVars(&Task{Item: []byte(`{"id":"db"}`), Inputs: map[string]any{"n": 1.0}}, dir)
	if err != nil || strings.Join(vars, " ") != `ORCH_ITEM={"id":"db"} ORCH_INPUT_N=1` {
		t.Errorf("vars %q, %v", vars, err)
	}
	if err := os.WriteFile(dir, []byte("not ours"), 0o600); err != nil {
		t.Fatal(err)
	}
	remove() // no file was needed: what is at dir is not touched
	if b, err := os.ReadFile(dir); err != nil || string(b) != "not ours" {
		t.Fatalf("remove touched a path it never made: %q, %v", b, err)
	}
	_ = os.Remove(dir)
	big := `"` + strings.Repeat("x", maxEnvInput) + `"`
	vars, remove, err = InputVars(&Task{Item: []byte(big)}, dir)
	if err != nil || len(vars) != 1 || !strings.HasPrefix(vars[0], "ORCH_ITEM_FILE=") {
		t.Fatalf("vars of a big item %.80q, %v", vars, err)
	}
	if b, err := os.ReadFile(strings.TrimPrefix(vars[0], "ORCH_ITEM_FILE=")); err != nil || string(b) != big {
		t.Errorf("the item's file holds %d bytes, %v", len(b), err)
	}
	remove()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the input directory is still there after remove: %v", err)
	}
}
