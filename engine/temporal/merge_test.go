package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/record"
)

// fanInFiles: A and B work in worktrees side by side (their lines given),
// C depends on both; merge is C's merge: block.
func fanInFiles(a, b, merge string) map[string]string {
	return map[string]string{
		"fanin.yaml": "cuelist:\n  id: fanin\n  include: [wa.yaml, wb.yaml, wc.yaml]\n  defaults:\n    merge: {on_conflict: fail}\n  cues:\n" +
			"    - {id: A, agents: [wa]}\n    - {id: B, agents: [wb]}\n    - id: C\n      agents: [wc]\n      dependencies: [A, B]\n" + merge,
		"wa.yaml": "agent: {id: wa, run: \"" + a + "\", workspace: worktree}\n",
		"wb.yaml": "agent: {id: wb, run: \"" + b + "\", workspace: worktree}\n",
		"wc.yaml": "agent: {id: wc, run: \"test -f a.txt && test -f b.txt && echo c > c.txt\", workspace: worktree}\n",
	}
}

// runFanIn runs fanin.yaml on a worker whose clone shares remote, and
// returns its result and events.
func runFanIn(t *testing.T, files map[string]string) (_ RunResult, evs []record.Event, remote, root string) {
	t.Helper()
	remote, root, _ = sharedRemote(t, files)
	res, evs := runInClone(t, root, remote, "fanin.yaml")
	return res, evs, remote, root
}

// runInClone runs the cuelist at path in root, a clone of remote, on a
// worker there, and returns its result and events.
func runInClone(t *testing.T, root, remote, path string) (RunResult, []record.Event) {
	t.Helper()
	return runInCloneOn(t, runEnv(t, root), root, remote, path)
}

// runInCloneOn is runInClone on env, a test environment the caller made.
func runInCloneOn(t *testing.T, env *testsuite.TestWorkflowEnvironment, root, remote, path string) (RunResult, []record.Event) {
	t.Helper()
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: r1, Path: path, SpecHash: specHashOf(t, root, path),
		Git: &RunGit{Remote: remote, Base: gitT(t, root, "rev-parse", "HEAD"), BaseName: "main"}})
	res, err := resultOf(env.GetWorkflowError(), env.GetWorkflowResult)
	if err != nil {
		t.Fatal(err)
	}
	return res, events(t, env)
}

// TestFanInMergedOnWorker: C depends on two worktree cues; a worker merges
// their branches as the local engine does (orch/RUN/C/merge, its last
// commit's parents A's and B's), runs the verify command on the merged
// tree, pushes the branch, and C works from the merge; the workflow records
// the orch:merge attempt and its steps.
func TestFanInMergedOnWorker(t *testing.T) {
	res, evs, remote, root := runFanIn(t, fanInFiles("echo a > a.txt", "echo b > b.txt",
		"      merge: {on_conflict: fail, verify: [sh, -c, 'test -f a.txt && test -f b.txt']}\n"))
	if res.State != "completed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	a := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/A/1")
	b := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/B/1")
	merge := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/C/merge")
	if parents := gitT(t, remote, "log", "-1", "--format=%P", merge); parents != a+" "+b {
		t.Errorf("the merge's parents: %q, want A's and B's %s %s", parents, a, b)
	}
	c := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/C/1")
	if gitT(t, remote, "rev-parse", c+"^") != merge {
		t.Errorf("C's commit %s is not on the merge %s", c, merge)
	}
	if files := gitT(t, remote, "ls-tree", "--name-only", c); !strings.Contains(files, "a.txt") || !strings.Contains(files, "b.txt") || !strings.Contains(files, "c.txt") {
		t.Errorf("C's tree: %s", files)
	}
	if r := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/result"); r != c {
		t.Errorf("the result branch is at %s, want C's %s", r, c)
	}
	var states []string
	var wt *record.WorktreeData
	for _, e := range evs {
		if e.Agent != mergeAgentID || e.Cue != "C" {
			continue
		}
		switch d := e.Data.(type) {
		case record.MergeData:
			if d.Branch == "orch/"+r1+"/C/merge" {
				states = append(states, e.State)
			}
		case record.WorktreeData:
			if d.Branch == "orch/"+r1+"/C/merge" {
				wt = &d
			}
		}
		if e.Type == record.EvAttemptEnded && e.Attempt == 1 && (e.State != "completed" || e.Data.(record.AttemptEndedData).Outputs["merge_commit"] != merge) {
			t.Errorf("C's merge attempt ended %s: %+v", e.State, e.Data)
		}
	}
	if got := strings.Join(states, " "); got != "started merged verified completed" {
		t.Errorf("C's merge went %q", got)
	}
	if wt == nil || wt.Commit != merge || wt.From != "merge of A, B" || wt.Base != a {
		t.Errorf("the merge's worktree: %+v", wt)
	}
	for _, e := range evs {
		if d, ok := e.Data.(record.WorktreeData); ok && e.Cue == "C" && e.Agent == "wc" && (d.Base != merge || d.From != "merge of A, B") {
			t.Errorf("C's attempt started from %s (%s), want the merge %s", d.Base, d.From, merge)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(root, ".orch", "worktrees", r1)); len(left) != 0 {
		t.Errorf("worktrees left on the worker: %v", left)
	}
}

