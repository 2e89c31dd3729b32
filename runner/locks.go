package runner

import (
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// tellConflict tells the agents of a cue that waits for a subject other
// cues hold (EventFor records it) what holds it: escalation.conflict.
func (r *run) tellConflict(dc sched.Decision, d record.ConflictData) {
	for _, a := range r.atts[dc.Cue] {
		if a != nil && driver.Speaks(a.Agent) {
			m := r.outbound(a, protocols.EscalationConflict{ConflictType: d.ConflictType, CuesInvolved: d.CuesInvolved,
				AgentsInvolved: d.AgentsInvolved, ResourceInQuestion: d.ResourceInQuestion, ProposedResolution: d.ProposedResolution,
				Winner: d.Winner, SuggestedWinner: d.SuggestedWinner, Reason: d.Reason})
			r.then(func() { r.host.agents.Tell(a.Agent.ID, m.Msg) })
		}
	}
}
