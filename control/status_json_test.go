package control

import (
	"bytes"
	"testing"
)

// TestWriteRunJSON: a run's JSON written a cue at a time is exactly what
// writing it whole gives.
func TestWriteRunJSON(t *testing.T) {
	ts := "2026-01-01T00:00:00Z"
	out := RunStatus{ID: "r1", Cuelist: "c<script>", State: "completed", StartedAt: &ts, Inputs: map[string]any{"cues": []any{}},
		Questions: []Question{}, Worktrees: []Worktree{}, Counts: map[string]int{"completed": 2}}
	for _, cues := range [][]CueStatus{nil, {}, {{ID: "A", Agents: []string{"a"}, Attempts: []AttemptStatus{{Number: 1, Agent: "a", Tail: []string{"x\n  \"cues\": []"}}}},
		{ID: "B", After: []string{"A"}, Outputs: map[string]any{"k": "<b>&"}}}} {
		out.Cues = cues
		var got, want bytes.Buffer
		if err := out.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&want, out); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("cue by cue:\n%s\nwhole:\n%s", got.String(), want.String())
		}
	}
}
