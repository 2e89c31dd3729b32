package runner

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orch-cli/orch/planner"
)

// Outputs a worktree agent's successful attempt adds to its own.
const (
	OutputWorktreeBranch = "worktree_branch"
	OutputWorktreeCommit = "worktree_commit"
)

// worktreeBase is where a worktree attempt at cue c starts: the commit (else
// the branch) of the first dependency, in plan order, whose agent worked in
// a worktree; "" (the run's HEAD) when none did. Work flows downstream; the
// other dependencies' branches are not merged, and a note says so.
func (r *run) worktreeBase(c *planner.Cue) (base, from string) {
	type dep struct {
		pos          int
		id, ref, brn string
	}
	var deps []dep
	for _, d := range c.Deps {
		pos := r.core.Pos(d.ID)
		out := r.core.Outputs(pos)
		branch, _ := out[OutputWorktreeBranch].(string)
		if branch == "" {
			continue
		}
		ref, _ := out[OutputWorktreeCommit].(string)
		if ref == "" {
			ref = branch
		}
		deps = append(deps, dep{pos: pos, id: d.ID, ref: ref, brn: branch})
	}
	if len(deps) == 0 {
		return "", ""
	}
	sort.Slice(deps, func(i, j int) bool { return deps[i].pos < deps[j].pos })
	if len(deps) > 1 {
		var others []string
		for _, d := range deps[1:] {
			others = append(others, d.id+" ("+d.brn+")")
		}
		r.emit(Event{Type: EvNote, Cue: c.ID, Reason: fmt.Sprintf("%s's worktree starts from %s's branch %s, the first of its dependencies in plan order that used one; %s not merged in",
			c.ID, deps[0].id, deps[0].brn, strings.Join(others, ", "))})
	}
	return deps[0].ref, deps[0].id
}

// worktreePath is where the attempt's worktree is ("" for an agent without
// one), known before it is created.
func (a *attempt) worktreePath() string {
	if a.agent.Workspace != WorkspaceWorktree || a.r.worktrees == nil {
		return ""
	}
	return a.r.worktrees.pathFor(a)
}

// openWorkspace creates a worktree agent's attempt's worktree, before its
// agent does anything, and records it.
func (a *attempt) openWorkspace() *failure {
	if a.agent.Workspace != WorkspaceWorktree {
		return nil
	}
	if a.r.worktrees == nil {
		return failf("workspace", "agent %s has workspace: worktree, but the run has no git repository for it (only the agents its cues name were looked at when it started)", a.agent.ID)
	}
	ws, err := a.r.worktrees.add(a)
	if err != nil {
		return failf("workspace", "creating the attempt's worktree: %v", err)
	}
	a.ws = ws
	err = a.r.publish(context.Background(), Event{RunID: a.r.id, At: time.Now().UTC(), Type: EvWorktree, Cue: a.cue.ID, Agent: a.agent.ID, Attempt: a.number,
		Data: WorktreeData{Branch: ws.branch, Base: ws.base, From: ws.from, Path: ws.path}})
	if err != nil {
		return failf("internal", "recording the attempt's worktree: %v", err)
	}
	return nil
}

// moveWorkspace moves the attempt's worktree and branch to base, the commit
// of dependency cue from, at GO: the worktree was created at WARNING, which
// may come before the dependencies complete (what it holds then is HEAD's,
// and what prepare left in tracked files is reset).
func (a *attempt) moveWorkspace(base, from string) *failure {
	if a.ws == nil {
		return nil
	}
	commit, err := a.ws.reset(base)
	if err != nil {
		return failf("workspace", "starting the attempt's worktree from %s's branch: %v", from, err)
	}
	a.ws.base, a.ws.from = commit, from
	err = a.r.publish(context.Background(), Event{RunID: a.r.id, At: time.Now().UTC(), Type: EvWorktree, Cue: a.cue.ID, Agent: a.agent.ID, Attempt: a.number,
		Data: WorktreeData{Branch: a.ws.branch, Base: commit, From: from, Path: a.ws.path}})
	if err != nil {
		return failf("internal", "recording the attempt's worktree: %v", err)
	}
	return nil
}

// commitWorkspace commits what a successful attempt left uncommitted on its
// branch, records the commit and adds the branch and commit to its outputs.
func (a *attempt) commitWorkspace(outputs map[string]any) (map[string]any, *failure) {
	ws := a.ws
	commit, err := ws.commit(a.r.id, a.cue.ID, a.agent.ID, a.number)
	if err != nil {
		return outputs, failf("workspace", "committing the attempt's work on %s: %v", ws.branch, err)
	}
	err = a.r.publish(context.Background(), Event{RunID: a.r.id, At: time.Now().UTC(), Type: EvWorktree, Cue: a.cue.ID, Agent: a.agent.ID, Attempt: a.number,
		Data: WorktreeData{Branch: ws.branch, Base: ws.base, From: ws.from, Path: ws.path, Commit: commit}})
	if err != nil {
		return outputs, failf("internal", "recording the attempt's commit: %v", err)
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
		_ = r.publish(context.Background(), Event{RunID: r.id, At: time.Now().UTC(), Type: EvNote, Reason: "removing a worktree: " + err.Error()})
	}
}
