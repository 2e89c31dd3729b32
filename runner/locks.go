package runner

import (
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// tellConflict tells the agents of a cue that waits for a subject other
// cues hold (EventFor records it) what holds it: escalation.conflict.
func (r *run) tellConflict(dc sched.Decision, d record.ConflictData) {
	for _, a := range r.atts[dc.Cue] {
		if a != nil && speaks(a.agent) {
			m := r.outbound(a, protocols.EscalationConflict{ConflictType: d.ConflictType, CuesInvolved: d.CuesInvolved,
				AgentsInvolved: d.AgentsInvolved, ResourceInQuestion: d.ResourceInQuestion, ProposedResolution: d.ProposedResolution,
				Winner: d.Winner, SuggestedWinner: d.SuggestedWinner, Reason: d.Reason})
			r.then(func() { r.tell(a, m) })
		}
	}
}

// tell writes an already recorded message to the attempt's agent, if it has
// a live process; it is information, so a failure to write is not one.
func (r *run) tell(a *attemptRun, m *wireMessage) {
	r.procsMu.Lock()
	ap := r.procs[a.agent.ID]
	r.procsMu.Unlock()
	if ap != nil && ap.healthy() {
		go func() { _ = ap.write(m.msg) }()
	}
}
