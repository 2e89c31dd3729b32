//go:build unix

package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/sched"
)

// The figure of issue 30: merging 8 branches of 50 changed files each
// (go test ./runner -run '^$' -bench Merge8x50 -benchtime 10x).

// mergeBenchRepo makes a repository of 400 files and 8 branches, each
// changing 50 of them (none the same).
func mergeBenchRepo(b *testing.B) (string, []sched.MergeSource) {
	b.Helper()
	dir := b.TempDir()
	for i := 0; i < 400; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte(strings.Repeat("line\n", 20)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	run := func(args ...string) string {
		out, err := git(ctx, dir, append(append([]string(nil), gitwork.Identity...), args...)...)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	run("init", "-q", "-b", "main")
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	var sources []sched.MergeSource
	for k := 0; k < 8; k++ {
		branch := fmt.Sprintf("work/%d", k)
		run("checkout", "-q", "-b", branch, "main")
		for i := k * 50; i < (k+1)*50; i++ {
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(f, "changed by %d\n", k)
			f.Close()
		}
		run("commit", "-q", "-am", branch)
		sources = append(sources, mergeSourceOf(fmt.Sprintf("T%d", k), branch, run("rev-parse", "HEAD")))
	}
	run("checkout", "-q", "main")
	return dir, sources
}

// mergeSourceOf is a merge source (for the benchmark's table).
func mergeSourceOf(task, branch, commit string) sched.MergeSource {
	return sched.MergeSource{Task: task, Branch: branch, Commit: commit}
}

// BenchmarkMerge8x50 times, one after the other at each iteration, each
// first every other time (the machine's load falls on both alike), orch's merge of the 8 branches and git's own time
// for the same merge — the least git does for it: the worktree, each merge
// and its commit, the final commit, the branch moved to it — and reports
// both, and what orch adds, in ms per merge.
func BenchmarkMerge8x50(b *testing.B) {
	dir, sources := mergeBenchRepo(b)
	p, _ := project(b, map[string]string{"cuelist.yaml": "cuelist:\n  id: b\n  cues:\n    - {id: C, agents: [w]}\n---\nagent: {id: w, run: \"true\", workspace: worktree}\n"})
	r, err := newRun(Options{Plan: p, Recorder: newMemRecorder(), ProjectRoot: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(r.workDir)
	ctx := context.Background()
	var orch, bare time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := &merge{id: 0, sources: sources, att: newAttempt(r.host, p.Order[0], 0, -1, mergeAgent, nil, i+1, r.reports)}
		m.tree = r.host.worktrees.mergeTree(m, fmt.Sprintf("C%d", i), "")
		timeOrch := func() {
			start := time.Now()
			if rep := m.round(ctx, r, ""); rep.Commit == "" {
				b.Fatalf("merge: %+v", rep)
			}
			orch += time.Since(start)
		}
		timeGit := func() {
			start := time.Now()
			gitMerge(b, dir, fmt.Sprintf("g%d", i), sources)
			bare += time.Since(start)
		}
		if i%2 == 0 { // each goes first half the time
			timeOrch()
			timeGit()
		} else {
			timeGit()
			timeOrch()
		}
		b.StopTimer()
		if parents, _ := git(ctx, dir, "log", "-1", "--format=%P", m.tree.Branch); len(strings.Fields(parents)) != 8 {
			b.Fatalf("the merge's parents: %q", parents)
		}
		_, _ = git(ctx, dir, "worktree", "remove", "--force", m.tree.Path)
		_, _ = git(ctx, dir, "worktree", "remove", "--force", filepath.Join(dir, ".orch", fmt.Sprintf("g%d", i)))
		b.StartTimer()
	}
	n := float64(b.N) * float64(time.Millisecond)
	b.ReportMetric(float64(orch)/n, "orch-ms/merge")
	b.ReportMetric(float64(bare)/n, "git-ms/merge")
	b.ReportMetric(float64(orch-bare)/n, "added-ms/merge")
}

// gitMerge is the merge done with git alone, in the worktree .orch/name.
func gitMerge(b *testing.B, dir, name string, sources []sched.MergeSource) {
	ctx := context.Background()
	path := filepath.Join(dir, ".orch", name)
	must := func(in string, args ...string) string {
		out, err := git(ctx, in, append(append([]string(nil), gitwork.Identity...), args...)...)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	must(dir, "worktree", "add", "--quiet", "-b", "bare/"+name, path, sources[0].Commit)
	args := []string{"commit-tree", "HEAD^{tree}"}
	for _, s := range sources[1:] {
		must(path, "merge", "--no-ff", "--no-commit", "--quiet", s.Commit)
		must(path, "commit", "--quiet", "--no-verify", "-m", "merge "+s.Task)
	}
	for _, s := range sources {
		args = append(args, "-p", s.Commit)
	}
	must(path, "reset", "--soft", "--quiet", must(path, append(args, "-m", "merge all")...))
}
