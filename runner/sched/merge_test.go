package sched_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/sched"
)

const worktreeAgents = `agent: {id: a, command: [sh, -c, "true"], workspace: worktree}
---
agent: {id: b, command: [sh, -c, "true"], workspace: worktree}
---
agent: {id: c, command: [sh, -c, "true"], workspace: worktree}
---
agent: {id: plain, command: [sh, -c, "true"]}
---
agent: {id: fixer, command: [sh, -c, "true"]}
`

// fanIn: A and B work in worktrees, C (in one too) depends on both.
func fanIn(t *testing.T, merge string) *harness {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: B, agents: [b]}
    - {id: C, agents: [c], dependencies: [B, A]`+merge+`}
`, worktreeAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	return h
}

// merging is fanIn with A and B completed: C's merge (attempt 2) started.
func merging(t *testing.T, merge string) *harness {
	h := fanIn(t, merge)
	h.done("A", "oa", "ca")
	h.done("B", "ob", "cb")
	return h
}

// mtake renders the decisions since the last take, then those of the
// advance after them (the loop's order), merges included.
func (h *harness) mtake() []string {
	ds := append([]sched.Decision(nil), h.core.Decisions()...)
	h.core.Advance(h.now)
	ds = append(ds, h.core.Decisions()...)
	var out []string
	for _, d := range ds {
		out = append(out, h.mrender(d))
	}
	h.log = append(h.log, out...)
	return out
}

func (h *harness) mrender(d sched.Decision) string {
	c := h.id(d.Cue)
	switch d.Kind {
	case sched.StartMerge:
		var s []string
		for _, src := range d.Sources {
			s = append(s, src.Task+" "+src.Branch+"@"+src.Commit)
		}
		return fmt.Sprintf("merge %d at %s#%d: %s", d.MergeID, c, d.Attempt, strings.Join(s, ", "))
	case sched.ResolveMerge:
		return fmt.Sprintf("resolve %d at %s#%d by %s (merge #%d): %s", d.MergeID, c, d.Attempt, d.Agent.ID, d.N, d.Problem.Kind)
	case sched.AskMerge:
		return fmt.Sprintf("ask %d at %s#%d: %s", d.MergeID, c, d.Attempt, d.Problem.Reason)
	case sched.ContinueMerge:
		return fmt.Sprintf("continue %d at %s#%d", d.MergeID, c, d.Attempt)
	case sched.StopMerge:
		return fmt.Sprintf("stop merge %d at %s: %s", d.MergeID, c, d.Reason)
	case sched.MergeEnded:
		return strings.Join(strings.Fields(fmt.Sprintf("merge %d ended at %s#%d %s %s", d.MergeID, c, d.Attempt, d.AttemptState, d.Class)), " ") +
			fmt.Sprintf(": %s @%s", d.Reason, d.Key)
	}
	return h.render(d)
}

func (h *harness) done(cue, branch, commit string) []string {
	h.core.Ended(h.now, h.pos(cue), 0, h.attempt(cue, 0), sched.End{Outputs: map[string]any{
		sched.OutputWorktreeBranch: branch, sched.OutputWorktreeCommit: commit}})
	return h.mtake()
}

func (h *harness) merged(cue string, attempt int, rep sched.MergeReport) []string {
	h.core.Merged(h.pos(cue), attempt, rep)
	return h.mtake()
}

func (h *harness) resultMerged(attempt int, rep sched.MergeReport) []string {
	h.core.Merged(sched.ResultMerge, attempt, rep)
	return h.mtake()
}

var conflict = sched.MergeReport{Problem: &sched.MergeProblem{Kind: "conflict", Files: []string{"f"}, Tasks: []string{"A", "B"}, Reason: "f conflicts"}}

// Once its dependencies completed, C's merge of their branches (in plan
// order) comes before its STANDBY; the merge's attempt is numbered with
// C's own; C goes on once it is merged, from that commit. When the run is
// over, the result is merged at C, the last cue that left a branch.
func TestMergeBeforeStandby(t *testing.T) {
	h := fanIn(t, "")
	h.done("B", "ob", "cb")
	h.want("A completed", h.done("A", "oa", "ca"),
		"ended A/0#1 completed ", "A completed", "merge 2 at C#2: A oa@ca, B ob@cb")
	if h.state("C") != sched.Warning || h.core.Stuck(1) {
		t.Errorf("C is %s while merging (stuck: %v)", h.state("C"), h.core.Stuck(1))
	}
	h.want("stale report", h.merged("C", 1, sched.MergeReport{Commit: "x"}))
	h.want("merged", h.merged("C", 2, sched.MergeReport{Commit: "cm"}),
		"merge 2 ended at C#2 completed:  @cm", "C standby", "C go", "go C/0")
	if commit, tasks, ok := h.core.MergeCommit(h.pos("C")); !ok || commit != "cm" || strings.Join(tasks, " ") != "A B" {
		t.Errorf("MergeCommit: %s %v %v", commit, tasks, ok)
	}
	h.want("C completed", h.done("C", "oc", "cc"),
		"ended C/0#1 completed ", "C completed", "merge -1 at C#3: A oa@ca, B ob@cb, C oc@cc")
	if h.core.Finished() {
		t.Error("finished before the result is merged")
	}
	h.want("result", h.resultMerged(3, sched.MergeReport{Commit: "cc"}), "merge -1 ended at C#3 completed:  @cc")
	if !h.core.Finished() || h.core.ResultFailure() != "" {
		t.Errorf("finished %v, result failure %q", h.core.Finished(), h.core.ResultFailure())
	}
}

func TestMergeConflictPolicyFail(t *testing.T) {
	h := merging(t, ", merge: {on_conflict: fail}")
	h.want("conflict", h.merged("C", 2, conflict),
		"merge 2 ended at C#2 failed merge_conflict: f conflicts (on_conflict: fail) @",
		"stop C/0: cue C is failed", "C failed: orch:merge: f conflicts (on_conflict: fail)")
	if !h.core.Finished() {
		t.Error("the run is not over (no result: a cue failed)")
	}
}

func TestMergeConflictPolicyAgent(t *testing.T) {
	h := merging(t, ", merge: {agent: fixer}")
	h.want("conflict", h.merged("C", 2, conflict), "resolve 2 at C#3 by fixer (merge #2): conflict")
	fixer := h.plan.Agents["fixer"]
	h.core.ResolverEnded(h.pos("C"), h.pos("C"), 3, fixer, sched.End{})
	h.want("resolved", h.mtake(), "ended C/-1#3 completed ", "continue 2 at C#2")
	// A further branch conflicts: the resolver again; then it leaves markers.
	h.want("conflict again", h.merged("C", 2, conflict), "resolve 2 at C#4 by fixer (merge #2): conflict")
	h.core.ResolverEnded(h.pos("C"), h.pos("C"), 4, fixer, sched.End{})
	h.mtake()
	markers := sched.MergeReport{Problem: &sched.MergeProblem{Kind: "markers", Reason: "conflict markers remain in f"}}
	h.want("markers left", h.merged("C", 2, markers),
		"merge 2 ended at C#2 failed merge_conflict: resolver fixer: conflict markers remain in f @",
		"stop C/0: cue C is failed", "C failed: orch:merge: resolver fixer: conflict markers remain in f")
}

func TestMergeResolverFailsOrVerifyFailsTwice(t *testing.T) {
	h := merging(t, ", merge: {agent: fixer, verify: [make]}")
	fixer := h.plan.Agents["fixer"]
	verify := sched.MergeReport{Problem: &sched.MergeProblem{Kind: "verify", Output: "FAIL", Reason: "make failed"}}
	h.want("verify failed", h.merged("C", 2, verify), "resolve 2 at C#3 by fixer (merge #2): verify")
	h.core.ResolverEnded(h.pos("C"), h.pos("C"), 3, fixer, sched.End{})
	h.mtake()
	h.want("verify failed again", h.merged("C", 2, verify),
		"merge 2 ended at C#2 failed merge_conflict: make failed after resolver fixer's fix @",
		"stop C/0: cue C is failed", "C failed: orch:merge: make failed after resolver fixer's fix")

	h = merging(t, ", merge: {agent: fixer}")
	h.merged("C", 2, conflict)
	h.core.ResolverEnded(h.pos("C"), h.pos("C"), 3, fixer, sched.End{Failed: true, Class: "exit:1", Reason: "command exited with status 1"})
	h.want("resolver failed", h.mtake(), "ended C/-1#3 failed exit:1",
		"merge 2 ended at C#2 failed merge_conflict: resolver fixer failed (exit:1): command exited with status 1; f conflicts @",
		"stop C/0: cue C is failed", "C failed: orch:merge: resolver fixer failed (exit:1): command exited with status 1; f conflicts")
}

func TestMergeConflictAsks(t *testing.T) {
	h := merging(t, "")
	h.want("conflict", h.merged("C", 2, conflict), "ask 2 at C#2: f conflicts")
	if h.core.Stuck(1) {
		t.Error("stuck while a person is asked about a merge")
	}
	h.core.MergeAnswered(h.pos("C"), 2, "later")
	h.want("neither", h.mtake(), `ask 2 at C#2: (the answer "later" is neither resolved nor abort) f conflicts`)
	h.core.MergeAnswered(h.pos("C"), 2, " Resolved\n")
	h.want("resolved", h.mtake(), "continue 2 at C#2")
	h.core.MergeAnswered(h.pos("C"), 2, "abort")
	h.want("an answer while merging", h.mtake())
	h.merged("C", 2, conflict)
	h.core.MergeAnswered(h.pos("C"), 2, "abort")
	h.want("abort", h.mtake(), "merge 2 ended at C#2 failed merge_conflict: aborted by the person: f conflicts @",
		"stop C/0: cue C is failed", "C failed: orch:merge: aborted by the person: f conflicts")

	h = merging(t, "")
	h.merged("C", 2, conflict)
	h.core.MergeUnanswered(h.pos("C"), 2, "question q1 was not answered within 30m0s")
	h.want("unanswered", h.mtake(), "merge 2 ended at C#2 failed merge_conflict: question q1 was not answered within 30m0s: f conflicts @",
		"stop C/0: cue C is failed", "C failed: orch:merge: question q1 was not answered within 30m0s: f conflicts")
}

