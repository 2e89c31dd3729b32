package runner

import (
	"context"
	"fmt"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// A resolver (a merge's on_conflict: agent) is an attempt of its agent at
// the cue, of any protocol, that works in the merge's worktree — whatever
// its own workspace says — with the conflict markers in place (or the tree
// a verify command failed on). It goes through WARNING and STANDBY by
// itself, as a child task does: it takes no GO slot. Its task's inputs hold
// the run's inputs and merge, what it is to resolve (and, for a plain
// agent's environment, merge_problem, merge_reason, merge_files and
// merge_output); a coding agent's prompt says it in words, followed by
// its own prompt: if it has one. What it leaves is checked by the merge
// (no marker left) and committed there: not by the attempt.

// startResolver records a resolver's attempt and starts it.
func (r *run) startResolver(ctx context.Context, c *planner.Cue, d sched.Decision) {
	m := r.merges[d.MergeID]
	m.problem = d.Problem
	agent := d.Agent
	n := r.nodeOf(r.tasks.Root(c.ID+":merge", agent), nil) // a task of its own, beside the cue's agents'
	rc := &planner.Cue{Cue: &spec.Cue{ID: c.ID, Agents: []string{agent.ID}, Timeout: c.Timeout, Prompt: m.tree.ResolverPrompt(agent, d.Problem, m.verify)}}
	a := newAttempt(r.host, rc, d.Cue, -1, agent, n, d.Attempt, r.reports)
	a.resolving, a.ws = m, &workspace{path: m.tree.Path, branch: m.tree.Branch}
	a.resolveTask = m.resolverTask(r, a, d.Problem)
	r.tasks.Serve(n.ref, a)
	r.emit(record.Event{Type: record.EvAttemptStarted, Cue: c.ID, Agent: agent.ID, Attempt: d.Attempt, Data: record.AttemptStartedData{}})
	r.emit(m.event(record.MergeResolving, fmt.Sprintf("resolver %s (attempt %d) works in %s", agent.ID, d.Attempt, m.tree.Path), record.MergeData{Path: m.tree.Path}))
	if driver.Speaks(agent) {
		a.Msgs.Warning = r.outbound(a, protocols.CoordWarning{RunID: r.id, CueID: c.ID, TargetAgents: rc.Agents, Attempt: a.Number})
	}
	m.resolver = a
	r.then(func() {
		r.running++
		r.active.Add(1)
		go a.run(ctx)
	})
}

// resolverPhases takes a resolver's attempt through WARNING and STANDBY
// and into GO at once, recording its messages itself (no loop decides
// them), as a child task's.
func (a *attemptRun) resolverPhases(d driver.Driver) (map[string]any, *attempt.Failure) {
	r := a.r
	if !a.trivial {
		if f := d.Warning(a.Attempt); f != nil {
			return nil, f
		}
		var events []record.Event
		if m := a.Msgs.TakeReply(); m != nil {
			events = append(events, a.messageEvent("in", m))
		}
		if driver.Speaks(a.Agent) {
			a.Msgs.Standby = driver.Encode(protocols.New(protocols.CoordStandby{RunID: r.id, CueID: a.Cue.ID, TargetAgents: a.Cue.Agents}))
			events = append(events, a.messageEvent("out", a.Msgs.Standby))
		}
		_ = r.publish(context0, events...)
		if f := d.Standby(a.Attempt); f != nil {
			return nil, f
		}
	}
	if m := a.Msgs.TakeReply(); m != nil {
		_ = r.publish(context0, a.messageEvent("in", m))
	}
	return a.work(d, a.resolveTask)
}

// resolverTask is a resolver's GO task: the run's inputs and what it is to
// resolve.
func (m *merge) resolverTask(r *run, a *attemptRun, p *sched.MergeProblem) *attempt.Task {
	tools := toolsOf(r.plan, a.Agent.ID).At(0)
	if tools == nil {
		tools = []string{}
	}
	return &attempt.Task{RunID: r.id, CueID: a.Cue.ID, AgentID: a.Agent.ID, Attempt: a.Number, Inputs: m.tree.ResolverInputs(r.opts.Inputs, m.sources, p, m.verify),
		Tools: tools, TaskID: a.Cue.ID, Workspace: m.tree.Path}
}