// TestFanInConflictFails: A and B change the same file; with on_conflict:
// fail the merge fails C, naming the file and the cues that collided, and
// nothing of the merge is pushed.
func TestFanInConflictFails(t *testing.T) {
	res, evs, remote, _ := runFanIn(t, fanInFiles("echo a > f.txt", "echo b > f.txt", ""))
	if res.State != "failed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	want := "orch:merge: merging B's branch orch/" + r1 + "/B/1 into cue C conflicts in f.txt (A and B collided) (on_conflict: fail)"
	if why := cueReason(evs, "C", "failed"); why != want {
		t.Errorf("C failed with %q, want %q\n%s", why, want, story(evs))
	}
	if _, err := gitRef(remote, "refs/heads/orch/"+r1+"/C/merge"); err == nil {
		t.Error("the failed merge's branch was pushed")
	}
}

// TestFanInVerifyFails: the verify command fails on the merged tree: C
// fails with its reason.
func TestFanInVerifyFails(t *testing.T) {
	res, evs, _, _ := runFanIn(t, fanInFiles("echo a > a.txt", "echo b > b.txt",
		"      merge: {on_conflict: fail, verify: [sh, -c, 'echo no c.txt; test -f c.txt']}\n"))
	if res.State != "failed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	why := cueReason(evs, "C", "failed")
	if !strings.Contains(why, "the verify command sh -c \"echo no c.txt; test -f c.txt\" exited with status 1 on cue C (on_conflict: fail)") {
		t.Errorf("C failed with %q", why)
	}
	found := false
	for _, e := range evs {
		if d, ok := e.Data.(record.MergeData); ok && e.State == record.MergeVerifyFailed && strings.Contains(d.Output, "no c.txt") {
			found = true
		}
	}
	if !found {
		t.Errorf("no verify-failed step with the command's output:\n%s", story(evs))
	}
}

func cueReason(evs []record.Event, cue, state string) string {
	for _, e := range evs {
		if e.Type == record.EvCueState && e.Cue == cue && e.State == state {
			return e.Reason
		}
	}
	return ""
}

func gitRef(repo, ref string) (string, error) {
	return gitworkGit(repo, "rev-parse", "--verify", "--quiet", ref)
}

func gitworkGit(dir string, args ...string) (string, error) {
	return gitwork.Git(context.Background(), dir, args...)
}

