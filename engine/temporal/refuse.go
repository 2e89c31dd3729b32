package temporal

import (
	"fmt"
	"sort"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// Unsupported says what of the plan the temporal engine does not run yet,
// naming the agent or cue: one clear message, before anything starts. Every
// agent of the plan is checked, a fallback too. Every protocol runs (plain,
// jsonl, ACP, claude-code, codex); what an agent asks for at run time that
// this engine does not do (a spawn, a message to a sibling) is refused then,
// with a protocol.error saying so.
//
// Claims are counted within the run, by the scheduler core, as on the local
// engine (neither engine counts them across runs): nothing to refuse. The
// workflow keeps cooldowns within its run; a cooldown an earlier run
// recorded is in the store, which this package never reads: orch-temporal
// run refuses the run then (refuseCrossRunCooldown).
func Unsupported(p *planner.Plan) error {
	seen := map[string]bool{}
	for _, c := range p.Order {
		for _, id := range c.Agents {
			if a := p.Agents[id]; a != nil && !seen[id] {
				seen[id] = true
				if why := unsupported(a); why != "" {
					return fmt.Errorf("cue %s: agent %s %s", c.ID, a.ID, why)
				}
			}
		}
	}
	ids := make([]string, 0, len(p.Agents))
	for id := range p.Agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if a := p.Agents[id]; !seen[id] {
			if why := unsupported(a); why != "" {
				return fmt.Errorf("agent %s (a fallback) %s", a.ID, why)
			}
		}
	}
	return nil
}

func unsupported(*spec.Agent) string { return "" }
