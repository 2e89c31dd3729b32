//go:build unix

package runner

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// gitRepo makes dir a repository with everything in it committed.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init"}} {
		if _, err := git(ctx, dir, args...); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWorktreePerAttempt(t *testing.T) {
	p, dir := project(t, map[string]string{
		"cuelist.yaml": `cuelist:
  id: wt
  cues:
    - {id: A, agents: [impl-a]}
    - {id: B, agents: [impl-b]}
    - {id: C, agents: [review], dependencies: [B, A]}
    - {id: D, agents: [broken]}
---
agent: {id: impl-a, run: "echo a > a.txt", workspace: worktree}
---
agent: {id: impl-b, run: "echo b > b.txt && git add b.txt && git -c user.name=b -c user.email=b@x commit -q -m 'b by the agent'", workspace: worktree}
---
agent: {id: review, run: "test -f a.txt && test -f b.txt && pwd > where.txt", workspace: worktree}
---
agent: {id: broken, run: "echo half > half.txt; exit 3", workspace: worktree}
`})
	gitRepo(t, dir)
	rec := newMemRecorder()
	res := runPlan(t, p, rec, func(o *Options) { o.ProjectRoot = dir })
	wantStates(t, rec, map[string]string{"A": "completed", "B": "completed", "C": "completed", "D": "failed"})
	ctx := context.Background()
	sha := regexp.MustCompile(`^[0-9a-f]{40}$`)
	for _, cue := range []string{"A", "B", "C"} {
		out := outputsOf(t, rec, cue)
		branch, commit := out[OutputWorktreeBranch], out[OutputWorktreeCommit]
		if branch != "orch/"+res.RunID+"/"+cue+"/1" || !sha.MatchString(commit.(string)) {
			t.Errorf("%s: branch %v, commit %v", cue, branch, commit)
		}
		if tip, err := git(ctx, dir, "rev-parse", branch.(string)); err != nil || tip != commit {
			t.Errorf("%s: the branch is at %s (%v), the output says %s", cue, tip, err, commit)
		}
	}
	// A's work was committed by orch; B's agent committed its own; C started
	// from the merge of both branches (merge_test.go has the details).
	if log, _ := git(ctx, dir, "log", "-1", "--format=%an %s", "orch/"+res.RunID+"/A/1"); log != "orch orch: run "+res.RunID+", cue A, attempt 1 (impl-a)" {
		t.Errorf("A's commit: %q", log)
	}
	if log, _ := git(ctx, dir, "log", "-1", "--format=%an %s", "orch/"+res.RunID+"/B/1"); log != "b b by the agent" {
		t.Errorf("B's commit: %q", log)
	}
	files, _ := git(ctx, dir, "ls-tree", "-r", "--name-only", "orch/"+res.RunID+"/C/1")
	if files != "a.txt\nb.txt\ncuelist.yaml\nwhere.txt" {
		t.Errorf("C's tree: %q", files)
	}
	where, _ := git(ctx, dir, "show", "orch/"+res.RunID+"/C/1:where.txt")
	if !strings.Contains(where, filepath.Join(".orch", "worktrees", res.RunID, "C-1-review")) {
		t.Errorf("C worked in %s", where)
	}
	if base, merge := mustGit(t, dir, "rev-parse", "orch/"+res.RunID+"/C/1^"), mustGit(t, dir, "rev-parse", "orch/"+res.RunID+"/C/merge"); base != merge {
		t.Errorf("C's branch starts from %s, not from the merge %s", base, merge)
	}
	// The failed attempt's branch is kept, at HEAD: its work is not committed.
	head, _ := git(ctx, dir, "rev-parse", "HEAD")
	if tip, err := git(ctx, dir, "rev-parse", "orch/"+res.RunID+"/D/1"); err != nil || tip != head {
		t.Errorf("D's branch is at %s (%v), want HEAD %s", tip, err, head)
	}
	for _, e := range rec.of(record.EvWorktree) {
		if d := e.Data.(record.WorktreeData); e.Cue == "D" && d.Commit != "" {
			t.Errorf("D's work was committed: %+v", d)
		}
	}
	// The worktrees are gone, and the main checkout was never touched.
	if list, _ := git(ctx, dir, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
	if _, err := os.Stat(filepath.Join(dir, ".orch", "worktrees", res.RunID)); !os.IsNotExist(err) {
		t.Errorf("the run's worktree directory is still there: %v", err)
	}
	for _, f := range []string{"a.txt", "b.txt", "half.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s is in the main checkout", f)
		}
	}
}

func TestWorktreeOutsideRepositoryRefused(t *testing.T) {
	p, dir := project(t, map[string]string{"cuelist.yaml": `cuelist:
  id: wt
  cues:
    - {id: A, agents: [impl]}
---
agent: {id: impl, run: "touch started", workspace: worktree}
`})
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	rec := newMemRecorder()
	_, err := Run(context.Background(), Options{Plan: p, Recorder: rec, ProjectRoot: dir})
	if err == nil || !strings.Contains(err.Error(), "agent impl has workspace: worktree, but the project root "+dir+" is not inside a git repository") {
		t.Fatalf("run: %v", err)
	}
	if len(rec.of(record.EvRunStarted)) != 0 {
		t.Error("the run was recorded")
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Error("the agent ran")
	}
}
