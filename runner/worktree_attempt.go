package runner

import (
	"context"
	"time"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// Outputs a worktree agent's successful attempt adds to its own (a merge
// reads them: sched.MergeSources).
const (
	OutputWorktreeBranch = sched.OutputWorktreeBranch
	OutputWorktreeCommit = sched.OutputWorktreeCommit
)

// worktreePath is where the attempt's worktree is ("" for an agent without
// one), known before it is created.
func (a *attemptRun) worktreePath() string {
	if a.Agent.Workspace != WorkspaceWorktree || a.r.worktrees == nil {
		return ""
	}
	return a.r.worktrees.pathFor(a)
}

// openWorkspace creates a worktree agent's attempt's worktree, before its
// agent does anything, and records it.
func (a *attemptRun) openWorkspace() *attempt.Failure {
	if a.Agent.Workspace != WorkspaceWorktree {
		return nil
	}
	if a.r.worktrees == nil {
		return attempt.Failf("workspace", "agent %s has workspace: worktree, but the run has no git repository for it (only the agents its cues name were looked at when it started)", a.Agent.ID)
	}
	ws, err := a.r.worktrees.add(a)
	if err != nil {
		return attempt.Failf("workspace", "creating the attempt's worktree: %v", err)
	}
	a.ws = ws
	err = a.r.publish(context.Background(), record.Event{RunID: a.r.id, At: time.Now().UTC(), Type: record.EvWorktree, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number,
		Data: record.WorktreeData{Branch: ws.branch, Base: ws.base, From: ws.from, Path: ws.path}})
	if err != nil {
		return attempt.Failf("internal", "recording the attempt's worktree: %v", err)
	}
	return nil
}

// moveWorkspace moves the attempt's worktree and branch to base, the commit
// of dependency cue from, at GO: the worktree was created at WARNING, which
// may come before the dependencies complete (what it holds then is HEAD's,
// and what prepare left in tracked files is reset).
func (a *attemptRun) moveWorkspace(base, from string) *attempt.Failure {
	if a.ws == nil {
		return nil
	}
	commit, err := a.ws.reset(base)
	if err != nil {
		return attempt.Failf("workspace", "starting the attempt's worktree from %s's branch: %v", from, err)
	}
	a.ws.base, a.ws.from = commit, from
	err = a.r.publish(context.Background(), record.Event{RunID: a.r.id, At: time.Now().UTC(), Type: record.EvWorktree, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number,
		Data: record.WorktreeData{Branch: a.ws.branch, Base: commit, From: from, Path: a.ws.path}})
	if err != nil {
		return attempt.Failf("internal", "recording the attempt's worktree: %v", err)
	}
	return nil
}

// commitWorkspace commits what a successful attempt left uncommitted on its
// branch, records the commit and adds the branch and commit to its outputs.
func (a *attemptRun) commitWorkspace(outputs map[string]any) (map[string]any, *attempt.Failure) {
	ws := a.ws
	commit, err := ws.commit(a.r.id, a.Cue.ID, a.Agent.ID, a.Number)
	if err != nil {
		return outputs, attempt.Failf("workspace", "committing the attempt's work on %s: %v", ws.branch, err)
	}
	err = a.r.publish(context.Background(), record.Event{RunID: a.r.id, At: time.Now().UTC(), Type: record.EvWorktree, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number,
		Data: record.WorktreeData{Branch: ws.branch, Base: ws.base, From: ws.from, Path: ws.path, Commit: commit}})
	if err != nil {
		return outputs, attempt.Failf("internal", "recording the attempt's commit: %v", err)
	}
	with := make(map[string]any, len(outputs)+2)
	for k, v := range outputs {
		with[k] = v
	}
	with[OutputWorktreeBranch], with[OutputWorktreeCommit] = ws.branch, commit
	return with, nil
}

// removeWorktrees removes the run's worktrees as it ends (the branches stay).
func (r *run) removeWorktrees() {
	if r.host.worktrees == nil {
		return
	}
	for _, err := range r.host.worktrees.removeAll() {
		_ = r.publish(context.Background(), record.Event{RunID: r.id, At: time.Now().UTC(), Type: record.EvNote, Reason: "removing a worktree: " + err.Error()})
	}
}