// TestWorktreeRunContinuesAsNew: a run with worktree agents and a merge at
// fan-in continues as new (a tiny bound): the branches its cues left are
// carried, so D, executions later, starts from C's branch, and the run's
// result merges them all; every cue runs once.
func TestWorktreeRunContinuesAsNew(t *testing.T) {
	files := fanInFiles("echo a > a.txt", "echo b > b.txt", "")
	var cl strings.Builder
	cl.WriteString(strings.Replace(files["fanin.yaml"], "include: [wa.yaml, wb.yaml, wc.yaml]", "include: [wa.yaml, wb.yaml, wc.yaml, wd.yaml, plain.yaml]", 1))
	prev := "C"
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&cl, "    - {id: P%d, agents: [plain], dependencies: [%s]}\n", i, prev)
		prev = fmt.Sprintf("P%d", i)
	}
	fmt.Fprintf(&cl, "    - {id: D, agents: [wd], dependencies: [%s, C]}\n", prev)
	files["fanin.yaml"] = cl.String()
	files["wd.yaml"] = "agent: {id: wd, run: \"test -f c.txt && echo d > d.txt\", workspace: worktree}\n"
	files["plain.yaml"] = "agent: {id: plain, run: \"true\"}\n"
	remote, root, _ := sharedRemote(t, files)
	in := RunInput{RunID: r1, Path: "fanin.yaml", SpecHash: specHashOf(t, root, "fanin.yaml"), ContinueAfter: 20,
		Git: &RunGit{Remote: remote, Base: gitT(t, root, "rev-parse", "HEAD"), BaseName: "main"}}
	all, res, gens := executions(t, root, in, nil)
	if res.State != "completed" {
		t.Fatalf("after %d executions: %s (%s)\n%s", gens+1, res.State, res.Reason, story(all))
	}
	if gens < 2 {
		t.Fatalf("only %d executions: the run did not continue as new", gens+1)
	}
	started := map[string]int{}
	for _, e := range all {
		if e.Type == record.EvAttemptStarted {
			started[e.Cue+" "+e.Agent]++
		}
	}
	for who, n := range started {
		if n != 1 && who != "D "+mergeAgentID {
			t.Errorf("%s started %d times", who, n)
		}
	}
	if len(started) != 14 || started["C "+mergeAgentID] != 1 || started["D "+mergeAgentID] != 1 {
		t.Errorf("attempts started: %v", started)
	}
	d := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/D/1")
	if r := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/result"); r != d {
		t.Errorf("the result is at %s, want D's %s", r, d)
	}
	if files := gitT(t, remote, "ls-tree", "--name-only", d); strings.Count(files, ".txt") != 4 {
		t.Errorf("D's tree: %s", files)
	}
}

// TestFanOutAndAgentsMergedOnWorker: the items of a fan-out of worktree
// agents each leave a branch (named as locally: F@0, F@1); G, depending on
// the fan-out, starts from the merge of them; two worktree agents of one
// cue leave a branch each (T/N-AGENT); the run's result merges G's and
// both of T's.
func TestFanOutAndAgentsMergedOnWorker(t *testing.T) {
	remote, root, _ := sharedRemote(t, map[string]string{
		"fan.yaml": "cuelist:\n  id: fan\n  defaults:\n    merge: {on_conflict: fail}\n  cues:\n" +
			"    - {id: F, agents: [wi], for_each: [x, y]}\n    - {id: T, agents: [wa, wb]}\n    - {id: G, agents: [wg], dependencies: [F]}\n" +
			"---\nagent: {id: wi, run: 'f=$(printf %s \"$ORCH_ITEM\" | tr -dc a-z); echo $f > $f.txt', workspace: worktree}\n" +
			"---\nagent: {id: wa, run: 'echo a > a.txt', workspace: worktree}\n" +
			"---\nagent: {id: wb, run: 'echo b > b.txt', workspace: worktree}\n" +
			"---\nagent: {id: wg, run: 'test -f x.txt && test -f y.txt && echo g > g.txt', workspace: worktree}\n",
	})
	res, evs := runInClone(t, root, remote, "fan.yaml")
	if res.State != "completed" {
		t.Fatalf("%s: %s\n%s", res.State, res.Reason, story(evs))
	}
	merge := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/G/merge")
	var parents []string
	for _, b := range []string{"orch/" + r1 + "/F@0/1", "orch/" + r1 + "/F@1/1"} {
		parents = append(parents, gitT(t, remote, "rev-parse", "refs/heads/"+b))
	}
	if got := gitT(t, remote, "log", "-1", "--format=%P", merge); got != strings.Join(parents, " ") {
		t.Errorf("the merge's parents %q, want F's items' %q\n%s", got, parents, story(evs))
	}
	g := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/G/1")
	if gitT(t, remote, "rev-parse", g+"^") != merge {
		t.Errorf("G's commit %s is not on the merge %s", g, merge)
	}
	// Every agent's branch of T reaches the result (before: the last one's).
	result := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/result")
	for _, b := range []string{"orch/" + r1 + "/G/1", "orch/" + r1 + "/T/1-wa", "orch/" + r1 + "/T/2-wb"} {
		if _, err := gitworkGit(remote, "rev-parse", "--verify", "--quiet", "refs/heads/"+b); err != nil {
			t.Errorf("no branch %s on the remote", b)
		}
	}
	for _, b := range []string{"orch/" + r1 + "/G/1", "orch/" + r1 + "/T/1-wa", "orch/" + r1 + "/T/2-wb"} {
		if _, err := gitworkGit(remote, "merge-base", "--is-ancestor", "refs/heads/"+b, result); err != nil {
			t.Errorf("the result %s does not hold %s: %v", result, b, err)
		}
	}
}

