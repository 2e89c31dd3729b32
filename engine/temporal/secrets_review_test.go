package temporal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/attempt"
)

// A pooled agent whose earlier phases run again on a worker (its GO came
// to a worker that had not warned it) and fail there: the lines it printed
// go into the history with the phase's result, masked as every phase's
// lines are.
func TestPooledCatchUpFailureLinesMasked(t *testing.T) {
	const secret = "tok-catchup-4242-zz"
	t.Setenv("CATCHUP_TEST_TOKEN", secret)
	root := t.TempDir()
	yaml := `agent:
  id: leaky
  protocol: jsonl
  command: [sh, -c, 'read line; echo "using $CATCHUP_TEST_TOKEN" >&2; exit 3']
  workdir: .
---
cuelist:
  id: catchup
  cues:
    - {id: A, agents: [leaky]}
`
	if err := os.WriteFile(filepath.Join(root, "c.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Root: root}
	defer a.Close()
	in := AttemptInput{RunID: "r-catchup-fail", Path: "c.yaml", SpecHash: specHashOf(t, root, "c.yaml"), Cue: "A", Agent: "leaky", Attempt: 1}
	in.Task = &attempt.Task{RunID: in.RunID, CueID: in.Cue, AgentID: in.Agent, Attempt: 1}
	res, err := a.Go(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed || !strings.Contains(res.Reason, "again on this worker") {
		t.Fatalf("the catch-up did not fail: %+v", res)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), secret) {
		t.Errorf("the result (into the history) holds the secret: %s", b)
	}
	if !strings.Contains(string(b), "using [redacted:CATCHUP_TEST_TOKEN]") {
		t.Errorf("the agent's line is not in the result, masked: %s", b)
	}
}
