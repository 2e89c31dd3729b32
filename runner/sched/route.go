package sched

import (
	"fmt"
	"strings"
)

// Route finds the task a message from `from` to `to` is for, anywhere in the
// run's tree, and the task it goes through (via):
//   - a sibling (same parent) first: delivered directly, via is the parent,
//     which only looks on (REQ-COM-002);
//   - else any other task whose task id or agent is to, routed through the
//     nearest common ancestor of the two (REQ-COM-008). Tasks of different
//     cues have no common ancestor task: theirs is the person running orch,
//     the parent of every cue's task (via is NoNode). When one of the two
//     is an ancestor of the other, via is that one: nobody stands between.
//
// Among several tasks that match, the one in GO; if several are, the sender
// must name the task id. A task found that is not at work is returned (the
// caller asks Working why). found is false when no task matches: why says
// so when the name is ambiguous, else the caller says what it knows of the
// name (a cue or agent that has not started yet).
func (t *Tasks[W]) Route(from NodeID, to string) (target, via NodeID, found bool, why string) {
	if n, ambiguous, why := t.sibling(from, to); n != NoNode {
		return n, t.nodes[from].Parent, true, ""
	} else if ambiguous {
		return NoNode, NoNode, false, why
	}
	var zero W
	var matches, working []*node[W]
	for _, n := range t.nodes {
		if n.Node == from || (n.ID != to && n.Agent.ID != to) {
			continue
		}
		matches = append(matches, n)
		if n.ended == "" && n.serving != zero {
			working = append(working, n)
		}
	}
	switch {
	case len(working) == 1:
		return working[0].Node, t.commonAncestor(from, working[0].Node), true, ""
	case len(working) > 1:
		ids := make([]string, len(working))
		for i, n := range working {
			ids[i] = n.ID + " (" + n.Agent.ID + ")"
		}
		return NoNode, NoNode, false, fmt.Sprintf("%q matches %d working tasks (%s): name one by its task id", to, len(working), strings.Join(ids, ", "))
	case len(matches) > 0:
		n := matches[len(matches)-1]
		return n.Node, t.commonAncestor(from, n.Node), true, ""
	}
	return NoNode, NoNode, false, ""
}

// commonAncestor is the nearest task that is, or is above, both a and b;
// NoNode (the person) when they are in different cues' trees.
func (t *Tasks[W]) commonAncestor(a, b NodeID) NodeID {
	mine := map[NodeID]bool{}
	for p := a; p != NoNode; p = t.nodes[p].Parent {
		mine[p] = true
	}
	for p := b; p != NoNode; p = t.nodes[p].Parent {
		if mine[p] {
			return p
		}
	}
	return NoNode
}
