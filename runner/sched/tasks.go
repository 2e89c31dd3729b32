package sched

import (
	"fmt"
	"strings"

	"github.com/orch-cli/orch/spec"
)

// Tasks is the run's task tree and its open questions: who works on what
// under whom, who a question goes to, when it is due, and how it closed.
// Like Core it belongs to the runner's loop, does no I/O and reads no
// clock. W is the runner's handle on the attempt serving a task (compared,
// never looked into, except through Working).
//
// A root is a cue's target agent; its parent is the person running orch. A
// child is the receiver of a handoff or a spawned agent. Questions bubble
// up the tree, messages go between siblings (tasks with the same parent),
// and a task's children end with it.
type Tasks[W comparable] struct {
	cfg   TasksConfig[W]
	nodes []*node[W]
	next  map[string]int      // last child number used, by parent task id
	byID  map[string][]NodeID // by task id (a cue with two agents has two roots)
	kids  map[NodeID][]NodeID // children by parent; roots under NoNode

	open  map[string]*question[W]
	asked int // questions asked in the run so far (q1, q2, ...)
}

// TasksConfig is what Tasks needs from its runner.
type TasksConfig[W comparable] struct {
	// Working reports whether an attempt is in GO now (it may receive
	// messages and questions).
	Working func(W) bool
	// Speaks reports whether an agent speaks a protocol (a plain process
	// receives nothing).
	Speaks func(*spec.Agent) bool
}

// NodeID names a task in the tree; NoNode is the person above the roots.
type NodeID int

const NoNode NodeID = -1

// Task is what never changes of a task once it exists.
type Task struct {
	Node   NodeID
	ID     string // the cue id for a root, parent's id + "/" + n for a child
	Parent NodeID // NoNode for a root
	Agent  *spec.Agent
	Kind   string   // "" for a root, "handoff" or "spawn"
	Depth  int      // 0 for a root
	Chain  []string // agent ids from the root to this task
}

type node[W comparable] struct {
	Task
	serving W      // the attempt serving it now; zero between attempts
	ended   string // how it ended ("completed", "failed", "stopped"); "" while it may still work
}

// NewTasks returns an empty tree.
func NewTasks[W comparable](cfg TasksConfig[W]) *Tasks[W] {
	return &Tasks[W]{cfg: cfg, next: map[string]int{}, byID: map[string][]NodeID{}, kids: map[NodeID][]NodeID{},
		open: map[string]*question[W]{}}
}

// Continue makes a resumed run go on numbering where its record stopped:
// children get task ids never used before (ids: the recorded child task
// ids), questions ids after the asked ones.
func (t *Tasks[W]) Continue(ids []string, asked int) {
	t.asked = asked
	for _, id := range ids {
		i := strings.LastIndexByte(id, '/')
		if i < 0 {
			continue
		}
		if n, ok := atoi(id[i+1:]); ok && n > t.next[id[:i]] {
			t.next[id[:i]] = n
		}
	}
}

func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}

// Asked is how many questions the run has asked.
func (t *Tasks[W]) Asked() int { return t.asked }

// Root returns the task of a cue's target agent, created at its first
// attempt; a retry or a fallback serves the same task.
func (t *Tasks[W]) Root(cue string, agent *spec.Agent) Task {
	for _, id := range t.byID[cue] {
		if n := t.nodes[id]; n.Parent == NoNode && n.Agent == agent {
			return n.Task
		}
	}
	return t.add(Task{ID: cue, Parent: NoNode, Agent: agent, Chain: []string{agent.ID}})
}

// Child creates a child task of parent for agent.
func (t *Tasks[W]) Child(parent NodeID, agent *spec.Agent, kind string) Task {
	p := t.nodes[parent]
	t.next[p.ID]++
	return t.add(Task{ID: fmt.Sprintf("%s/%d", p.ID, t.next[p.ID]), Parent: parent, Agent: agent, Kind: kind,
		Depth: p.Depth + 1, Chain: append(append([]string(nil), p.Chain...), agent.ID)})
}

