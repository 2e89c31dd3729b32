package temporal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// TestClaimsWithinTheRun: claims are counted within the run on Temporal as
// on the local engine (neither counts them across runs): under fcfs, of two
// cues claiming a resource of capacity 1, the second waits in STANDBY (an
// escalation/conflict event says so) and goes once the first released it.
func TestClaimsWithinTheRun(t *testing.T) {
	root := t.TempDir()
	agent := func(id string) string {
		return "agent:\n  id: " + id + "\n  command: [\"true\"]\n  protocol: none\n  workdir: .\n"
	}
	files := map[string]string{
		"a.yaml": agent("agent-a"), "b.yaml": agent("agent-b"),
		"c.yaml": "cuelist:\n  id: claims\n  include: [a.yaml, b.yaml]\n  arbitration: fcfs\n  max_parallel: 4\n  resources:\n    db: 1\n" +
			"  cues:\n    - id: ONE\n      agents: [agent-a]\n      claims: [db]\n    - id: TWO\n      agents: [agent-b]\n      claims: [db]\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	evs := runCompleted(t, root, "c.yaml", "r5")
	// At no point are both cues in GO.
	inGo, conflicts := map[string]bool{}, 0
	for _, e := range evs {
		switch {
		case e.Type == record.EvConflict:
			conflicts++
		case e.Type == record.EvCueState && e.State == "go":
			inGo[e.Cue] = true
			if len(inGo) > 1 {
				t.Fatalf("ONE and TWO in GO at once:\n%s", story(evs))
			}
		case e.Type == record.EvCueState && (e.State == "completed" || e.State == "failed"):
			delete(inGo, e.Cue)
		}
	}
	if conflicts == 0 {
		t.Errorf("no escalation/conflict event:\n%s", story(evs))
	}
	if s := story(evs); !strings.Contains(s, "cue/state ONE completed") || !strings.Contains(s, "cue/state TWO completed") {
		t.Errorf("not both completed:\n%s", s)
	}
}
