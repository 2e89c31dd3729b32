//go:build temporal_e2e && linux

package temporal

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTemporalAgentProcessesEndWithTheRun: the jsonl agents' processes a
// worker keeps between phases end soon after their run ends (the worker
// asks the workflow whether their agents are still needed), not at the
// worker's idle close two minutes later.
func TestTemporalAgentProcessesEndWithTheRun(t *testing.T) {
	p := startCollab(t, "messages", "receiver.yaml")
	proj := filepath.Dir(p.db) // startCollab's temporary directory, where the project is
	if out, code := p.run("run", "--engine", "temporal", "--db", p.db, filepath.Join("messages", "cuelist.yaml")); code != 0 {
		t.Fatalf("orch run --engine temporal: exit %d\n%s", code, out)
	}
	agents := func() []string {
		var found []string
		for _, pr := range processesIn(proj) {
			if strings.Contains(pr, "agent.py") {
				found = append(found, pr)
			}
		}
		return found
	}
	deadline := time.Now().Add(time.Minute) // the idle close is at two
	for left := agents(); len(left) > 0; left = agents() {
		if time.Now().After(deadline) {
			t.Fatalf("the run ended a minute ago and its agents' processes are still there:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
