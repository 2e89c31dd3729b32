//go:build temporal_e2e && linux

package temporal

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemporalShellBlackboard: plain agents on two workers use orch bb set
// and orch bb get from their shell. A worker has no run database (ORCH_DB
// is empty there), so orch bb goes to the worker's endpoint and from it to
// the workflow: the writer's name is the author, a stale --if-version is
// refused as locally, and the write meets the next cue's condition, whose
// agent reads it on the other worker.
func TestTemporalShellBlackboard(t *testing.T) {
	p := startCollab(t, "shellbb", "writer.yaml")
	if out, code := p.run("run", "--engine", "temporal", "--db", p.db, filepath.Join("shellbb", "cuelist.yaml")); code != 0 {
		ev, _ := p.run("events", "--db", p.db, "last")
		t.Fatalf("orch run --engine temporal: exit %d\n%s\n%s", code, out, ev)
	}
	id := runID(t, p.run, p.db)
	var st struct {
		State string
		Cues  []struct {
			ID      string
			Outputs map[string]any
		}
	}
	out, _ := p.run("status", "--db", p.db, id, "--output", "json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("orch status %s: %v\n%s", id, err, out)
	}
	outputs := map[string]map[string]any{}
	for _, c := range st.Cues {
		outputs[c.ID] = c.Outputs
	}
	if st.State != "completed" || outputs["WRITE-100"]["seen"] != "navy" || outputs["WRITE-100"]["stale"] != "refused" || outputs["READ-200"]["seen"] != "navy" {
		t.Fatalf("orch status %s:\n%s", id, out)
	}
	ev, _ := p.run("events", "--db", p.db, id)
	for _, want := range []string{"blackboard color = version 1 by shell-writer", "blackboard color not written by shell-writer: expected version 0, it is at 1"} {
		if !strings.Contains(ev, want) {
			t.Errorf("no %q in orch events:\n%s", want, ev)
		}
	}
	if out, code := p.run("bb", "get", "--db", p.db, "--run", id, "--output", "json", "color"); code != 0 || !strings.Contains(out, `"author": "shell-writer"`) {
		t.Errorf("orch bb get color: exit %d\n%s", code, out)
	}
}
