//go:build temporal_e2e && linux

package temporal

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// One worker with --max-concurrent 1 runs a tree deeper than its slots: a
// chain of two handoffs, then a spawn whose parent waits for its
// announcement. Each waiting ancestor lends its slot to its child, so the
// run completes; were the slots held while waiting, the first child's
// WARNING would wait for the lead's slot until the lead's GO timed out.
func TestTemporalTreeDeeperThanWorkerSlots(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	orch := buildOrch(t, root, tmp)
	server := startDevServer(t, root, tmp)
	proj := filepath.Join(tmp, "proj")
	link := func(id, mode, next string) string {
		handoffTo := ""
		if next != "" {
			handoffTo = "\n  handoff_to: [" + next + "]"
		}
		return fmt.Sprintf("agent:\n  id: %s\n  description: a link of the chain (%s)\n  command: [python3, chain.py, %s, %q]\n"+
			"  protocol: jsonl\n  workdir: .%s\n  provides: [depth, below]\n", id, mode, mode, next, handoffTo)
	}
	writeFiles(t, proj, map[string]string{
		"slots/cuelist.yaml": `cuelist:
  id: temporal-slots
  description: A tree deeper than the worker's slots
  include: [agents/link-1.yaml, agents/link-2.yaml, agents/link-3.yaml, agents/link-4.yaml]
  guardrails:
    max_handoff_depth: 3
  defaults:
    ack_timeout: 10s
    timeout: 60s  # bounds the stall this test would otherwise show
  cues:
    - id: LINK-100
      description: Hand off down the chain
      agents: [link-1]
`,
		"slots/agents/link-1.yaml": link("link-1", "handoff", "link-2"),
		"slots/agents/link-2.yaml": link("link-2", "handoff", "link-3"),
		"slots/agents/link-3.yaml": link("link-3", "spawn", "link-4"),
		"slots/agents/link-4.yaml": link("link-4", "leaf", ""),
		"slots/agents/chain.py": `import os, queue, sys
sys.path.insert(0, os.environ["COLLAB_LIB"])
import orch_agent


def work(task):
    mode, nxt = sys.argv[1], sys.argv[2]
    if mode == "handoff":
        done = task.handoff(nxt, "T-" + nxt, {"from": task.depth})
        if done["status"] != "completed":
            raise orch_agent.OrchError(f"the handoff to {nxt} ended {done['status']}: {done.get('reason')}")
        return {"depth": task.depth, "below": done["outputs"]}
    if mode == "spawn":
        task.spawn(nxt, {})
        try:
            ann = task.announcements.get(timeout=120)
        except queue.Empty:
            raise orch_agent.OrchError("no announcement came")
        return {"depth": task.depth, "below": ann["outputs"]}
    return {"depth": task.depth, "below": {}}


orch_agent.run(work)
`,
	})
	env := append(os.Environ(),
		"TEMPORAL_ADDRESS="+server.addr,
		"PATH="+filepath.Dir(orch)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ORCH_ENGINE=", "ORCH_DB=",
		"COLLAB_LIB="+filepath.Join(root, "examples", "lib"))
	startProc(t, tmp, "worker", env, proj, orch, "worker", "--root", proj, "--max-concurrent", "1")
	p := collabRun{run: orchIn(t, orch, proj, env), db: filepath.Join(tmp, "slots.db")}
	if out, code := p.run("run", "--engine", "temporal", "--db", p.db, filepath.Join("slots", "cuelist.yaml")); code != 0 {
		t.Fatalf("orch run --engine temporal: exit %d\n%s", code, out)
	}
	id := runID(t, p.run, p.db)
	got := fmt.Sprint(outputsOf(t, p, id, "LINK-100"))
	if want := "map[below:map[below:map[below:map[below:map[] depth:3] depth:2] depth:1] depth:0]"; got != want {
		t.Errorf("LINK-100's outputs: %s, want %s", got, want)
	}
}