// askedMerge runs fanin.yaml with A and B writing f.txt apart, C's merge
// asking the person, on a worker with a queue of its own; answer, once the
// question is open, resolves it (or not) in the worktree the worker kept
// and says what to answer.
func askedMerge(t *testing.T, answer func(wt string) string) (RunResult, []record.Event, string, string) {
	t.Helper()
	return conflictedMerge(t, "{on_conflict: ask}", "true", answer)
}

// conflictedMerge runs fanin.yaml with A and B writing f.txt apart and C's
// merge block merge (fixer, running fixer's shell line, is an agent too),
// on a worker with a queue of its own; answer, when given, is called ten
// minutes in with the merge's worktree and says what to answer q1.
func conflictedMerge(t *testing.T, merge, fixer string, answer func(wt string) string) (RunResult, []record.Event, string, string) {
	t.Helper()
	files := fanInFiles("echo a > f.txt", "echo b > f.txt", "")
	files["wc.yaml"] = "agent: {id: wc, run: \"grep -q both f.txt && echo c > c.txt\", workspace: worktree}\n"
	files["fixer.yaml"] = "agent: {id: fixer, run: \"" + fixer + "\"}\n"
	files["fanin.yaml"] = strings.Replace(files["fanin.yaml"], "      dependencies: [A, B]\n", "      dependencies: [A, B]\n      merge: "+merge+"\n", 1)
	files["fanin.yaml"] = strings.Replace(files["fanin.yaml"], "wc.yaml]", "wc.yaml, fixer.yaml]", 1)
	remote, root, _ := sharedRemote(t, files)
	env := newEnv()
	RegisterWorkflow(env)
	acts := &Activities{Root: root, Queue: "w1-own"}
	defer acts.Close()
	RegisterActivities(env, acts)
	env.SetTestTimeout(2 * time.Minute)
	wt := filepath.Join(root, ".orch", "worktrees", r1, "C-merge")
	if answer != nil {
		env.RegisterDelayedCallback(func() {
			if !exists(filepath.Join(wt, "f.txt")) {
				t.Errorf("no merge worktree kept at %s when the question is open", wt)
			}
			env.SignalWorkflow(SignalAnswer, AnswerSignal{Question: "q1", Answer: answer(wt)})
		}, 10*time.Minute)
	}
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: r1, Path: "fanin.yaml", SpecHash: specHashOf(t, root, "fanin.yaml"),
		Git: &RunGit{Remote: remote, Base: gitT(t, root, "rev-parse", "HEAD"), BaseName: "main"}})
	res, err := resultOf(env.GetWorkflowError(), env.GetWorkflowResult)
	if err != nil {
		t.Fatal(err)
	}
	return res, events(t, env), remote, root
}

