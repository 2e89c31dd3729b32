package runner

import (
	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// node is what an attempt knows of the task it serves: the facts that never
// change once the task exists (its id, parent, depth, chain). Where the
// task is now (served, ended), its children and its questions are the
// loop's, in sched.Tasks: the hub asks the loop (requests.go).
type node struct {
	ref    sched.NodeID
	id     string // the task id: the cue id for a root, parent's id + "/" + n for a child
	parent *node  // nil for a root (its parent is the person)
	agent  *spec.Agent
	kind   string   // "" for a root, "handoff" or "spawn"
	depth  int      // 0 for a root
	chain  []string // agent ids from the root to this node
}

// nodeOf returns the node of a task, made once (the loop's).
func (r *run) nodeOf(t sched.Task, parent *node) *node {
	if n := r.nodes[t.Node]; n != nil {
		return n
	}
	n := &node{ref: t.Node, id: t.ID, parent: parent, agent: t.Agent, kind: t.Kind, depth: t.Depth, chain: t.Chain}
	r.nodes[t.Node] = n
	return n
}

func newTasks() *sched.Tasks[*attemptRun] {
	return sched.NewTasks(sched.TasksConfig[*attemptRun]{
		Working: func(a *attemptRun) bool { return a.inGo.Load() },
		// Every agent receives: a jsonl one on its stdin, the others through
		// their inbox (orch's MCP tools).
		Speaks: func(*spec.Agent) bool { return true },
	})
}

// toolsOf returns an agent's effective tools.
func toolsOf(p *planner.Plan, agent string) planner.AgentTools { return p.ToolsOf(agent) }
