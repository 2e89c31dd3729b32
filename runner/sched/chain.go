package sched

import (
	"fmt"
	"strings"
)

// ChainProblems applies the guardrails to a child (what: "handoff" or
// "spawn") of agent to under a task at depth, whose chain of agents from
// its root is chain: the child's depth within maxDepth
// (max_handoff_depth), and no agent twice in the chain. Both engines check
// so.
func ChainProblems(maxDepth, depth int, chain []string, to, what string) []string {
	var out []string
	if depth+1 > maxDepth {
		out = append(out, fmt.Sprintf("the %s would be at depth %d, beyond max_handoff_depth %d (chain: %s -> %s)",
			what, depth+1, maxDepth, strings.Join(chain, " -> "), to))
	}
	for i, a := range chain {
		if a == to {
			out = append(out, fmt.Sprintf("%s cycle: %s -> %s (agent %s is already in the chain)",
				what, strings.Join(chain[i:], " -> "), to, to))
			break
		}
	}
	return out
}
