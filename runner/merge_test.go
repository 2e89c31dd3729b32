//go:build unix

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// mergeProject is a repository where A and B work in worktrees from HEAD
// and C, which depends on both, starts from the merge of their branches.
// a and b are the implementers' shell lines; merge is C's merge: block.
func mergeProject(t *testing.T, a, b, merge, more string) (string, func(*testing.T, func(*Options)) (*Result, *memRecorder)) {
	t.Helper()
	p, dir := project(t, map[string]string{
		"cuelist.yaml": `cuelist:
  id: m
  cues:
    - {id: A, agents: [impl-a]}
    - {id: B, agents: [impl-b]}
    - id: C
      agents: [review]
      dependencies: [B, A]
` + merge + `
---
agent: {id: impl-a, run: "` + a + `", workspace: worktree}
---
agent: {id: impl-b, run: "` + b + `", workspace: worktree}
---
agent: {id: review, run: "ls > seen.txt; cat f.txt >> seen.txt 2>/dev/null; true", workspace: worktree}
` + more,
		"f.txt": "base\n"})
	gitRepo(t, dir)
	return dir, func(t *testing.T, mod func(*Options)) (*Result, *memRecorder) {
		rec := newMemRecorder()
		res := runPlan(t, p, rec, func(o *Options) {
			o.ProjectRoot = dir
			if mod != nil {
				mod(o)
			}
		})
		return res, rec
	}
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mergeEnd is the end of merge attempts (orch:merge) at cue, in order.
func mergeEnds(rec *memRecorder, cue string) []record.Event {
	var out []record.Event
	for _, e := range rec.of(record.EvAttemptEnded) {
		if e.Cue == cue && e.Agent == sched.MergeAgent {
			out = append(out, e)
		}
	}
	return out
}

func TestMergeCleanAtFanIn(t *testing.T) {
	dir, run := mergeProject(t, "echo a > a.txt", "echo b > b.txt", "      merge: {verify: [sh, -c, 'test -f a.txt && test -f b.txt']}", "")
	res, rec := run(t, nil)
	wantStates(t, rec, map[string]string{"A": "completed", "B": "completed", "C": "completed"})
	id := res.RunID
	// C saw both implementers' work: it started from the merge.
	seen := mustGit(t, dir, "show", "orch/"+id+"/C/1:seen.txt")
	if !strings.Contains(seen, "a.txt") || !strings.Contains(seen, "b.txt") {
		t.Errorf("C saw:\n%s", seen)
	}
	// The merge's branch ends with one commit naming the cues, whose
	// parents are their branches in plan order (A before B).
	merge := "orch/" + id + "/C/merge"
	parents := strings.Fields(mustGit(t, dir, "log", "-1", "--format=%P", merge))
	a, b := mustGit(t, dir, "rev-parse", "orch/"+id+"/A/1"), mustGit(t, dir, "rev-parse", "orch/"+id+"/B/1")
	if len(parents) != 2 || parents[0] != a || parents[1] != b {
		t.Errorf("the merge's parents are %v, want A %s then B %s", parents, a, b)
	}
	if subject := mustGit(t, dir, "log", "-1", "--format=%an: %s", merge); subject != "orch: orch: merge A, B (cue C, run "+id+")" {
		t.Errorf("the merge's commit: %q", subject)
	}
	if base := mustGit(t, dir, "rev-parse", "orch/"+id+"/C/1^"); base != mustGit(t, dir, "rev-parse", merge) {
		t.Errorf("C's branch does not start from the merge")
	}
	// Recorded: the merge's attempt (2, after C's own) with its outputs, and
	// its steps; the verify command's output is in its log.
	// (The run's result is merged at C too: the last cue that left a branch.)
	ends := mergeEnds(rec, "C")
	if len(ends) != 2 || ends[0].State != "completed" || ends[0].Attempt != 2 || ends[1].Attempt != 3 {
		t.Fatalf("merge attempts at C: %+v", ends)
	}
	var states []string
	for _, e := range rec.of(record.EvMerge) {
		if e.Cue == "C" && e.Attempt == 2 {
			states = append(states, e.State)
		}
	}
	if strings.Join(states, " ") != "started merged verified completed" {
		t.Errorf("the merge's steps: %v", states)
	}
	// The run's result is C's branch: it holds everything.
	if res.ResultBranch == nil || res.ResultBranch.Branch != "orch/"+id+"/result" || res.ResultBranch.Commit != mustGit(t, dir, "rev-parse", "orch/"+id+"/C/1") {
		t.Fatalf("result %+v", res.ResultBranch)
	}
	if rb := res.ResultBranch; rb.Ahead != 4 || rb.BaseCommit != mustGit(t, dir, "rev-parse", "HEAD") { // A, B, the merge, C
		t.Errorf("result %+v", rb)
	}
	if list := mustGit(t, dir, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
}

// conflicting: A and B both rewrite f.txt.
const (
	writeA = "echo from-a > f.txt"
	writeB = "echo from-b > f.txt"
)

func TestMergeConflictFails(t *testing.T) {
	dir, run := mergeProject(t, writeA, writeB, "      merge: {on_conflict: fail}", "")
	res, rec := run(t, nil)
	wantStates(t, rec, map[string]string{"A": "completed", "B": "completed", "C": "failed"})
	why := reasonOf(rec, "C")
	for _, want := range []string{"orch:merge: merging B's branch orch/" + res.RunID + "/B/1 into cue C conflicts in f.txt (A and B collided) (on_conflict: fail)"} {
		if why != want {
			t.Errorf("C failed with %q, want %q", why, want)
		}
	}
	ends := mergeEnds(rec, "C")
	if len(ends) != 1 || ends[0].State != "failed" || ends[0].Data.(record.AttemptEndedData).Class != sched.ClassMergeConflict {
		t.Errorf("merge attempts: %+v", ends)
	}
	// Every branch stays; the run has no result.
	for _, b := range []string{"A/1", "B/1", "C/merge"} {
		mustGit(t, dir, "rev-parse", "--verify", "orch/"+res.RunID+"/"+b)
	}
	if res.ResultBranch != nil || res.State != record.RunFailed {
		t.Errorf("run %s, result %+v", res.State, res.ResultBranch)
	}
}

func TestMergeConflictToResolver(t *testing.T) {
	out := t.TempDir()
	dir, run := mergeProject(t, writeA, writeB, "      merge: {on_conflict: agent, agent: fixer}",
		`---
agent: {id: fixer, env: {OUT: "`+out+`"}, run: "printf '%s\\n' \"$ORCH_INPUT_MERGE_FILES\" > $OUT/files.txt; grep -c '<<<<<<<' f.txt > $OUT/markers.txt; echo both > f.txt"}
`)
	res, rec := run(t, nil)
	wantStates(t, rec, map[string]string{"C": "completed"})
	id := res.RunID
	// The resolver worked in the merge's worktree with the markers in place,
	// its task naming the files.
	if b, _ := os.ReadFile(filepath.Join(out, "files.txt")); string(b) != "f.txt\n" {
		t.Errorf("the resolver was given files %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "markers.txt")); string(b) != "1\n" {
		t.Errorf("the resolver saw %q conflict markers", b)
	}
	if f := mustGit(t, dir, "show", "orch/"+id+"/C/1:f.txt"); f != "both" {
		t.Errorf("C started from f.txt %q", f)
	}
	var resolver []record.Event
	for _, e := range rec.of(record.EvAttemptEnded) {
		if e.Cue == "C" && e.Agent == "fixer" {
			resolver = append(resolver, e)
		}
	}
	if len(resolver) != 1 || resolver[0].State != "completed" || resolver[0].Attempt != 3 {
		t.Errorf("resolver attempts: %+v", resolver)
	}
	log := mustGit(t, dir, "log", "--format=%s", "orch/"+id+"/C/merge")
	if !strings.Contains(log, "orch: merge B's branch orch/"+id+"/B/1 (cue C), conflicts resolved by fixer") {
		t.Errorf("the merge's history:\n%s", log)
	}
}

func TestMergeResolverLeavesMarkers(t *testing.T) {
	_, run := mergeProject(t, writeA, writeB, "      merge: {agent: fixer}", "---\nagent: {id: fixer, run: \"true\"}\n")
	_, rec := run(t, nil)
	wantStates(t, rec, map[string]string{"C": "failed"})
	if why := reasonOf(rec, "C"); !strings.HasPrefix(why, "orch:merge: resolver fixer: conflict markers remain in f.txt") {
		t.Errorf("C failed with %q", why)
	}
	if ends := mergeEnds(rec, "C"); len(ends) != 1 || ends[0].Data.(record.AttemptEndedData).Class != sched.ClassMergeConflict {
		t.Errorf("merge attempts: %+v", ends)
	}
}

func TestMergeVerifyFailingGoesToResolver(t *testing.T) {
	out := t.TempDir()
	dir, run := mergeProject(t, "echo a > a.txt", "echo b > b.txt", "      merge: {agent: fixer, verify: [sh, -c, 'echo checking; grep -q fixed f.txt']}",
		`---
agent: {id: fixer, env: {OUT: "`+out+`"}, run: "printf '%s|%s' \"$ORCH_INPUT_MERGE_PROBLEM\" \"$ORCH_INPUT_MERGE_OUTPUT\" > $OUT/given.txt; echo fixed > f.txt"}
`)
	res, rec := run(t, nil)
	wantStates(t, rec, map[string]string{"C": "completed"})
	if b, _ := os.ReadFile(filepath.Join(out, "given.txt")); string(b) != "verify|checking" {
		t.Errorf("the resolver was given %q", b)
	}
	if f := mustGit(t, dir, "show", "orch/"+res.RunID+"/C/merge:f.txt"); f != "fixed" {
		t.Errorf("the merge holds f.txt %q", f)
	}
	var states []string
	for _, e := range rec.of(record.EvMerge) {
		if e.Cue == "C" && e.Data.(record.MergeData).Branch == "orch/"+res.RunID+"/C/merge" {
			states = append(states, e.State)
		}
	}
	if strings.Join(states, " ") != "started merged verify-failed resolving checking resolved verified completed" {
		t.Errorf("the merge's steps: %v", states)
	}
}

func TestMergeVerifyStillFailingAfterResolver(t *testing.T) {
	_, run := mergeProject(t, "echo a > a.txt", "echo b > b.txt", "      merge: {agent: fixer, verify: [sh, -c, 'exit 3']}", "---\nagent: {id: fixer, run: \"echo tried > f.txt\"}\n")
	_, rec := run(t, nil)
	wantStates(t, rec, map[string]string{"C": "failed"})
	if why := reasonOf(rec, "C"); why != "orch:merge: the verify command sh -c \"exit 3\" exited with status 3 on cue C after resolver fixer's fix" {
		t.Errorf("C failed with %q", why)
	}
}

// askAt answers the merge's questions as a person at the terminal would,
// after doing what fix does in the worktree.
func askAt(t *testing.T, answers ...func(path string) string) (func(*Options), *[]QuestionPrompt) {
	var mu sync.Mutex
	var asked []QuestionPrompt
	return func(o *Options) {
		o.Ask = func(ctx context.Context, q QuestionPrompt) (string, bool) {
			mu.Lock()
			n := len(asked)
			asked = append(asked, q)
			mu.Unlock()
			if n >= len(answers) {
				t.Errorf("asked again: %+v", q)
				return "abort", true
			}
			_, rest, _ := strings.Cut(q.Question, "In the worktree ")
			path, _, _ := strings.Cut(rest, " (branch")
			return answers[n](path), true
		}
	}, &asked
}

func TestMergeConflictAsksThePerson(t *testing.T) {
	ask, asked := askAt(t,
		func(string) string { return "resolved" }, // markers still there: asked again
		func(path string) string {
			if err := os.WriteFile(filepath.Join(path, "f.txt"), []byte("by hand\n"), 0o644); err != nil {
				t.Error(err)
			}
			return "resolved"
		})
	dir, run := mergeProject(t, writeA, writeB, "", "")
	res, rec := run(t, ask)
	wantStates(t, rec, map[string]string{"C": "completed"})
	if len(*asked) != 2 {
		t.Fatalf("asked %d times", len(*asked))
	}
	q := (*asked)[0]
	wt := filepath.Join(dir, ".orch", "worktrees", res.RunID, "C-merge")
	if q.Agent != sched.MergeAgent || q.Cue != "C" || q.Complexity != "deep" ||
		q.Question != "merging B's branch orch/"+res.RunID+"/B/1 into cue C conflicts in f.txt (A and B collided). In the worktree "+wt+" (branch orch/"+res.RunID+"/C/merge), resolve the conflicts there (leave no conflict marker; committing is up to you), then answer \"resolved\" — or \"abort\" to fail cue C." {
		t.Errorf("question: %+v", q)
	}
	if again := (*asked)[1].Question; !strings.HasPrefix(again, "conflict markers remain in f.txt") {
		t.Errorf("asked again: %q", again)
	}
	if f := mustGit(t, dir, "show", "orch/"+res.RunID+"/C/1:f.txt"); f != "by hand" {
		t.Errorf("C started from f.txt %q", f)
	}
	var closed []string
	for _, e := range rec.of(record.EvQuestionClosed) {
		closed = append(closed, e.State+":"+e.Data.(record.AnswerData).Answer)
	}
	if strings.Join(closed, " ") != "answered:resolved answered:resolved" {
		t.Errorf("questions closed: %v", closed)
	}
}

func TestMergeConflictAbortedByThePerson(t *testing.T) {
	ask, _ := askAt(t, func(string) string { return "maybe" }, func(string) string { return " Abort " })
	_, run := mergeProject(t, writeA, writeB, "      merge: {on_conflict: ask}", "")
	_, rec := run(t, ask)
	wantStates(t, rec, map[string]string{"C": "failed"})
	if why := reasonOf(rec, "C"); !strings.HasPrefix(why, "orch:merge: aborted by the person: merging B's branch") {
		t.Errorf("C failed with %q", why)
	}
}

// The leaves' branches are merged into the run's result.
func TestMergeResult(t *testing.T) {
	p, dir := project(t, map[string]string{
		"cuelist.yaml": `cuelist:
  id: r
  defaults:
    merge: {verify: [sh, -c, 'test -f a.txt && test -f b.txt']}
  cues:
    - {id: A, agents: [impl-a]}
    - {id: B, agents: [impl-b]}
    - {id: DOCS, agents: [plain]}
---
agent: {id: impl-a, run: "echo a > a.txt", workspace: worktree}
---
agent: {id: impl-b, run: "echo b > b.txt", workspace: worktree}
---
agent: {id: plain, run: "true"}
`})
	gitRepo(t, dir)
	mustGit(t, dir, "branch", "-m", "trunk")
	rec := newMemRecorder()
	res := runPlan(t, p, rec, func(o *Options) { o.ProjectRoot = dir })
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	rb := res.ResultBranch
	if rb == nil || rb.Branch != "orch/"+res.RunID+"/result" || rb.Base != "trunk" || rb.Ahead != 3 {
		t.Fatalf("result %+v", rb)
	}
	if files := mustGit(t, dir, "ls-tree", "--name-only", rb.Branch); files != "a.txt\nb.txt\ncuelist.yaml" {
		t.Errorf("the result holds %q", files)
	}
	// Recorded at B, the last of the merged cues, as its second attempt.
	ends := mergeEnds(rec, "B")
	if len(ends) != 1 || ends[0].Attempt != 2 || ends[0].State != "completed" {
		t.Errorf("result merge attempts: %+v", ends)
	}
	var result *record.ResultBranch
	for _, e := range rec.of(record.EvMerge) {
		if d := e.Data.(record.MergeData); d.Result != nil {
			result = d.Result
		}
	}
	if result == nil || *result != *rb {
		t.Errorf("recorded result %+v, want %+v", result, rb)
	}
}

func TestMergeResultConflictFailsTheRun(t *testing.T) {
	p, dir := project(t, map[string]string{
		"cuelist.yaml": `cuelist:
  id: r
  defaults:
    merge: {on_conflict: fail}
  cues:
    - {id: A, agents: [impl-a]}
    - {id: B, agents: [impl-b]}
---
agent: {id: impl-a, run: "` + writeA + `", workspace: worktree}
---
agent: {id: impl-b, run: "` + writeB + `", workspace: worktree}
`, "f.txt": "base\n"})
	gitRepo(t, dir)
	rec := newMemRecorder()
	res := runPlan(t, p, rec, func(o *Options) { o.ProjectRoot = dir })
	wantStates(t, rec, map[string]string{"A": "completed", "B": "completed"})
	if res.State != record.RunFailed || res.Reason != "the run's result could not be merged: merging B's branch orch/"+res.RunID+"/B/1 into the run's result conflicts in f.txt (A and B collided) (on_conflict: fail)" {
		t.Errorf("run %s: %q", res.State, res.Reason)
	}
}
