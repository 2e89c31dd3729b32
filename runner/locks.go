package runner

import (
	"fmt"
	"sort"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/sched"
)

// conflict records that a cue waits for a subject other cues hold (the
// core decides it once per cue and subject), and tells the waiting agents
// (escalation.conflict).
func (r *run) conflict(dc sched.Decision) {
	c, s := r.core.Cue(dc.Cue), dc.Subject
	holders := make([]*planner.Cue, len(dc.Holders))
	for i, pos := range dc.Holders {
		holders[i] = r.core.Cue(pos)
	}
	cues := []string{}
	agents := map[string]bool{}
	for _, h := range append(holders, c) {
		cues = append(cues, h.ID)
		for _, a := range h.Agents {
			agents[a] = true
		}
	}
	d := ConflictData{ConflictType: s.Kind, CuesInvolved: cues, AgentsInvolved: sortedKeys(agents), ResourceInQuestion: s.Name,
		Capacity: dc.Capacity, ProposedResolution: r.plan.Strategy}
	if len(holders) > 0 {
		d.Winner = holders[0].ID
		if len(holders[0].Agents) > 0 {
			d.SuggestedWinner = holders[0].Agents[0]
		}
	}
	holding := make([]string, len(holders))
	for i, h := range holders {
		holding[i] = h.ID
	}
	d.Reason = fmt.Sprintf("%s %s is held by %s (capacity %d): %s waits in STANDBY until it is free",
		s.Kind, s.Name, join(holding), d.Capacity, c.ID)
	if r.plan.Strategy == "fcfs" {
		d.Reason = "first come, first served: " + d.Reason
	}
	r.emit(Event{Type: EvConflict, Cue: c.ID, Reason: d.Reason, Data: d})
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
func (r *run) tell(a *attempt, m *wireMessage) {
	r.procsMu.Lock()
	ap := r.procs[a.agent.ID]
	r.procsMu.Unlock()
	if ap != nil && ap.healthy() {
		go func() { _ = ap.write(m.msg) }()
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
