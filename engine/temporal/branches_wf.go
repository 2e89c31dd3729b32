package temporal

import "go.temporal.io/sdk/workflow"

// changeAgentBranches: a cue whose several agents work in worktrees passes
// on every agent's branch to the merge downstream and to the run's result
// (before: its last agent's only, sched.Config.LastBranchOnly).
const changeAgentBranches = "orch-agent-branches"

// lastBranchOnly reports whether the run keeps the behaviour of runs
// started before changeAgentBranches. Only a plan with worktree agents and
// a cue of several agents reads the version (no other can tell).
func (w *wf) lastBranchOnly() bool {
	if !w.worktrees() {
		return false
	}
	for _, c := range w.plan.Order {
		if len(c.Agents) > 1 {
			return workflow.GetVersion(w.ctx, changeAgentBranches, workflow.DefaultVersion, 1) == workflow.DefaultVersion
		}
	}
	return false
}
