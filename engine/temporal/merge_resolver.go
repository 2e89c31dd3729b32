package temporal

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// A merge's resolver (on_conflict: agent) on workers: an attempt of its
// agent at the cue, of any protocol, that works in the merge's worktree —
// whatever its own workspace says — with the conflict markers in place (or
// the tree a verify command failed on), as locally (runner/merge_resolver.go).
// The worktree is kept on the worker that made the merge: the resolver's
// phases go to that worker's own queue. It goes through WARNING and STANDBY
// by itself and into GO at once (no GO slot); its task and prompt are the
// local ones (gitwork.MergeTree.ResolverInputs, ResolverPrompt). What it
// leaves is checked by the merge's next round (no marker left) and
// committed there.

// ResolverInput is where a resolver's phase works and what its cue asks.
type ResolverInput struct {
	Dir    string // the merge's worktree on the worker
	Prompt string // the resolver's prompt: what to resolve, then its agent's
}

// resolverAt is the cue and the directory a phase works with: for a
// resolver's, a cue of its own with the resolver's prompt, in the merge's
// worktree (resolving); else c and the agent's workdir.
func (a *Activities) resolverAt(ctx context.Context, in AttemptInput, c *planner.Cue, ag *spec.Agent) (*planner.Cue, string, bool) {
	r := in.Resolving
	if r == nil {
		return c, attempt.Workdir(ag), false
	}
	rc := &planner.Cue{Cue: &spec.Cue{ID: c.ID, Agents: []string{ag.ID}, Timeout: c.Timeout, Prompt: r.Prompt}}
	dir := r.Dir
	if repo, err := gitwork.Git(ctx, a.Root, "rev-parse", "--show-toplevel"); err == nil {
		dir = gitwork.DirIn(repo, r.Dir, attempt.Workdir(ag))
	}
	return rc, dir, true
}

// resolveMerge starts a resolver's attempt at the merge's cue, its phases
// one after the other on the worker that keeps the merge's worktree.
func (w *wf) resolveMerge(d sched.Decision) {
	c := w.core.Cue(d.Cue)
	agent := d.Agent
	w.emit(record.Event{Type: record.EvAttemptStarted, Cue: c.ID, Agent: agent.ID, Attempt: d.Attempt, Data: record.AttemptStartedData{}})
	m := w.merging.jobs[d.MergeID]
	if m == nil || !m.kept {
		w.core.ResolverEnded(d.MergeID, d.Cue, d.Attempt, agent, sched.End{Failed: true, Class: "workspace", Reason: "the merge's worktree was not kept on a worker for its resolver"})
		return
	}
	m.problem = d.Problem
	w.emit(record.Event{Type: record.EvMerge, Cue: c.ID, Agent: mergeAgentID, Attempt: m.attempt, State: record.MergeResolving,
		Reason: fmt.Sprintf("resolver %s (attempt %d) works in %s on %s", agent.ID, d.Attempt, m.path, m.host), Data: record.MergeData{Branch: m.branch, Path: m.path}})
	tree := &gitwork.MergeTree{Path: m.path, Branch: m.branch, What: m.what}
	tools := []string{}
	if t := w.plan.ToolsOf(agent.ID).At(0); t != nil {
		tools = t
	}
	task := &attempt.Task{RunID: w.in.RunID, CueID: c.ID, AgentID: agent.ID, Attempt: d.Attempt, Inputs: tree.ResolverInputs(w.in.Inputs, m.sources, d.Problem, m.in.Verify),
		Tools: tools, TaskID: c.ID, Workspace: m.path}
	in := AttemptInput{RunID: w.in.RunID, Path: w.in.Path, SpecHash: w.in.SpecHash, Cue: c.ID, Agent: agent.ID, Attempt: d.Attempt, Try: 1,
		Resolving: &ResolverInput{Dir: m.path, Prompt: tree.ResolverPrompt(agent, d.Problem, m.in.Verify)}}
	actx, cancel := workflow.WithCancel(w.ctx)
	m.cancel, m.resolver = cancel, Asker{Cue: c.ID, Agent: agent.ID, Attempt: d.Attempt}
	phases := []string{ActivityWarning, ActivityStandby, ActivityGo}
	if trivial(agent) {
		phases = phases[2:]
	}
	ended := func(res AttemptResult) {
		m.resolver = Asker{}
		w.lastEnd = res
		end := sched.End{Outputs: res.Outputs}
		if res.Failed {
			end.Failed, end.Class, end.Reason = true, res.Class, res.Reason
		}
		w.core.ResolverEnded(d.MergeID, d.Cue, d.Attempt, agent, end)
		w.apply()
	}
	var next func(i int)
	next = func(i int) {
		name := phases[i]
		pin := in
		if name == ActivityGo {
			pin.Task = task
		}
		timeout := attempt.StandbyTimeout(w.plan.Cuelist)
		if name == ActivityGo {
			timeout = attempt.GoTimeout(w.plan.Cuelist, c, agent)
		}
		grace := attempt.KillGrace(w.plan.Cuelist, 0)
		opts := workflow.ActivityOptions{TaskQueue: m.queue, ScheduleToStartTimeout: 10 * time.Minute, StartToCloseTimeout: timeout + 2*grace + time.Minute,
			HeartbeatTimeout: HeartbeatTimeout, WaitForCancellation: true, Summary: fmt.Sprintf("%s %s attempt %d (%s, resolving the merge)", name, c.ID, d.Attempt, agent.ID),
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}}
		w.sel.AddFuture(workflow.ExecuteActivity(workflow.WithActivityOptions(actx, opts), name, pin), func(fut workflow.Future) {
			var res AttemptResult
			if err := fut.Get(w.ctx, &res); err != nil {
				res = AttemptResult{Failed: true, Class: "stopped", Reason: err.Error()}
				if !temporal.IsCanceledError(err) {
					res.Class, res.Reason = "worker-lost", fmt.Sprintf("the worker that keeps the merge's worktree (%s): %v", m.host, err)
				}
			}
			if res.Failed || name == ActivityGo {
				w.log.addLogs(SeqLogs{Cue: c.ID, Agent: agent.ID, Attempt: d.Attempt, Lines: res.Log}) // once, as an attempt's (ended)
				ended(res)
				return
			}
			next(i + 1)
		})
	}
	next(0)
}
