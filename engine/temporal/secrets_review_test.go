package temporal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/record"
)

// A pooled agent whose earlier phases run again on a worker (its GO came
// to a worker that had not warned it) and fail there: the lines it printed
// go into the history with the phase's result, masked as every phase's
// lines are.
func TestPooledCatchUpFailureLinesMasked(t *testing.T) {
	const secret = "tok-catchup-4242-zz"
	t.Setenv("CATCHUP_TEST_TOKEN", secret)
	a, in := pooledAgentOnWorker(t, "r-catchup-fail", `'read line; echo "using $CATCHUP_TEST_TOKEN" >&2; exit 3'`)
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

// A declared secret's value that is also part of a cue's id (secrets of 4
// characters and more are masked wherever they appear): the agent's
// requests still name its attempt as the workflow knows it (the ids came
// from the workflow, they hold nothing new), so the workflow takes them.
func TestRequestsKeepTheirAskerWhenAnIdHoldsASecret(t *testing.T) {
	t.Setenv("STAGE_NAME", "production")
	root := t.TempDir()
	agent := `import os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "examples", "lib"))
import orch_agent
def work(task):
    task.bb_write("deployed", {"stage": os.environ["STAGE_NAME"]})
    task.report_status("working", 0.5, "deploying")
    return {"wrote": True}
orch_agent.run(work)
`
	yaml := `agent:
  id: deployer
  protocol: jsonl
  command: [python3, agent.py, ` + repoRoot(t) + `]
  workdir: .
  provides: [wrote]
---
cuelist:
  id: stage
  secrets: [STAGE_NAME]
  defaults: {ack_timeout: 10s, timeout: 60s}
  cues:
    - {id: deploy-production, agents: [deployer]}
    - {id: check, agents: [deployer], dependencies: [deploy-production]}
`
	for name, text := range map[string]string{"agent.py": agent, "c.yaml": yaml} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := &Activities{Root: root, Link: func(context.Context) WorkflowLink { return envLink{env} }}
	t.Cleanup(acts.Close)
	RegisterWorkflow(env)
	RegisterActivities(env, acts)
	env.SetTestTimeout(2 * time.Minute)
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: testRunID("r-stage"), Path: "c.yaml", SpecHash: specHashOf(t, root, "c.yaml")})
	evs := events(t, env)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("%v\n%s", err, story(evs))
	}
	if out := outputsOf(t, evs, "deploy-production"); out["wrote"] != true {
		t.Errorf("outputs %v", out)
	}
	b, _ := json.Marshal(evs)
	if !strings.Contains(string(b), `"stage":"[redacted:STAGE_NAME]"`) {
		t.Errorf("the board write is not in the run's log, masked:\n%s", story(evs))
	}
}

