package temporal

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// The workflow's side of merges (merge.go): the core decides a merge at
// fan-in (or the run's result); the workflow records its attempt as the
// local runner does (orch:merge, EvMerge, EvWorktree) and has a worker make
// it (orch.merge), then reports what came of it to the core.

// changeMerge: worktree branches are merged at fan-in, and the run's result
// made, by orch.merge (before: fan-in refused, the result by orch.result);
// a worktree run continues as new, its merges carried.
const (
	changeMerge                   = "orch-worktree-merge"
	versionMerge workflow.Version = 1
)

// merging is the run's merges as the workflow carries them out.
type merging struct {
	version workflow.Version
	asked   bool // version was read (GetVersion, once per execution)
	jobs    map[int]*wfMerge
}

// wfMerge is one merge: where it is and what it takes in.
type wfMerge struct {
	branch  string
	path    string // its worktree on the worker that made it
	sources []sched.MergeSource
	cancel  workflow.CancelFunc
}

// mergeVersion is the run's merge behaviour: read only by runs with
// worktree agents (others never merge), once.
func (w *wf) mergeVersion() workflow.Version {
	if !w.merging.asked {
		w.merging.asked = true
		w.merging.version = workflow.GetVersion(w.ctx, changeMerge, workflow.DefaultVersion, versionMerge)
	}
	return w.merging.version
}

// mergeBranch is the branch of merge id of cue (as locally).
func (w *wf) mergeBranch(id int, cue string) string {
	if id == sched.ResultMerge {
		return w.resultBranchName()
	}
	return gitwork.MergeBranch(w.in.RunID, cue)
}

// runMerge records the merge's attempt and has a worker make it.
func (w *wf) runMerge(d sched.Decision) {
	c := w.core.Cue(d.Cue)
	m := &wfMerge{branch: w.mergeBranch(d.MergeID, c.ID), sources: d.Sources}
	if w.merging.jobs == nil {
		w.merging.jobs = map[int]*wfMerge{}
	}
	w.merging.jobs[d.MergeID] = m
	w.emit(record.Event{Type: record.EvAttemptStarted, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, Data: record.AttemptStartedData{}})
	if w.in.Git == nil {
		w.core.Merged(d.MergeID, d.Attempt, sched.MergeReport{Err: "the run names no git remote to merge its branches through"})
		return
	}
	data := record.MergeData{Branch: m.branch}
	for _, s := range d.Sources {
		data.Sources = append(data.Sources, record.MergeSource(s))
	}
	names := taskNames(d.Sources)
	what := "the run's result"
	policy := spec.MergeOf(w.plan.Cuelist, nil)
	queue := w.queue
	if d.MergeID != sched.ResultMerge {
		what, policy = "cue "+c.ID, spec.MergeOf(w.plan.Cuelist, c.Cue)
		for _, id := range c.Agents { // where the cue's agent works: its clone has the merge at hand
			if a := w.plan.Agents[id]; a != nil && a.Workspace == "worktree" {
				queue = queueOf(a, w.queue)
				break
			}
		}
	}
	w.emit(record.Event{Type: record.EvMerge, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: record.MergeStarted,
		Reason: fmt.Sprintf("merging the branches of %s for %s", names, what), Data: data})
	timeout := attempt.GoTimeout(w.plan.Cuelist, c, &spec.Agent{ID: mergeAgentID})
	in := MergeInput{RunID: w.in.RunID, Remote: w.in.Git.Remote, ID: d.MergeID, Cue: c.ID, Result: w.resultBranchName(), Sources: d.Sources,
		Timeout: timeout, Base: w.in.Git.Base, BaseName: w.in.Git.BaseName}
	if policy != nil {
		in.Verify = policy.Verify
	}
	actx, cancel := workflow.WithCancel(w.ctx)
	m.cancel = cancel
	actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{TaskQueue: queue,
		ScheduleToStartTimeout: 24 * time.Hour, StartToCloseTimeout: timeout + 15*time.Minute,
		Summary:     fmt.Sprintf("%s merge (attempt %d)", c.ID, d.Attempt),
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second}})
	w.sel.AddFuture(workflow.ExecuteActivity(actx, ActivityMerge, in), func(fut workflow.Future) {
		var res MergeResult
		rep := sched.MergeReport{}
		if err := fut.Get(w.ctx, &res); err != nil {
			rep.Err = "merging on a worker: " + err.Error()
		} else {
			m.path = res.Path
			for _, n := range res.Notes {
				n.Data.Branch = m.branch
				w.emit(record.Event{Type: record.EvMerge, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: n.State, Reason: n.Reason, Data: n.Data})
			}
			rep = sched.MergeReport{Commit: res.Commit, Problem: res.Problem, Err: res.Err}
			if res.Result != nil {
				w.result = res.Result
			}
		}
		w.core.Merged(d.MergeID, d.Attempt, rep)
		w.apply()
	})
}

// stopMerge stops a merge's work on its worker (the run stops).
func (w *wf) stopMerge(d sched.Decision) {
	if m := w.merging.jobs[d.MergeID]; m != nil && m.cancel != nil {
		m.cancel()
	}
}

// mergeDone records the end of a merge's attempt: its branch's commit,
// and for the result merge the run's result.
func (w *wf) mergeDone(d sched.Decision) {
	c := w.core.Cue(d.Cue)
	m := w.merging.jobs[d.MergeID]
	if m == nil {
		m = &wfMerge{branch: w.mergeBranch(d.MergeID, c.ID)}
	}
	state := record.MergeFailed
	var outputs map[string]any
	data := record.MergeData{Branch: m.branch}
	switch d.AttemptState {
	case sched.AttemptCompleted:
		state = record.MergeCompleted
		outputs = map[string]any{"merge_branch": m.branch, "merge_commit": d.Key}
		data.Commit = d.Key
		if d.MergeID == sched.ResultMerge {
			data.Result = w.result
		}
		base := d.Key
		if len(m.sources) > 0 && m.sources[0].Commit != "" {
			base = m.sources[0].Commit
		}
		w.emit(record.Event{Type: record.EvWorktree, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt,
			Data: record.WorktreeData{Branch: m.branch, Base: base, From: "merge of " + taskNames(m.sources), Path: m.path, Commit: d.Key}})
	case sched.AttemptStopped:
		state = record.MergeStopped
	}
	w.emit(record.Event{Type: record.EvMerge, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: state, Reason: d.Reason, Data: data})
	w.emit(record.Event{Type: record.EvAttemptEnded, Cue: c.ID, Agent: mergeAgentID, Attempt: d.Attempt, State: string(d.AttemptState), Reason: d.Reason,
		Data: record.AttemptEndedData{Class: d.Class, Outputs: outputs}})
}

// mergeUnsupported ends a merge whose problem would need a resolver or a
// person (refused at submit: refuseMergePolicy; a plan never gets here).
func (w *wf) mergeUnsupported(d sched.Decision) {
	why := "a merge's conflict can only fail the cue on --engine temporal (on_conflict: fail)"
	if d.Kind == sched.AskMerge {
		w.core.MergeUnanswered(d.MergeID, d.Attempt, why)
		return
	}
	w.core.ResolverEnded(d.MergeID, d.Cue, d.Attempt, d.Agent, sched.End{Failed: true, Class: "unsupported", Reason: why})
}

func taskNames(sources []sched.MergeSource) string {
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.Task
	}
	return strings.Join(names, ", ")
}
