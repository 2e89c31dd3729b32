package sched

import "fmt"

// Recorded is where a recorded run left one cue (the runner's CueRecord,
// outputs already restored from redaction).
type Recorded struct {
	State         State
	Reason        string
	Attempts      int            // the highest attempt number recorded
	AgentAttempts map[string]int // failed attempts per agent
	Running       []Running      // attempts recorded as running
	Paused        []Running      // attempts recorded paused (Core.Park): prepared again, under their numbers
	Outputs       map[string]any
	Approved      bool
	// Items is a for_each cue's recorded expansion, in item order (nil: it
	// had not expanded, or expands afresh).
	Items []RecordedItem
	// ItemAttempts: the highest attempt number of each item of an earlier
	// expansion, for a fan-out that expands afresh (attempt numbers of an
	// item of the same id continue).
	ItemAttempts map[string]int
}

// Running names an attempt recorded as running.
type Running struct {
	Agent  string
	Number int
}

// Restore takes cue id back to where the recorded run left it, before
// Begin. Completed and skipped cues are kept; a failed or blocked one stays
// so; everything else runs again, except a cue that was in GO when the
// owner died and is not idempotent: it is interrupted until a person says
// orch go. Attempt numbers continue, and each agent's failed attempts count
// against its max_attempts, so a crash never buys an agent more tries (an
// attempt the crash interrupted is not its failure, and does not count).
func (c *Core) Restore(id string, rec Recorded) {
	cr := c.byID[id]
	if cr == nil {
		return
	}
	if cr.spec.ForEach != nil {
		c.restoreFanOut(cr, rec)
		return
	}
	c.restoreCue(cr, rec)
}

// restoreCue takes one cue (or a fan-out's item) back (see Restore).
func (c *Core) restoreCue(cr *cue, rec Recorded) {
	cr.attempts, cr.approved = rec.Attempts, rec.Approved
	for _, a := range rec.Running {
		c.decide(Decision{Kind: AttemptInterrupted, Cue: cr.pos, Attempt: a.Number, Agent: c.plan.Agents[a.Agent], Key: a.Agent})
	}
	switch rec.State {
	case Completed, Skipped, Failed, Blocked:
		cr.state, cr.reason, cr.outputs = rec.State, rec.Reason, rec.Outputs
		if len(rec.Outputs) > 0 && cr.parent == nil { // an item's reach the cues downstream through its for_each cue's
			c.withOutputs.Add(cr.spec)
		}
		c.restoreParked(cr, rec.Paused)
		return
	case Interrupted:
		cr.state = Interrupted // still waiting for orch go (unless it came: approved)
	case Go:
		if !cr.spec.IsIdempotent() {
			cr.approved = false
			c.setState(cr, Interrupted, "it was in GO when its run's owner stopped, and it is not idempotent: orch go "+c.cfg.RunID+" "+cr.spec.ID+" runs it again")
		}
	}
	// A cue recorded in WARNING, STANDBY or GO (and not interrupted above)
	// starts over: recorded pending, so that the store never shows it being
	// prepared by nobody (say, while the resumed run pauses).
	if cr.state != Interrupted && rec.State != Pending && rec.State != Interrupted {
		c.setState(cr, Pending, "its run's owner stopped; it starts over")
	}
	for i := range cr.targets {
		t := &cr.targets[i]
		t.tries = rec.AgentAttempts[t.agent.ID]
		for t.tries >= MaxAttempts(t.agent) {
			listed := c.plan.Agents[t.listed]
			if t.fallbacks >= len(listed.Fallback) {
				t.phase = tFailed
				break
			}
			next := c.plan.Agents[listed.Fallback[t.fallbacks]]
			t.fallbacks++
			t.agent, t.tries = next, rec.AgentAttempts[next.ID]
		}
	}
	c.restoreParked(cr, rec.Paused)
	for _, t := range cr.targets {
		if t.phase == tFailed {
			c.decide(Decision{Kind: CueState, Cue: cr.pos, State: Failed,
				Reason: fmt.Sprintf("%s: no attempts left (all failed before the run was resumed)", t.listed)})
			cr.state = Failed
			break
		}
	}
}

// restoreParked gives each target its attempt paused for a manual GO, which
// its next launch starts again. One whose agent no longer attempts there
// (the cue is over, or its agent failed over to a fallback) ends stopped.
func (c *Core) restoreParked(cr *cue, paused []Running) {
	for _, p := range paused {
		i := -1
		for j, t := range cr.targets {
			if t.agent.ID == p.Agent && t.phase != tFailed && t.parked == 0 {
				i = j
				break
			}
		}
		if i >= 0 && !cr.state.Final() {
			cr.targets[i].parked = p.Number
			continue
		}
		c.decide(Decision{Kind: AttemptInterrupted, Cue: cr.pos, Attempt: p.Number, Agent: c.plan.Agents[p.Agent], Key: p.Agent,
			Reason: "it was paused for a GO, and the resumed run does not prepare it again"})
	}
}
