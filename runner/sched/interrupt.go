package sched

import "time"

// Interrupt ends attempt attempt of target i of cue pos as interrupted, while
// the run goes on: its process was lost in GO (its worker died, or gave it
// back) and the cue is not idempotent, so it must not run again by itself.
// The cue's other attempts are stopped and it waits, interrupted, for orch
// go, as Restore leaves such a cue after a crash. The lost attempt does not
// count against its agent's max_attempts. false: the attempt is stale, the
// cue is not in GO, or it is a fan-out's item (which this does not handle:
// the caller ends the attempt as failed instead).
func (c *Core) Interrupt(pos, i, attempt int, reason string) bool {
	cr := c.cues[pos]
	if cr.state != Go || cr.parent != nil || cr.fan != nil || c.stopping {
		return false
	}
	cr, t := c.current(pos, i, attempt)
	if t == nil {
		return false
	}
	t.attempt = 0
	t.tries--
	c.decide(Decision{Kind: AttemptInterrupted, Cue: pos, Target: i, Attempt: attempt, Agent: t.agent, Key: t.agent.ID, Reason: reason})
	for j := range cr.targets {
		u := &cr.targets[j]
		if u.attempt != 0 {
			c.decide(Decision{Kind: StopAttempt, Cue: pos, Target: j, Attempt: u.attempt, Agent: u.agent,
				Reason: "cue " + cr.spec.ID + " is interrupted: " + reason})
		}
		u.phase, u.outputs, u.retryAt = tIdle, nil, time.Time{}
	}
	for _, n := range cr.spec.Next {
		c.unprepare(c.byID[n.ID], "cue "+cr.spec.ID+" is interrupted")
	}
	c.stopMerge(cr, reason)
	c.freeGo()
	c.release(cr)
	cr.approved = false
	c.unapproved++
	c.setState(cr, Interrupted, reason+": orch go "+c.cfg.RunID+" "+cr.spec.ID+" runs it again")
	c.touch(cr)
	return true
}

// unprepare takes a cue prepared early (in WARNING or STANDBY while the cue
// before it was in GO) back to pending: its attempts are stopped (not its
// agents' failures: they do not count as tries), and it is prepared again
// when that cue goes again.
func (c *Core) unprepare(n *cue, why string) {
	if n.parent != nil || n.fan != nil || (n.state != Warning && n.state != Standby) {
		return
	}
	for j := range n.targets {
		u := &n.targets[j]
		if u.attempt != 0 {
			u.tries--
			c.decide(Decision{Kind: StopAttempt, Cue: n.pos, Target: j, Attempt: u.attempt, Agent: u.agent, Reason: why})
		}
		u.phase = tIdle
	}
	c.freePrepared()
	c.setState(n, Pending, why+": it is prepared again when that cue goes")
}