// TestFanInConflictResolvedByAgent: C's merge conflicts and goes to its
// resolver (on_conflict: agent), an attempt of fixer at C that works in the
// merge's worktree on the worker that keeps it; the merge goes on with
// what it left (checked, committed), and C works on it.
func TestFanInConflictResolvedByAgent(t *testing.T) {
	res, evs, remote, root := conflictedMerge(t, "{on_conflict: agent, agent: fixer}", "grep -q '<<<<<<<' f.txt && test $ORCH_INPUT_MERGE_PROBLEM = conflict && echo both > f.txt", nil)
	if res.State != "completed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	var states []string
	fixer := 0
	for _, e := range evs {
		if _, ok := e.Data.(record.MergeData); ok && e.Cue == "C" && e.Attempt == 2 {
			states = append(states, e.State)
		}
		if e.Agent == "fixer" && (e.Type == record.EvAttemptStarted || e.Type == record.EvAttemptEnded && e.State == "completed") {
			fixer++
		}
	}
	if got := strings.Join(states, " "); got != "started conflict resolving checking resolved completed" {
		t.Errorf("C's merge went %q\n%s", got, story(evs))
	}
	if fixer != 2 {
		t.Errorf("fixer's attempt did not start and complete\n%s", story(evs))
	}
	resolvedBoth(t, remote, root)
}

// resolvedBoth checks that C's merge holds f.txt resolved to both, and
// that the worker left no worktree.
func resolvedBoth(t *testing.T, remote, root string) {
	t.Helper()
	merge := gitT(t, remote, "rev-parse", "refs/heads/orch/"+r1+"/C/merge")
	if f := gitT(t, remote, "show", merge+":f.txt"); f != "both" {
		t.Errorf("the merge's f.txt: %q, want the resolution", f)
	}
	noWorktreeLeft(t, root)
}

// noWorktreeLeft checks that the worker removed the run's worktrees.
func noWorktreeLeft(t *testing.T, root string) {
	t.Helper()
	if left, _ := os.ReadDir(filepath.Join(root, ".orch", "worktrees", r1)); len(left) != 0 {
		t.Errorf("worktrees left on the worker: %v", left)
	}
}

// TestFanInResolverFails: the resolver fails: C fails, saying so, and the
// kept worktree is removed.
func TestFanInResolverFails(t *testing.T) {
	res, evs, _, root := conflictedMerge(t, "{on_conflict: agent, agent: fixer}", "exit 3", nil)
	if res.State != "failed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	if why := cueReason(evs, "C", "failed"); !strings.Contains(why, "resolver fixer failed") {
		t.Errorf("C failed with %q", why)
	}
	noWorktreeLeft(t, root)
}

// TestFanInConflictAsksThePerson: C's merge conflicts; the worker keeps
// the merge's worktree and the person is asked (an orch:merge question
// naming it); they resolve it there and answer resolved: the merge goes on
// with their resolution (checked, committed), is pushed, and C works on it.
func TestFanInConflictAsksThePerson(t *testing.T) {
	res, evs, remote, root := askedMerge(t, func(wt string) string {
		if err := os.WriteFile(filepath.Join(wt, "f.txt"), []byte("both\n"), 0o644); err != nil {
			t.Error(err)
		}
		return "resolved"
	})
	if res.State != "completed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	var question string
	var states []string
	for _, e := range evs {
		if d, ok := e.Data.(record.QuestionData); ok && e.Agent == mergeAgentID {
			question = d.Question
		}
		if _, ok := e.Data.(record.MergeData); ok && e.Cue == "C" && e.Attempt == 2 {
			states = append(states, e.State)
		}
	}
	if !strings.Contains(question, "conflicts in f.txt") || !strings.Contains(question, filepath.Join(root, ".orch", "worktrees", r1, "C-merge")) {
		t.Errorf("the person was asked %q", question)
	}
	if got := strings.Join(states, " "); got != "started conflict checking resolved completed" {
		t.Errorf("C's merge went %q\n%s", got, story(evs))
	}
	resolvedBoth(t, remote, root)
}

// TestFanInConflictAborted: the person answers abort: C fails with the
// conflict, and the kept worktree is removed.
func TestFanInConflictAborted(t *testing.T) {
	res, evs, _, root := askedMerge(t, func(string) string { return "abort" })
	if res.State != "failed" {
		t.Fatalf("state %s: %s\n%s", res.State, res.Reason, story(evs))
	}
	if why := cueReason(evs, "C", "failed"); !strings.Contains(why, "aborted by the person: merging B's branch") {
		t.Errorf("C failed with %q", why)
	}
	noWorktreeLeft(t, root)
}
