package planner

import (
	"slices"
	"sort"
	"strings"

	"github.com/orch-cli/orch/spec"
)

// conditionDiags checks what each cue's conditions name (spec.OutputCondition):
//   - CUE.KEY must name a cue the cue depends on, directly or not (only then
//     has CUE completed, with its outputs, when the condition is checked), and
//     an output one of CUE's agents (or their fallbacks) provides, when
//     they declare what they provide (as for exports): errors;
//   - a blackboard key is written at run time by whoever may (an agent's
//     blackboard.write, orch bb set from any shell, a person), which
//     validation cannot know; it knows the exports, and which agents may not
//     write the board at all. So it warns only when it can tell: no cue
//     exports the key and no agent of the cuelist may write the board (only
//     a person could make the condition hold).
func conditionDiags(p *Plan, tools []AgentTools) spec.Diagnostics {
	var diags spec.Diagnostics
	isCue := func(id string) bool { return p.ByID[id] != nil }
	exported := map[string]bool{}
	for _, c := range p.Cues {
		for _, e := range c.Exports {
			exported[e] = true
		}
	}
	writers := boardWriters(p, tools)
	for _, c := range p.Cues {
		for i, cond := range c.Conditions {
			if spec.BuiltinCondition(cond) {
				continue
			}
			ptr := spec.Pointer("conditions", i)
			id, key, ok := spec.OutputCondition(cond, isCue)
			if !ok {
				if !exported[cond] && len(writers) == 0 {
					diags.Add(spec.Warning, c.At(ptr), c.Ptr+ptr, "condition-unwritten",
						"condition %q of cue %s: no cue exports blackboard key %q and no agent of cuelist %s may write the blackboard, so only a person can make it hold (orch bb set %s true)",
						cond, c.ID, cond, p.Cuelist.ID, cond)
				}
				continue
			}
			up := p.ByID[id]
			if up == c || !p.Reaches(up, c) {
				diags.Add(spec.Error, c.At(ptr), c.Ptr+ptr, "condition-not-upstream",
					"condition %q names an output of cue %s, which cue %s does not depend on (directly or not): its outputs are not known when %s starts (add %s to its dependencies)",
					cond, id, c.ID, c.ID, id)
				continue
			}
			provided, known := cueProvides(p, up)
			if known && len(provided) > 0 && !provided[key] { // an agent that declares nothing may output anything
				diags.Add(spec.Error, c.At(ptr), c.Ptr+ptr, "unknown-output",
					"condition %q names output %q of cue %s, which none of its agents provides (they provide %s)",
					cond, key, id, keyList(provided))
			}
		}
	}
	return diags
}

// cueProvides is what a cue's agents and their fallbacks provide; known is
// false when an agent is unknown (that error is reported elsewhere).
func cueProvides(p *Plan, c *Cue) (map[string]bool, bool) {
	out := map[string]bool{}
	for _, id := range c.Agents {
		a := p.Agents[id]
		if a == nil {
			return nil, false
		}
		for _, k := range a.Provides {
			out[k] = true
		}
		for _, fb := range a.Fallback {
			if f := p.Agents[fb]; f != nil {
				for _, k := range f.Provides {
					out[k] = true
				}
			}
		}
	}
	return out, true
}

// boardWriters are the agents of the plan that may write the blackboard: a
// protocol: jsonl agent whose tools allow it; any other agent runs
// processes or a coding agent that can run orch bb set.
func boardWriters(p *Plan, tools []AgentTools) []string {
	allowed := map[string]bool{}
	for _, t := range tools {
		for d := range t.ByDepth {
			if slices.Contains(t.At(d), "blackboard") {
				allowed[t.Agent] = true
			}
		}
	}
	var out []string
	for id, a := range p.Agents {
		if a.Protocol != "jsonl" || allowed[id] {
			out = append(out, id)
		}
	}
	return out
}

func keyList(keys map[string]bool) string {
	if len(keys) == 0 {
		return "nothing"
	}
	list := make([]string, 0, len(keys))
	for k := range keys {
		list = append(list, k)
	}
	sort.Strings(list)
	return strings.Join(list, ", ")
}