// What a run's agent process says outside any attempt (between phases, a
// pooled process's own events) goes to the worker's log masked.
func TestWorkerLogMasked(t *testing.T) {
	const secret = "tok-workerlog-7373-qq"
	t.Setenv("WORKERLOG_TEST_TOKEN", secret)
	root := t.TempDir()
	yaml := "agent:\n  id: idle\n  protocol: jsonl\n  command: [\"true\"]\n  workdir: .\n---\ncuelist:\n  id: idle\n  cues:\n    - {id: A, agents: [idle]}\n"
	if err := os.WriteFile(filepath.Join(root, "c.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Root: root}
	defer a.Close()
	p, err := a.plan("c.yaml", specHashOf(t, root, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	was := workerOut
	workerOut = &out
	defer func() { workerOut = was }()
	h := newWorkerRunHost(testRunID("r-idle"), p) // the pool's host (agents.go)
	h.NewLog().Add(record.LogLine{Agent: "idle", Text: "idle with " + secret})
	_ = h.Publish(record.Event{Type: record.EvNote, Agent: "idle", Reason: "exited holding " + secret})
	if got := out.String(); strings.Contains(got, secret) || strings.Count(got, "[redacted:WORKERLOG_TEST_TOKEN]") != 2 {
		t.Errorf("the worker's log:\n%s", got)
	}
}

// A worktree cue whose id holds a declared secret's value: the branch and
// commit its attempt hands the workflow are orch's own (named after ids
// the workflow gave), and the workflow fetches and merges by them, so they
// reach it as they are; what the agent outputs is masked.
func TestWorktreeOutputsKeptWhenAnIdHoldsASecret(t *testing.T) {
	t.Setenv("STAGE_NAME", "production")
	files := map[string]string{
		"chain.yaml": "cuelist:\n  id: chain\n  secrets: [STAGE_NAME]\n  include: [writer.yaml]\n  cues:\n" +
			"    - {id: deploy-production, agents: [writer]}\n",
		"writer.yaml": "agent: {id: writer, run: \"echo a > a.txt; echo '{\\\"stage\\\": \\\"'$STAGE_NAME'\\\"}' > $ORCH_OUTPUT\", workspace: worktree, provides: [stage]}\n",
	}
	_, root, _ := sharedRemote(t, files)
	base := gitT(t, root, "rev-parse", "HEAD")
	remote := gitT(t, root, "remote", "get-url", "origin")
	evs := completed(t, runEnv(t, root), RunInput{RunID: r1, Path: "chain.yaml", SpecHash: specHashOf(t, root, "chain.yaml"),
		Git: &RunGit{Remote: remote, Base: base, BaseName: "main"}})
	var out map[string]any
	for _, e := range evs {
		if d, ok := e.Data.(record.AttemptEndedData); ok && e.Agent == "writer" {
			out = d.Outputs
		}
	}
	commit := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/deploy-production/1")
	if out["worktree_branch"] != "orch/"+r1+"/deploy-production/1" || out["worktree_commit"] != commit || out["stage"] != "[redacted:STAGE_NAME]" {
		t.Errorf("outputs %v (commit %s)", out, commit)
	}
}

// A pooled agent that exits while its stderr is still being written (here
// by a process it left, a moment later; on a busy machine, its own last
// lines not read yet): its attempt learns of the exit once its stderr is
// read to the end, so its last lines go into the history with the phase's
// result (they came after it, and were lost).
func TestPooledExitKeepsItsLastLines(t *testing.T) {
	res := exitAtWarning(t, "r-last-words", `'read line; echo "going" >&2; (exec >/dev/null; sleep 0.3; echo "my last words" >&2) & exit 3'`)
	if n := len(res.Log); n == 0 || res.Log[n-1].Text != "my last words" {
		t.Errorf("the agent's last line is not the result's last: %d lines, %+v", n, res.Log[max(n-2, 0):])
	}
}

// A process the agent left holds its stderr: the exit is still told, soon
// (not the phase's timeout, nor the grace period).
func TestPooledExitWhileStderrHeld(t *testing.T) {
	exitAtWarning(t, "r-held", `'read line; (exec >/dev/null; sleep 60) & exit 3'`)
}

// exitAtWarning runs the WARNING of a pooled agent running script (see
// pooledAgentOnWorker), which exits with status 3, and checks the phase
// failed saying so.
func exitAtWarning(t *testing.T, name, script string) *AttemptResult {
	t.Helper()
	a, in := pooledAgentOnWorker(t, name, script)
	res, err := a.Warning(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed || !strings.Contains(res.Reason, "exited with status 3") {
		t.Fatalf("the agent's exit: %+v", res)
	}
	return res
}

// pooledAgentOnWorker: a worker (its processes closed at the test's end)
// and attempt 1 of cue A of run testRunID(name), whose jsonl agent runs the
// shell line script (quoted for YAML).
func pooledAgentOnWorker(t *testing.T, name, script string) (*Activities, AttemptInput) {
	t.Helper()
	root := t.TempDir()
	yaml := "agent: {id: pooled, protocol: jsonl, command: [sh, -c, " + script + "], workdir: .}\n---\n" +
		"cuelist:\n  id: pooled\n  cues:\n    - {id: A, agents: [pooled]}\n"
	if err := os.WriteFile(filepath.Join(root, "c.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Root: root}
	t.Cleanup(a.Close)
	return a, AttemptInput{RunID: testRunID(name), Path: "c.yaml", SpecHash: specHashOf(t, root, "c.yaml"), Cue: "A", Agent: "pooled", Attempt: 1}
}
