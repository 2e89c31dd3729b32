package temporal

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// The workflow's side of worktrees across machines (worktree.go): what a
// worktree agent's phase starts from, and the run's result branch.

// changeWorktree: worktree agents run on workers (they were refused
// before); only runs with such agents reach it.
const (
	changeWorktree                   = "orch-worktree-remote"
	versionWorktree workflow.Version = 1
)

// worktreeFor is the worktree of attempt f's phase name: from the branch
// of the dependency that worked in a worktree (there is at most one:
// refuseWorktreeShape), else from the run's base; GO works on the
// attempt's branch. nil for an agent without a worktree.
func (w *wf) worktreeFor(f *flight, name string) *WorktreeInput {
	if f.agent.Workspace != "worktree" || workflow.GetVersion(w.ctx, changeWorktree, workflow.DefaultVersion, versionWorktree) < versionWorktree {
		return nil
	}
	g := w.in.Git
	if g == nil {
		return nil // the worker refuses the phase, saying why
	}
	in := &WorktreeInput{Remote: g.Remote, Base: g.Base}
	if name != ActivityGo {
		return in // WARNING and STANDBY work in a worktree of the run's base, left at their end
	}
	c := w.core.Cue(f.pos)
	in.Branch = gitwork.Branch(w.in.RunID, c.ID, f.agent.ID, f.number, len(c.Agents) > 1)
	if commit, tasks, ok := w.core.MergeCommit(f.pos); ok { // its dependencies' branches, merged
		in.Base, in.BaseBranch, in.From = commit, gitwork.MergeBranch(w.in.RunID, c.ID), "merge of "+strings.Join(tasks, ", ")
	} else if sources := w.core.MergeSources(f.pos); len(sources) > 0 {
		s := sources[0]
		in.Base, in.BaseBranch, in.From = or(s.Commit, s.Branch), s.Branch, s.Task
	}
	return in
}

// recordWorktree records the worktree a GO worked in, with its commit.
func (w *wf) recordWorktree(f *flight, res AttemptResult) {
	if res.Worktree != nil && !res.Failed {
		w.emit(record.Event{Type: record.EvWorktree, Cue: w.core.Cue(f.pos).ID, Agent: f.agent.ID, Attempt: f.number, Data: *res.Worktree})
	}
}

// mergeAgentID stands for orch itself in the records of a merge.
const mergeAgentID = sched.MergeAgent

// startMerge carries out the core's StartMerge: the run's result is pushed
// by a worker (orch.result); a merge at fan-in cannot happen (refused at
// submit) and fails, saying why.
func (w *wf) startMerge(d sched.Decision) {
	if w.mergeVersion() >= versionMerge {
		w.runMerge(d)
		return
	}
	c := w.core.Cue(d.Cue)
	w.emit(record.Event{Type: record.EvAttemptStarted, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, Data: record.AttemptStartedData{}})
	names := make([]string, len(d.Sources))
	for i, s := range d.Sources {
		names[i] = s.Task
	}
	if d.MergeID != sched.ResultMerge || w.in.Git == nil {
		w.core.Merged(d.MergeID, d.Attempt, sched.MergeReport{Err: fmt.Sprintf("merging the branches of %s at cue %s is not supported by --engine temporal in this version; run it with --engine local", strings.Join(names, ", "), c.ID)})
		return
	}
	branch := w.resultBranchName()
	data := record.MergeData{Branch: branch}
	for _, s := range d.Sources {
		data.Sources = append(data.Sources, record.MergeSource(s))
	}
	w.emit(record.Event{Type: record.EvMerge, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: record.MergeStarted,
		Reason: "merging the branches of " + strings.Join(names, ", ") + " for the run's result", Data: data})
	in := ResultInput{RunID: w.in.RunID, Remote: w.in.Git.Remote, Branch: branch, Sources: d.Sources, Base: w.in.Git.Base, BaseName: w.in.Git.BaseName}
	actx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{TaskQueue: w.queue,
		ScheduleToStartTimeout: 24 * time.Hour, StartToCloseTimeout: 15 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second}})
	w.sel.AddFuture(workflow.ExecuteActivity(actx, ActivityResult, in), func(fut workflow.Future) {
		var rb record.ResultBranch
		rep := sched.MergeReport{}
		if err := fut.Get(w.ctx, &rb); err != nil {
			rep.Err = "pushing the run's result branch: " + err.Error()
		} else {
			rep.Commit = rb.Commit
			w.result = &rb
		}
		w.core.Merged(d.MergeID, d.Attempt, rep)
		w.apply()
	})
}

// mergeEnded records the end of the merge's attempt: the result branch.
func (w *wf) mergeEnded(d sched.Decision) {
	if w.mergeVersion() >= versionMerge {
		w.mergeDone(d)
		return
	}
	c := w.core.Cue(d.Cue)
	branch := w.resultBranchName()
	state := record.MergeFailed
	var outputs map[string]any
	data := record.MergeData{Branch: branch}
	switch d.AttemptState {
	case sched.AttemptCompleted:
		state = record.MergeCompleted
		outputs = map[string]any{"merge_branch": branch, "merge_commit": d.Key}
		data.Commit, data.Result = d.Key, w.result
		w.emit(record.Event{Type: record.EvWorktree, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt,
			Data: record.WorktreeData{Branch: branch, Base: d.Key, From: "the run's worktree branches", Commit: d.Key}})
	case sched.AttemptStopped:
		state = record.MergeStopped
	}
	w.emit(record.Event{Type: record.EvMerge, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: state, Reason: d.Reason, Data: data})
	w.emit(record.Event{Type: record.EvAttemptEnded, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: string(d.AttemptState), Reason: d.Reason,
		Data: record.AttemptEndedData{Class: d.Class, Outputs: outputs}})
}

// resultBranchName is the run's result branch, as the local runner names
// it: orch/RUN/result, or orch/RUN/_result when a cue is named result.
func (w *wf) resultBranchName() string {
	ids := make([]string, len(w.plan.Order))
	for i, c := range w.plan.Order {
		ids[i] = c.ID
	}
	return gitwork.ResultBranch(w.in.RunID, ids)
}
