package temporal

import (
	"fmt"

	"github.com/orch-cli/orch/planner"
)

// Unsupported says what of the plan the temporal engine does not run yet,
// naming the agent or cue: one clear message, before anything starts.
//
// Claims are counted within the run, by the scheduler core, as on the local
// engine (neither engine counts them across runs): nothing to refuse. The
// workflow keeps cooldowns within its run; a cooldown an earlier run
// recorded is in the store, which this package never reads: orch-temporal
// run refuses the run then (refuseCrossRunCooldown).
func Unsupported(p *planner.Plan) error {
	for _, c := range p.Order {
		for _, id := range c.Agents {
			a := p.Agents[id]
			if a == nil {
				continue
			}
			switch a.Protocol {
			case "", "none":
			default:
				return fmt.Errorf("cue %s: agent %s has protocol: %s, not supported by --engine temporal in this version (plain agents only); run it with --engine local", c.ID, a.ID, a.Protocol)
			}
			if len(a.HandoffTo) > 0 {
				return fmt.Errorf("cue %s: agent %s hands off (handoff_to), not supported by --engine temporal in this version; run it with --engine local", c.ID, a.ID)
			}
			if len(a.MCPServers) > 0 { // orch's MCP bridge is the local engine's (issue 29)
				return fmt.Errorf("cue %s: agent %s has mcp_servers, not supported by --engine temporal in this version (its agents get no MCP servers, orch's included); run it with --engine local", c.ID, a.ID)
			}
		}
	}
	return refuseWorktreeShape(p)
}
