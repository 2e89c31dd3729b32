package sched

// The worktree branches a completed cue passes on to a merge: its agent's,
// each of its agents' when several worked in worktrees, or its items'
// (a fan-out). They travel in the cue's outputs, so a resumed run (Restore)
// or one continued as new (Carried) merges them as the run before did.

// The outputs of a cue whose several agents worked in worktrees: each
// agent's branch and commit, in the order the cue lists its agents (null
// for one that left no branch). worktree_branch and worktree_commit stay
// the last agent's, as before.
const (
	OutputWorktreeBranches = "worktree_branches"
	OutputWorktreeCommits  = "worktree_commits"
)

// agentBranches adds the branches of cue cr's agents to its outputs when
// more than one of them left a branch.
func (c *Core) agentBranches(cr *cue) {
	if c.cfg.LastBranchOnly || len(cr.targets) < 2 {
		return
	}
	branches, commits := make([]any, len(cr.targets)), make([]any, len(cr.targets))
	n := 0
	for i, t := range cr.targets {
		if b, _ := t.outputs[OutputWorktreeBranch].(string); b != "" {
			branches[i], commits[i] = b, t.outputs[OutputWorktreeCommit]
			n++
		}
	}
	if n > 1 {
		cr.outputs[OutputWorktreeBranches], cr.outputs[OutputWorktreeCommits] = branches, commits
	}
}

// branchesOf is the worktree branches a completed cue's outputs name: its
// agents' (worktree_branches) or its agent's (worktree_branch); for a
// fan-out (its outputs are lists, in item order) each item's, the same way.
func branchesOf(cr *cue) []MergeSource {
	if list, ok := cr.outputs[OutputWorktreeBranch].([]any); ok { // a fan-out
		commits, _ := cr.outputs[OutputWorktreeCommit].([]any)
		agentsOf, _ := cr.outputs[OutputWorktreeBranches].([]any)
		agentCommits, _ := cr.outputs[OutputWorktreeCommits].([]any)
		var out []MergeSource
		for i, v := range list {
			task := itemTask(cr, i)
			if srcs := agentSources(cr, task, at(agentsOf, i), at(agentCommits, i)); srcs != nil {
				out = append(out, srcs...)
				continue
			}
			if s := source(task, v, at(commits, i)); s != nil {
				out = append(out, *s)
			}
		}
		return out
	}
	if srcs := agentSources(cr, cr.spec.ID, cr.outputs[OutputWorktreeBranches], cr.outputs[OutputWorktreeCommits]); srcs != nil {
		return srcs
	}
	if s := source(cr.spec.ID, cr.outputs[OutputWorktreeBranch], cr.outputs[OutputWorktreeCommit]); s != nil {
		return []MergeSource{*s}
	}
	return nil
}

// agentSources is the branches of task's agents (a list, in the order cue
// cr lists them), named TASK/AGENT; nil when there is no such list.
func agentSources(cr *cue, task string, branches, commits any) []MergeSource {
	list, ok := branches.([]any)
	if !ok {
		return nil
	}
	cl, _ := commits.([]any)
	out := []MergeSource{}
	for i, b := range list {
		name := task
		if i < len(cr.spec.Agents) {
			name += "/" + cr.spec.Agents[i]
		}
		if s := source(name, b, at(cl, i)); s != nil {
			out = append(out, *s)
		}
	}
	return out
}

// source is task's branch b at commit, or nil when b names none.
func source(task string, b, commit any) *MergeSource {
	branch, _ := b.(string)
	if branch == "" {
		return nil
	}
	c, _ := commit.(string)
	return &MergeSource{Task: task, Branch: branch, Commit: c}
}

func at(list []any, i int) any {
	if i < len(list) {
		return list[i]
	}
	return nil
}
