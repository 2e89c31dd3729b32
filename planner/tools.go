package planner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/orch-cli/orch/spec"
)

// ProtocolTools are orch's own actions an agent may be allowed or denied, as
// tools: handing work off, spawning a child, the blackboard, memory, and
// listing the agents at work (agents.list).
var ProtocolTools = []string{"blackboard", "handoff", "memory", "spawn", "agents"}

// DefaultMaxHandoffDepth bounds handoff chains when guardrails say nothing.
const DefaultMaxHandoffDepth = 3

// AgentTools is an agent's effective tool set at each handoff depth.
type AgentTools struct {
	Agent   string
	ByDepth [][]string // ByDepth[d]: tools at depth d, sorted; up to max_handoff_depth
}

// At returns the tools at depth d (the deepest level for deeper d).
func (t AgentTools) At(d int) []string {
	if len(t.ByDepth) == 0 {
		return nil
	}
	return t.ByDepth[min(max(d, 0), len(t.ByDepth)-1)]
}

// Allows reports whether tool is in the effective set at depth d.
func (t AgentTools) Allows(tool string, d int) bool {
	for _, x := range t.At(d) {
		if x == tool {
			return true
		}
	}
	return false
}

// ToolsOf is an agent's effective tools in the plan (none when the plan
// does not name it).
func (p *Plan) ToolsOf(agent string) AgentTools {
	for _, t := range p.Tools {
		if t.Agent == agent {
			return t
		}
	}
	return AgentTools{Agent: agent}
}

// MaxHandoffDepth is the cuelist's guardrail or the default.
func MaxHandoffDepth(cl *spec.Cuelist) int {
	if d := cl.Guardrails.MaxHandoffDepth; d != nil {
		// The schema refuses more than MaxHandoffDepthLimit: a larger value
		// reaches here only with that error reported, and must not cost a
		// tool set per level.
		return min(*d, MaxHandoffDepthLimit)
	}
	return DefaultMaxHandoffDepth
}

// MaxHandoffDepthLimit is the largest max_handoff_depth (the schema's
// maximum): a chain never holds an agent twice, so no real chain nears it.
const MaxHandoffDepthLimit = 100

// tools computes each agent's effective tool policy (docs/design.md#tool-policy): start from
// every known tool, or the agent's allow list; remove the cuelist's global
// deny, the agent's deny, then what deny_at_depth removes from each depth on.
// Each layer narrows, never widens. Unknown group:NAME entries are reported.
func (b *builder) tools(p *Plan) []AgentTools {
	cl := p.Cuelist
	universe := map[string]bool{}
	for _, t := range ProtocolTools {
		universe[t] = true
	}
	for _, members := range cl.ToolGroups {
		for _, t := range members {
			universe[t] = true
		}
	}
	addNames := func(list []string) {
		for _, t := range list {
			if !strings.HasPrefix(t, "group:") {
				universe[t] = true
			}
		}
	}
	for _, a := range p.Agents {
		if a.Tools != nil {
			addNames(a.Tools.Allow)
			addNames(a.Tools.Deny)
		}
	}
	expand := func(o spec.Origin, ptr string, list []string) map[string]bool {
		out := map[string]bool{}
		for i, t := range list {
			name, isGroup := strings.CutPrefix(t, "group:")
			if !isGroup {
				out[t] = true
				continue
			}
			members, ok := cl.ToolGroups[name]
			if !ok {
				b.diags.Add(spec.Error, o.At(ptr+spec.Pointer(i)), o.Ptr+ptr+spec.Pointer(i), "unknown-tool-group",
					"unknown tool group %q (declare it under the cuelist's tool_groups)", name)
				continue
			}
			for _, m := range members {
				out[m] = true
			}
		}
		return out
	}
	var globalDeny map[string]bool
	if cl.Tools != nil {
		globalDeny = expand(cl.Origin, "/tools/deny", cl.Tools.Deny)
	}
	depthKeys := sortedDepths(cl.Guardrails.DenyAtDepth)
	denyFrom := map[int]map[string]bool{}
	for _, k := range depthKeys {
		d, _ := strconv.Atoi(k)
		denyFrom[d] = expand(cl.Origin, "/guardrails/deny_at_depth/"+k, cl.Guardrails.DenyAtDepth[k])
	}
	maxDepth := MaxHandoffDepth(cl)
	ids := make([]string, 0, len(p.Agents))
	for id := range p.Agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]AgentTools, 0, len(ids))
	for _, id := range ids {
		a := p.Agents[id]
		set := map[string]bool{}
		if a.Tools != nil && a.Tools.Allow != nil {
			set = expand(a.Origin, "/tools/allow", a.Tools.Allow)
		} else {
			for t := range universe {
				set[t] = true
			}
		}
		remove(set, globalDeny)
		if a.Tools != nil {
			remove(set, expand(a.Origin, "/tools/deny", a.Tools.Deny))
		}
		for t := range NotOffered(p, a) {
			delete(set, t)
		}
		at := AgentTools{Agent: id}
		for d := 0; d <= maxDepth; d++ {
			remove(set, denyFrom[d])
			at.ByDepth = append(at.ByDepth, sortedSet(set))
		}
		out = append(out, at)
	}
	return out
}

// NotOffered is what an agent is not offered because it could never
// succeed, with why (docs/design.md#seeing-each-other: multi-agent tools only where there are
// several agents): handoff and spawn without a handoff_to to name a
// receiver; and in a cuelist of a single cue with a single agent no
// blackboard, handoff, spawn or agents list, as no other task is ever at
// work to share with, except the blackboard when the cue's conditions read
// it. One agent serving several cues is several tasks: they may share the
// board (a cue writes what a later one reads) and run side by side.
func NotOffered(p *Plan, a *spec.Agent) map[string]string {
	out := map[string]string{}
	if len(a.HandoffTo) == 0 {
		why := fmt.Sprintf("agent %s has no handoff_to, so there is no agent it could hand work to or spawn", a.ID)
		out["handoff"], out["spawn"] = why, why
	}
	if len(p.Agents) > 1 || len(p.Cues) > 1 {
		return out
	}
	single := fmt.Sprintf("cuelist %s has a single cue and a single agent (%s): no other task is ever at work", p.Cuelist.ID, a.ID)
	out["agents"], out["handoff"], out["spawn"] = single, single, single
	readsBoard := false
	for _, c := range p.Cues {
		readsBoard = readsBoard || len(c.Conditions) > 0
	}
	if !readsBoard {
		out["blackboard"] = single + " and its conditions do not read the blackboard"
	}
	return out
}

func remove(set, deny map[string]bool) {
	for t := range deny {
		delete(set, t)
	}
}

func sortedSet(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func sortedDepths(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, _ := strconv.Atoi(keys[i])
		c, _ := strconv.Atoi(keys[j])
		return a < c
	})
	return keys
}
