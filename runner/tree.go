package runner

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// node is one agent's task in the run's task tree. A root is a cue's target
// agent; its parent is the person running orch. A child is the receiver of
// a handoff or a spawned agent, started by the attempt that serves its
// parent. Questions bubble up the tree, messages go between siblings (nodes
// with the same parent), and a node's children end with it.
type node struct {
	id     string // the task id: the cue id for a root, parent's id + "/" + n for a child
	parent *node  // nil for a root
	agent  *spec.Agent
	kind   string   // "" for a root, "handoff" or "spawn"
	depth  int      // 0 for a root
	chain  []string // agent ids from the root to this node

	// guarded by tree.mu
	att   *attempt // the attempt serving the node now; nil between attempts
	ended string   // how the node ended ("completed", "failed", "stopped"); "" while it may still work
}

// tree registers the run's nodes: for finding siblings, numbering children
// and answering "is it still working".
type tree struct {
	mu    sync.Mutex
	next  map[string]int     // last child number used, by parent task id
	nodes map[string][]*node // by task id (a cue with two agents has two roots)
	kids  map[*node][]*node  // children by parent; roots under nil
}

func newTree() *tree {
	return &tree{next: map[string]int{}, nodes: map[string][]*node{}, kids: map[*node][]*node{}}
}

// continueNumbering makes children of a resumed run get fresh ids: the task
// ids the run recorded before are never reused.
func (t *tree) continueNumbering(ids []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		i := strings.LastIndexByte(id, '/')
		if i < 0 {
			continue
		}
		if n, err := strconv.Atoi(id[i+1:]); err == nil && n > t.next[id[:i]] {
			t.next[id[:i]] = n
		}
	}
}

// root returns the node of a cue's target agent, creating it at its first
// attempt; a retry or a fallback serves the same node.
func (t *tree) root(cueID string, agent *spec.Agent) *node {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range t.nodes[cueID] {
		if n.parent == nil && n.agent == agent {
			return n
		}
	}
	n := &node{id: cueID, agent: agent, chain: []string{agent.ID}}
	t.add(n)
	return n
}

// child creates a child node of parent for agent.
func (t *tree) child(parent *node, agent *spec.Agent, kind string) *node {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next[parent.id]++
	n := &node{id: fmt.Sprintf("%s/%d", parent.id, t.next[parent.id]), parent: parent, agent: agent, kind: kind,
		depth: parent.depth + 1, chain: append(append([]string(nil), parent.chain...), agent.ID)}
	t.add(n)
	return n
}

func (t *tree) add(n *node) {
	t.nodes[n.id] = append(t.nodes[n.id], n)
	t.kids[n.parent] = append(t.kids[n.parent], n)
}

// serve records that a serves its node now: a first attempt, or a retry.
func (t *tree) serve(n *node, a *attempt) {
	t.mu.Lock()
	n.att, n.ended = a, ""
	t.mu.Unlock()
}

// end records how a node ended: it receives nothing more.
func (t *tree) end(n *node, how string) {
	t.mu.Lock()
	n.att, n.ended = nil, how
	t.mu.Unlock()
}

// working returns the attempt of n that is in GO, or nil, with why not.
func (t *tree) working(n *node) (*attempt, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case n.ended != "":
		return nil, fmt.Sprintf("%s ended (task %s %s)", n.agent.ID, n.id, n.ended)
	case n.att == nil || !n.att.inGo.Load():
		return nil, fmt.Sprintf("%s is not working now (task %s has no attempt in GO)", n.agent.ID, n.id)
	case !speaks(n.agent):
		return nil, fmt.Sprintf("%s is a plain process (protocol none): it cannot receive messages", n.agent.ID)
	}
	return n.att, ""
}

// sibling finds the node a message from `from` to `to` is for: a node with
// the same parent whose task id or agent is to. Among several, the one
// working now; if several work, the sender must name the task id.
func (t *tree) sibling(from *node, to string) (*node, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var matches, working []*node
	var names []string
	for _, n := range t.kids[from.parent] {
		if n == from {
			continue
		}
		names = append(names, n.id+" ("+n.agent.ID+")")
		if n.id == to || n.agent.ID == to {
			matches = append(matches, n)
			if n.ended == "" && n.att != nil {
				working = append(working, n)
			}
		}
	}
	switch {
	case len(working) == 1:
		return working[0], ""
	case len(working) > 1:
		ids := make([]string, len(working))
		for i, n := range working {
			ids[i] = n.id + " (" + n.agent.ID + ")"
		}
		return nil, fmt.Sprintf("%q matches %d working siblings (%s): name one by its task id", to, len(working), strings.Join(ids, ", "))
	case len(matches) > 0:
		return matches[len(matches)-1], "" // not working: the caller says why
	case len(names) == 0:
		return nil, fmt.Sprintf("no sibling named %q: task %s has no siblings", to, from.id)
	}
	return nil, fmt.Sprintf("no sibling named %q (siblings: %s)", to, strings.Join(names, ", "))
}

// nearestWorkingAncestor is the closest ancestor of n that can take a
// question: a protocol agent in GO. Nil means the person.
func (t *tree) nearestWorkingAncestor(n *node) *attempt {
	for p := n.parent; p != nil; p = p.parent {
		if a, why := t.working(p); why == "" {
			return a
		}
	}
	return nil
}

// toolsOf returns an agent's effective tools.
func toolsOf(p *planner.Plan, agent string) planner.AgentTools {
	for _, t := range p.Tools {
		if t.Agent == agent {
			return t
		}
	}
	return planner.AgentTools{Agent: agent}
}
