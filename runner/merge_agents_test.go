//go:build unix

package runner

import (
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// Two agents of one cue in worktrees, each committing a different file:
// the cue downstream starts from the merge of both branches (named by
// cue and agent), and the run's result holds both.
func TestEveryAgentsBranchReachesTheMerge(t *testing.T) {
	p, dir := project(t, map[string]string{
		"cuelist.yaml": `cuelist:
  id: m
  cues:
    - {id: T, agents: [impl-a, impl-b]}
    - {id: C, agents: [review], dependencies: [T]}
---
agent: {id: impl-a, run: "echo a > a.txt", workspace: worktree}
---
agent: {id: impl-b, run: "echo b > b.txt", workspace: worktree}
---
agent: {id: review, run: "ls > seen.txt", workspace: worktree}
`})
	gitRepo(t, dir)
	rec := newMemRecorder()
	res := runPlan(t, p, rec, func(o *Options) { o.ProjectRoot = dir })
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	id := res.RunID
	if seen := mustGit(t, dir, "show", "orch/"+id+"/C/1:seen.txt"); !strings.Contains(seen, "a.txt") || !strings.Contains(seen, "b.txt") {
		t.Errorf("C saw:\n%s", seen)
	}
	merge := "orch/" + id + "/C/merge"
	if subject := mustGit(t, dir, "log", "-1", "--format=%s", merge); subject != "orch: merge T/impl-a, T/impl-b (cue C, run "+id+")" {
		t.Errorf("the merge's commit: %q", subject)
	}
	if res.ResultBranch == nil {
		t.Fatal("no result branch")
	}
	files := mustGit(t, dir, "ls-tree", "--name-only", res.ResultBranch.Branch)
	for _, f := range []string{"a.txt", "b.txt", "seen.txt"} {
		if !strings.Contains(files, f) {
			t.Errorf("the result %s lacks %s: %q", res.ResultBranch.Branch, f, files)
		}
	}
}
