//go:build temporal_e2e && linux

package temporal

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Memory across runs on Temporal: run 1's agent, on a worker, keeps a
// lesson (a secret in it masked); the run's follower writes it to the
// store; run 2 takes the store's memory with it when submitted, and its
// agent, on a worker, finds the lesson and keeps its next version.
func TestTemporalMemoryAcrossRuns(t *testing.T) {
	t.Setenv("MEM_SECRET", "hunter2-swordfish")
	p := startCollab(t, "memory", "keeper.yaml")
	var ids []string
	for run := 1; run <= 2; run++ {
		if out, code := p.run("run", "--engine", "temporal", "--db", p.db, filepath.Join("memory", "cuelist.yaml")); code != 0 {
			t.Fatalf("run %d: orch run --engine temporal: exit %d\n%s", run, code, out)
		}
		ids = append(ids, runID(t, p.run, p.db))
	}
	first, second := outputsOf(t, p, ids[0], "KEEP-100"), outputsOf(t, p, ids[1], "KEEP-100")
	if fmt.Sprint(first["before"]) != "[]" || fmt.Sprint(first["after"]) != "[lesson v1 by mem-keeper]" {
		t.Errorf("run 1's searches: %v", first)
	}
	if fmt.Sprint(second["before"]) != "[lesson v1 by mem-keeper]" || fmt.Sprint(second["after"]) != "[lesson v2 by mem-keeper]" {
		t.Errorf("run 2's searches: %v", second)
	}
	show, code := p.run("memory", "show", "--db", p.db, "lesson", "--history")
	if code != 0 || strings.Count(show, "deploy on tuesdays, token [redacted:MEM_SECRET]") != 2 || strings.Contains(show, "hunter2") {
		t.Errorf("orch memory show lesson --history: exit %d\n%s", code, show)
	}
}