func (t *Tasks[W]) add(task Task) Task {
	task.Node = NodeID(len(t.nodes))
	t.nodes = append(t.nodes, &node[W]{Task: task})
	t.byID[task.ID] = append(t.byID[task.ID], task.Node)
	t.kids[task.Parent] = append(t.kids[task.Parent], task.Node)
	return task
}

// Serve records that w serves the task now: a first attempt, or a retry.
func (t *Tasks[W]) Serve(id NodeID, w W) {
	n := t.nodes[id]
	n.serving, n.ended = w, ""
}

// End records how a task ended: it receives nothing more.
func (t *Tasks[W]) End(id NodeID, how string) {
	var zero W
	n := t.nodes[id]
	n.serving, n.ended = zero, how
}

// Working returns the attempt of the task that is in GO, or, with the zero
// W, why there is none.
func (t *Tasks[W]) Working(id NodeID) (W, string) {
	var zero W
	n := t.nodes[id]
	switch {
	case n.ended != "":
		return zero, fmt.Sprintf("%s ended (task %s %s)", n.Agent.ID, n.ID, n.ended)
	case n.serving == zero:
		return zero, fmt.Sprintf("%s is not working now (task %s has no attempt in GO)", n.Agent.ID, n.ID)
	case !t.cfg.Working(n.serving):
		return zero, fmt.Sprintf("%s has not started: task %s is not in GO yet", n.Agent.ID, n.ID)
	case !t.cfg.Speaks(n.Agent):
		return zero, fmt.Sprintf("%s is a plain process (protocol none): it cannot receive messages", n.Agent.ID)
	}
	return n.serving, ""
}

// Sibling finds the task a message from `from` to `to` is for: a task with
// the same parent whose task id or agent is to. Among several, the one
// served now; if several are, the sender must name the task id. NoNode
// comes with why.
func (t *Tasks[W]) Sibling(from NodeID, to string) (NodeID, string) {
	n, _, why := t.sibling(from, to)
	return n, why
}

// sibling is Sibling, saying also whether several working siblings match.
func (t *Tasks[W]) sibling(from NodeID, to string) (n NodeID, ambiguous bool, why string) {
	var zero W
	f := t.nodes[from]
	var matches, working []*node[W]
	var names []string
	for _, id := range t.kids[f.Parent] {
		n := t.nodes[id]
		if id == from {
			continue
		}
		names = append(names, n.ID+" ("+n.Agent.ID+")")
		if n.ID == to || n.Agent.ID == to {
			matches = append(matches, n)
			if n.ended == "" && n.serving != zero {
				working = append(working, n)
			}
		}
	}
	switch {
	case len(working) == 1:
		return working[0].Node, false, ""
	case len(working) > 1:
		ids := make([]string, len(working))
		for i, n := range working {
			ids[i] = n.ID + " (" + n.Agent.ID + ")"
		}
		return NoNode, true, fmt.Sprintf("%q matches %d working siblings (%s): name one by its task id", to, len(working), strings.Join(ids, ", "))
	case len(matches) > 0:
		return matches[len(matches)-1].Node, false, "" // not working: the caller asks Working why
	case len(names) == 0:
		return NoNode, false, fmt.Sprintf("no sibling named %q: task %s has no siblings", to, f.ID)
	}
	return NoNode, false, fmt.Sprintf("no sibling named %q (siblings: %s)", to, strings.Join(names, ", "))
}

// nearestWorkingAncestor is the closest ancestor of a task that can take a
// question: a protocol agent in GO. The zero W means the person.
func (t *Tasks[W]) nearestWorkingAncestor(id NodeID) (W, NodeID) {
	for p := t.nodes[id].Parent; p != NoNode; p = t.nodes[p].Parent {
		if w, why := t.Working(p); why == "" {
			return w, p
		}
	}
	var zero W
	return zero, NoNode
}

// InGo returns the attempts of the tasks in GO now, in the order the tasks
// were created (agents.list, broadcasts, status requests).
func (t *Tasks[W]) InGo() []W {
	var zero W
	var out []W
	for _, n := range t.nodes {
		if n.ended == "" && n.serving != zero && t.cfg.Working(n.serving) {
			out = append(out, n.serving)
		}
	}
	return out
}
