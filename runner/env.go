package runner

import (
	"context"
	"os"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/record"
)

// task builds attempt a's task (PlanTask) with the attempt's place in the
// task tree and its workspace; the blackboard snapshot comes later.
func (r *run) task(pos int, a *attemptRun) *attempt.Task {
	t := attempt.PlanTask(r.plan, r.core, pos, r.opts.Inputs, a.Agent.ID)
	t.RunID, t.Attempt, t.TaskID, t.Workspace = r.id, a.Number, a.node.id, a.worktreePath()
	return t
}

// agentEnv is the environment of attempt a's processes (see attemptRun.Env).
func (r *run) agentEnv(a *attemptRun) []string {
	env := append([]string(nil), r.baseEnv(a.Agent.ID, a.Agent.Env)...)
	env = append(env, attempt.OrchVars(r.id, a.Cue.ID, a.Agent.ID, a.Number, r.opts.DBPath, r.opts.ProjectRoot)...)
	if v := r.redact.SecretsEnv(); v != "" {
		env = append(env, v) // for orch bb set inside the agent
	}
	if r.opts.AgentEnv != nil {
		env = append(env, r.opts.AgentEnv(a.Cue.ID, a.Agent.ID, a.Number)...)
	}
	return env
}

// blackboard reads the run's board for a task's snapshot (see hostServices).
func (r *run) blackboard() (map[string]record.BlackboardEntry, error) {
	return r.rec.Blackboard(context.Background(), r.id)
}

// baseEnv is orch's environment plus the agent's env, built once per agent.
func (r *run) baseEnv(agent string, vars map[string]any) []string {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	if env, ok := r.envCache[agent]; ok {
		return env
	}
	env := attempt.Environ(os.Environ(), vars)
	if r.envCache == nil {
		r.envCache = map[string][]string{}
	}
	r.envCache[agent] = env
	return env
}
