package temporal

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// QueryNeeds asks the workflow which of some agents (its argument) its run
// may still start or carry on attempts of: a worker closes a run's jsonl
// and ACP processes (pool_watch.go) once none of their agents is needed,
// instead of keeping them until its idle close. A query adds nothing to
// the history.
const QueryNeeds = "orch.needs"

// Needs is the answer to QueryNeeds.
type Needs struct {
	Ended bool // the run is over: no agent is needed
	// Agents are those asked about that a cue not over yet may run (as
	// its agent or a fallback, or as the resolver of its merge or of the
	// run's result), sorted.
	Agents []string
}

// registerNeeds answers QueryNeeds from the scheduler core's cue states.
func (w *wf) registerNeeds() { _ = workflow.SetQueryHandler(w.ctx, QueryNeeds, w.needs) }

func (w *wf) needs(asked []string) (Needs, error) {
	if w.log.done || w.core == nil {
		return Needs{Ended: w.log.done}, nil
	}
	seen := map[string]bool{}
	for pos, c := range w.plan.Order {
		if st, _ := w.core.State(pos); st.Final() {
			continue
		}
		for _, id := range c.Agents {
			addWithFallbacks(w.plan, id, seen)
		}
		if w.worktreeCue(c) { // its merge, to come, may need its resolver
			w.addResolver(spec.MergeOf(w.plan.Cuelist, c.Cue), seen)
		}
	}
	if w.worktrees() { // the run's result, to come or being made, may need its resolver
		w.addResolver(spec.MergeOf(w.plan.Cuelist, nil), seen)
	}
	n := Needs{Agents: []string{}}
	for _, id := range asked {
		if seen[id] && !slices.Contains(n.Agents, id) {
			n.Agents = append(n.Agents, id)
		}
	}
	slices.Sort(n.Agents)
	return n, nil
}

// addWithFallbacks adds an agent and those that may stand in for it.
func addWithFallbacks(p *planner.Plan, id string, seen map[string]bool) {
	if seen[id] {
		return
	}
	seen[id] = true
	if a := p.Agents[id]; a != nil {
		for _, fb := range a.Fallback {
			addWithFallbacks(p, fb, seen)
		}
	}
}

// worktreeCue reports whether one of cue c's agents works in a worktree
// (only such a cue merges).
func (w *wf) worktreeCue(c *planner.Cue) bool {
	for _, id := range c.Agents {
		if a := w.plan.Agents[id]; a != nil && a.Workspace == "worktree" {
			return true
		}
	}
	return false
}

// addResolver adds the resolver of merge policy m (on_conflict: agent), and
// its fallbacks.
func (w *wf) addResolver(m *spec.Merge, seen map[string]bool) {
	if m.Policy() == spec.MergeAgent && m.Agent != "" {
		addWithFallbacks(w.plan, m.Agent, seen)
	}
}