// Stopping a cue stops its merge (and whatever works for it).
func TestMergeStoppedWithItsCue(t *testing.T) {
	h := merging(t, ", merge: {agent: fixer}")
	h.merged("C", 2, conflict)
	if ok, why := h.core.StopCue("C", "by me"); !ok {
		t.Fatal(why)
	}
	h.want("stop", h.mtake(), "stop C/0: cue C was stopped: by me", "stop merge 2 at C: cue C was stopped: by me",
		"merge 2 ended at C#2 stopped stopped: cue C was stopped: by me @", "C stopped: by me")
	h.core.ResolverEnded(h.pos("C"), h.pos("C"), 3, h.plan.Agents["fixer"], sched.End{Failed: true, Class: "stopped", Reason: "stopped"})
	h.want("the resolver's end", h.mtake(), "ended C/-1#3 stopped stopped")
}

// No merge for one branch, nor for a cue whose agents work in no
// worktree; a fan-out's branches (its outputs are lists) are its items', in
// item order.
func TestMergeSources(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: B, agents: [plain]}
    - {id: C, agents: [c], dependencies: [A, B]}
    - {id: D, agents: [plain], dependencies: [A, F]}
    - {id: F, agents: [b]}
`, worktreeAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.core.Ended(h.now, h.pos("F"), 0, h.attempt("F", 0), sched.End{Outputs: map[string]any{
		sched.OutputWorktreeBranch: []any{"f0", "f1"}, sched.OutputWorktreeCommit: []any{"c0", "c1"}}})
	h.mtake()
	h.completed("B")
	got := h.done("A", "oa", "ca")
	for _, l := range got {
		if strings.HasPrefix(l, "merge 2") || strings.HasPrefix(l, "merge 3") {
			t.Errorf("a merge for one branch, or for a plain agent: %s", l)
		}
	}
	var srcs []string
	for _, s := range h.core.MergeSources(h.pos("D")) {
		srcs = append(srcs, s.Task+"="+s.Branch+"@"+s.Commit)
	}
	if strings.Join(srcs, " ") != "A=oa@ca F[0]=f0@c0 F[1]=f1@c1" {
		t.Errorf("D's sources: %v", srcs)
	}
}

// A resumed run merges a completed fan-out's branches under its items'
// names, as the run before the crash did: F[slug], not F[0] (its items are
// not expanded again, but their names are recorded).
func TestMergeSourcesRestoredFanOut(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: F, agents: [b], for_each: [{id: slug}, {id: words}]}
    - {id: C, agents: [c], dependencies: [A, F]}
`, worktreeAgents, 4, false)
	h.core.Restore("A", sched.Recorded{State: sched.Completed, Attempts: 1,
		Outputs: map[string]any{sched.OutputWorktreeBranch: "oa", sched.OutputWorktreeCommit: "ca"}})
	item := func(id, branch string) sched.RecordedItem {
		return sched.RecordedItem{ID: "F[" + id + "]", Value: map[string]any{"id": id}, Rec: sched.Recorded{State: sched.Completed, Attempts: 1,
			Outputs: map[string]any{sched.OutputWorktreeBranch: branch, sched.OutputWorktreeCommit: "c" + branch}}}
	}
	h.core.Restore("F", sched.Recorded{State: sched.Completed, Attempts: 0, Items: []sched.RecordedItem{item("slug", "f0"), item("words", "f1")},
		Outputs: map[string]any{sched.OutputWorktreeBranch: []any{"f0", "f1"}, sched.OutputWorktreeCommit: []any{"cf0", "cf1"}}})
	var srcs []string
	for _, s := range h.core.MergeSources(h.pos("C")) {
		srcs = append(srcs, s.Task+"="+s.Branch+"@"+s.Commit)
	}
	if strings.Join(srcs, " ") != "A=oa@ca F[slug]=f0@cf0 F[words]=f1@cf1" {
		t.Errorf("C's sources after a resume: %v", srcs)
	}
}
