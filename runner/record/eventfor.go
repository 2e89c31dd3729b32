package record

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/sched"
)

// AttemptEnd is what an engine knows of an attempt that ended beside the
// core's AttemptEnded decision: its process and its outputs.
type AttemptEnd struct {
	PID      int
	ExitCode *int // nil: it did not exit by itself (a signal, or no process)
	Outputs  map[string]any
}

// EventFor is the record of decision d of a run's core, the same whichever
// engine runs the plan: none for the decisions an engine records as it
// carries them out (SendStandby, SendGo, StopAttempt, Export: the board's
// own event, AskForGo, the merges'). end is the attempt's end, for
// AttemptEnded.
func EventFor(p *planner.Plan, core *sched.Core, d sched.Decision, end AttemptEnd) []Event {
	c := core.Cue(d.Cue) // a plan cue, or a fan-out's item
	switch d.Kind {
	case sched.CueState:
		ev := Event{Type: EvCueState, Cue: c.ID, State: string(d.State), Reason: d.Reason}
		if d.State == sched.Completed || d.Class != "" {
			ev.Data = CueStateData{Outputs: d.Outputs, Class: d.Class}
		}
		return []Event{ev}
	case sched.StartAttempt:
		return []Event{{Type: EvAttemptStarted, Cue: c.ID, Agent: d.Agent.ID, Attempt: d.Attempt,
			Data: AttemptStartedData{Fallback: d.Fallback}}}
	case sched.AttemptEnded:
		return []Event{{Type: EvAttemptEnded, Cue: c.ID, Agent: d.Agent.ID, Attempt: d.Attempt,
			State: string(d.AttemptState), Reason: d.Reason,
			Data: AttemptEndedData{Class: d.Class, ExitCode: end.ExitCode, PID: end.PID, Outputs: end.Outputs}}}
	case sched.AttemptInterrupted:
		why := d.Reason // lost while the run went on (Core.Interrupt)
		if why == "" {
			why = "its run's owner stopped while it ran"
		}
		return []Event{{Type: EvAttemptEnded, Cue: c.ID, Agent: d.Key, Attempt: d.Attempt, State: string(AttemptInterrupted),
			Reason: why, Data: AttemptEndedData{Class: "interrupted"}}}
	case sched.Cooldown:
		return []Event{{Type: EvCooldown, Cue: c.ID, Agent: d.Agent.ID, Reason: d.Reason, Data: CooldownData{Until: d.Until}}}
	case sched.CooldownCleared: // the store's cooldown ends now: later runs see it cleared
		return []Event{{Type: EvCooldown, Cue: c.ID, Agent: d.Agent.ID, Attempt: d.Attempt, Reason: d.Reason,
			Data: CooldownData{Until: d.Until, Cleared: true}}}
	case sched.Retry:
		when := ""
		if !d.Until.IsZero() {
			when = ", when its cooldown ends"
		}
		return []Event{{Type: EvNote, Cue: c.ID, Agent: d.Agent.ID, Attempt: d.Attempt,
			Reason: fmt.Sprintf("%s (%s): retry %d of %d in %s%s", d.Reason, d.Class, d.N, d.Max, d.Delay.Round(time.Millisecond), when)}}
	case sched.Fallback:
		return []Event{{Type: EvNote, Cue: c.ID, Agent: d.Agent.ID, Reason: fmt.Sprintf("%s %s: falling back to %s", d.Agent.ID, d.Reason, d.To.ID)}}
	case sched.Conflict:
		return []Event{conflictEvent(p, core, d)}
	case sched.ManualGo:
		return []Event{{Type: EvManualGo, Cue: c.ID, Reason: d.Reason}}
	case sched.Expand:
		var events []Event
		if !d.Restored { // a resumed run takes back the recorded expansion
			data := FanOutData{As: c.ForEach.Name(), Items: make([]FanOutItem, len(d.Items))}
			for i, id := range d.Items {
				data.Items[i] = FanOutItem{ID: id, Item: d.Values[i]}
			}
			events = append(events, Event{Type: EvFanOut, Cue: c.ID, Reason: fmt.Sprintf("%d item(s)", len(d.Items)), Data: data})
		}
		if d.Reason != "" {
			events = append(events, Event{Type: EvNote, Cue: c.ID, Reason: d.Reason})
		}
		return events
	}
	return nil
}

// conflictEvent records that a cue waits for a subject other cues hold
// (the core decides it once per cue and subject), in the seeds'
// escalation.conflict form.
func conflictEvent(p *planner.Plan, core *sched.Core, dc sched.Decision) Event {
	c, s := core.Cue(dc.Cue), dc.Subject
	cues, holding := []string{}, []string{}
	agents := map[string]bool{}
	for _, pos := range dc.Holders {
		h := core.Cue(pos)
		cues, holding = append(cues, h.ID), append(holding, h.ID)
		for _, a := range h.Agents {
			agents[a] = true
		}
	}
	cues = append(cues, c.ID)
	for _, a := range c.Agents {
		agents[a] = true
	}
	names := make([]string, 0, len(agents))
	for a := range agents {
		names = append(names, a)
	}
	sort.Strings(names)
	d := ConflictData{ConflictType: s.Kind, CuesInvolved: cues, AgentsInvolved: names, ResourceInQuestion: s.Name,
		Capacity: dc.Capacity, ProposedResolution: p.Strategy}
	if len(dc.Holders) > 0 {
		h := core.Cue(dc.Holders[0])
		d.Winner = h.ID
		if len(h.Agents) > 0 {
			d.SuggestedWinner = h.Agents[0]
		}
	}
	slices.Sort(holding)
	d.Reason = fmt.Sprintf("%s %s is held by %s (capacity %d): %s waits in STANDBY until it is free",
		s.Kind, s.Name, strings.Join(holding, ", "), d.Capacity, c.ID)
	if p.Strategy == "fcfs" {
		d.Reason = "first come, first served: " + d.Reason
	}
	return Event{Type: EvConflict, Cue: c.ID, Reason: d.Reason, Data: d}
}
