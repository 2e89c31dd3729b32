package sched_test

import (
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/sched"
)

// agentsCue: T has two agents in worktrees (and a plain one between them),
// D (in a worktree) depends on T alone; F fans out over two items, each
// with both worktree agents.
func agentsCue(t *testing.T, lastOnly bool) *harness {
	h := newHarness(t, "", `    - {id: T, agents: [a, plain, b]}
    - {id: D, agents: [c], dependencies: [T]}
    - {id: F, agents: [a, b], for_each: [x, y]}
    - {id: G, agents: [c], dependencies: [F]}
`, worktreeAgents, 8, false)
	if lastOnly {
		h.core = sched.New(sched.Config{Plan: h.plan, RunID: "r1", Parallel: 8, Lookup: h, LastBranchOnly: true,
			Jitter: func(n time.Duration) time.Duration { return n }})
	}
	h.core.Begin(h.now)
	h.advance()
	return h
}

// branch ends target i of cue with a worktree branch (none for "").
func (h *harness) branch(cue string, i int, branch string) {
	out := map[string]any{}
	if branch != "" {
		out = map[string]any{sched.OutputWorktreeBranch: branch, sched.OutputWorktreeCommit: "c" + branch}
	}
	h.core.Ended(h.now, h.pos(cue), i, h.attempt(cue, i), sched.End{Outputs: out})
	h.mtake()
}

func sources(h *harness, cue string) string {
	var out []string
	for _, s := range h.core.MergeSources(h.pos(cue)) {
		out = append(out, s.Task+"="+s.Branch+"@"+s.Commit)
	}
	return strings.Join(out, " ")
}

// Every worktree agent of a cue passes its branch on: the cue downstream
// starts from their merge (its agents' order), as does one downstream of a
// fan-out whose items each had two worktree agents.
func TestEveryAgentsBranchMerged(t *testing.T) {
	h := agentsCue(t, false)
	h.branch("T", 0, "ta")
	h.branch("T", 1, "")
	h.branch("T", 2, "tb")
	if got := sources(h, "D"); got != "T/a=ta@cta T/b=tb@ctb" {
		t.Errorf("D's sources: %q", got)
	}
	if out := h.core.Outputs(h.pos("T")); out[sched.OutputWorktreeBranch] != "tb" {
		t.Errorf("worktree_branch is not the last agent's any more: %v", out)
	}
	if !strings.Contains(strings.Join(h.log, "\n"), "merge 1 at D#2: T/a ta@cta, T/b tb@ctb") {
		t.Errorf("no merge for D:\n%s", strings.Join(h.log, "\n"))
	}
	for _, item := range []string{"F[0]", "F[1]"} {
		h.branch(item, 0, item+"a")
		h.branch(item, 1, item+"b")
	}
	if got := sources(h, "G"); got != "F[0]/a=F[0]a@cF[0]a F[0]/b=F[0]b@cF[0]b F[1]/a=F[1]a@cF[1]a F[1]/b=F[1]b@cF[1]b" {
		t.Errorf("G's sources: %q", got)
	}
}

// A Temporal run started before every branch reached the merge keeps what
// it did: the last agent's branch only, and no merge for one branch.
func TestLastBranchOnly(t *testing.T) {
	h := agentsCue(t, true)
	h.branch("T", 0, "ta")
	h.branch("T", 1, "")
	h.branch("T", 2, "tb")
	if got := sources(h, "D"); got != "T=tb@ctb" {
		t.Errorf("D's sources: %q", got)
	}
}
