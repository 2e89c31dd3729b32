package sched

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// Advance steps every touched cue, in plan order, as many phases forward as
// it can go now.
func (c *Core) Advance(now time.Time) {
	for pos := c.touched.pop(); pos >= 0; pos = c.touched.pop() {
		cr := c.cues[pos]
		for c.step(now, cr) {
		}
	}
	c.startResult()
}

// touch marks a cue to be looked at by the next advance.
func (c *Core) touch(cr *cue) { c.touched.push(cr.pos) }

// touchNext marks the cues that wait for cr: its state decides theirs.
func (c *Core) touchNext(cr *cue) {
	for _, n := range cr.spec.Next {
		c.touch(c.byID[n.ID])
	}
}

// freePrepared and freeGo release a budget slot and wake the earliest cue
// that waited for one.
func (c *Core) freePrepared() {
	c.prepared--
	if pos := c.waitWarn.pop(); pos >= 0 {
		c.touched.push(pos)
	}
}

func (c *Core) freeGo() {
	c.inGo--
	if pos := c.waitGo.pop(); pos >= 0 {
		c.touched.push(pos)
	}
}

// step moves one cue at most one phase forward and reports whether it did.
func (c *Core) step(now time.Time, cr *cue) bool {
	if cr.state.Final() || c.broken {
		return false
	}
	if dep, why := c.blockedBy(cr); dep != "" {
		c.endCue(cr, Blocked, fmt.Sprintf("dependency %s %s", dep, why))
		return false
	}
	if cr.spec.ForEach != nil {
		return c.stepFanOut(cr)
	}
	switch cr.state {
	case Interrupted:
		if !cr.approved {
			return false // waits for orch go
		}
		c.setState(cr, Pending, "orch go: run it again")
		return true
	case Pending:
		if !c.warnable(cr) {
			return false // a dependency's change touches it again
		}
		if cr.parent != nil && !c.fanAdmitsWarning(cr) {
			return false // woken when an item of its fan-out moves on
		}
		if c.prepared >= c.cfg.Parallel {
			c.waitWarn.push(cr.pos)
			return false
		}
		if cr.parent != nil {
			cr.parent.fan.prepared++
		}
		cr.warnedAt = now
		why := ""
		if lead := c.warningLead(cr); lead > 0 {
			why = fmt.Sprintf("GO not before %s (warning_lead %s)", now.Add(lead).Format(time.TimeOnly), lead)
		}
		c.setState(cr, Warning, why)
		c.prepared++
		c.startTargets(now, cr)
		return true
	case Warning:
		c.startTargets(now, cr)
		if c.allAt(cr, tWarned) && c.ready(cr) {
			if at := cr.warnedAt.Add(c.warningLead(cr)); now.Before(at) {
				c.wakeNoLaterThan(at, cr) // its WARNING goes out warning_lead before its GO
				return false
			}
			if c.mergeStarted(cr) { // its conditions held
			} else if why, ok := c.conditionFails(cr); !ok {
				return false // the board could not be read: the run ends
			} else if why != "" {
				c.endCue(cr, Skipped, why)
				return false
			}
			if !c.merged(cr) {
				return false // the merge of its dependencies' branches reports, and touches it
			}
			c.setState(cr, Standby, "")
			for i := range cr.targets {
				t := &cr.targets[i]
				t.phase = tStandby
				if !c.cfg.Trivial(t.agent) {
					c.decide(Decision{Kind: SendStandby, Cue: cr.pos, Target: i, Attempt: t.attempt, Agent: t.agent})
				} else {
					t.phase = tReady
				}
			}
			return true
		}
	case Standby:
		c.startTargets(now, cr)
		if !c.allAt(cr, tReady) {
			return false
		}
		if cr.spec.Manual() && !cr.approved {
			c.askForGo(cr)
			return false
		}
		if cr.parent != nil && !c.fanAdmitsGo(cr) {
			return false // woken when an item of its fan-out leaves GO
		}
		if c.inGo >= c.cfg.Parallel {
			c.waitGo.push(cr.pos)
			return false
		}
		if c.exhausted {
			return false // out of a limit: the loop stops the run
		}
		if !c.acquire(cr) {
			return false // woken when a holder lets go
		}
		c.freePrepared()
		c.inGo++
		if cr.parent != nil {
			c.itemLeft(cr, Standby)
			cr.parent.fan.inGo++
		}
		cr.goAt = now
		c.setState(cr, Go, "")
		if cr.parent != nil {
			c.fanPrepared(cr.parent)
		}
		for i := range cr.targets {
			t := &cr.targets[i]
			t.phase = tGoing
			c.decide(Decision{Kind: SendGo, Cue: cr.pos, Target: i, Attempt: t.attempt, Agent: t.agent})
		}
		return true
	case Go:
		c.startTargets(now, cr) // retries and fallbacks go straight through the phases
	}
	return false
}

// blockedBy names a dependency that can no longer complete.
func (c *Core) blockedBy(cr *cue) (string, string) {
	for _, d := range cr.spec.Deps {
		switch c.byID[d.ID].state {
		case Failed:
			return d.ID, "failed"
		case Blocked:
			return d.ID, "is blocked"
		case Skipped:
			return d.ID, "was skipped"
		case Stopped:
			return d.ID, "was stopped"
		}
	}
	return "", ""
}

// warnable: WARNING goes out as soon as the last unfinished dependency has
// gone into GO, so preparation overlaps the work before it. A cue the
// arbitration put after another waits until that one is in GO too.
func (c *Core) warnable(cr *cue) bool {
	for _, d := range cr.spec.Deps {
		if !c.warnsAfter(c.byID[d.ID]) {
			return false
		}
	}
	for _, d := range cr.spec.After {
		if !c.warnsAfter(c.byID[d.ID]) {
			return false
		}
	}
	return true
}

// warnsAfter says whether the cues after d may get their WARNING: d is in
// GO or over; a for_each cue in GO once none of its items waits to be
// prepared (a cue warned earlier would hold a preparation slot its items
// need: with as many of them as max_parallel, the run would wait forever).
func (c *Core) warnsAfter(d *cue) bool {
	switch {
	case d.state.Final():
		return true
	case d.state != Go:
		return false
	}
	return d.fan == nil || d.fan.allPrepared
}

// ready: every dependency completed and every arbitration predecessor ended.
func (c *Core) ready(cr *cue) bool {
	for _, d := range cr.spec.Deps {
		if c.byID[d.ID].state != Completed {
			return false
		}
	}
	for _, d := range cr.spec.After {
		if !c.byID[d.ID].state.Final() {
			return false
		}
	}
	return true
}

func (c *Core) allAt(cr *cue, p phase) bool {
	for _, t := range cr.targets {
		if t.phase < p || t.phase == tFailed {
			return false
		}
	}
	return true
}

// startTargets launches an attempt for every target without one whose retry
// time has come (all of them when the cue enters WARNING).
func (c *Core) startTargets(now time.Time, cr *cue) {
	for i := range cr.targets {
		t := &cr.targets[i]
		if t.phase != tIdle || t.attempt != 0 {
			continue
		}
		if !t.retryAt.IsZero() && now.Before(t.retryAt) {
			c.wakeNoLaterThan(t.retryAt, cr)
			continue
		}
		// An agent cooling down, for a first try or a retry, waits for the
		// end of its cooldown or hands over to its fallback, whichever can
		// start first.
		if until := c.cooldown(now, t.agent); !until.IsZero() {
			if c.fallbackFirst(now, t, until) && c.takeFallback(cr, t, "is cooling down until "+until.Format(time.TimeOnly)) {
				continue // retried on the next pass with the fallback
			}
			c.wakeNoLaterThan(until, cr)
			continue
		}
		c.launch(now, cr, i)
	}
}

// wakeNoLaterThan makes the loop wake by t and then look at cr again.
func (c *Core) wakeNoLaterThan(t time.Time, cr *cue) {
	if c.wakeAt.IsZero() || t.Before(c.wakeAt) {
		c.wakeAt = t
	}
	c.sleepers[cr] = true
}

// launch decides an attempt: its number is recorded before it starts, so a
// crash never loses or reuses it. Only a paused attempt (Park) is started
// again under its number.
func (c *Core) launch(now time.Time, cr *cue, i int) {
	t := &cr.targets[i]
	again := t.parked != 0
	if again { // paused for a manual GO: the same attempt, prepared again
		t.attempt, t.parked = t.parked, 0
	} else {
		cr.attempts++
		t.tries++
		t.attempt = cr.attempts
	}
	t.retryAt = time.Time{}
	t.phase = tWarning
	c.decide(Decision{Kind: StartAttempt, Cue: cr.pos, Target: i, Attempt: t.attempt, Agent: t.agent, Fallback: t.agent.ID != t.listed,
		Again: again, Until: c.estimatedGo(now, cr)})
	if c.cfg.Trivial(t.agent) { // nothing to do at WARNING and STANDBY: warned as soon as recorded
		switch cr.state {
		case Warning, Pending:
			t.phase = tWarned
		case Standby:
			t.phase = tReady
		case Go: // a retry or a fallback of a cue already in GO
			if c.exhausted {
				break // out of a limit: no new GO
			}
			t.phase = tGoing
			c.decide(Decision{Kind: SendGo, Cue: cr.pos, Target: i, Attempt: t.attempt, Agent: t.agent})
		}
	}
}

// conditionFails checks the cue's conditions: every name other than
// all_dependencies_complete and approval_received must be an output of an
// upstream cue (CUE.key) or a blackboard key, set and truthy. ok is false
// when the board could not be read.
func (c *Core) conditionFails(cr *cue) (why string, ok bool) {
	var keys []string
	for _, cond := range cr.spec.Conditions {
		if spec.BuiltinCondition(cond) {
			continue
		}
		if id, key, isOutput := spec.OutputCondition(cond, c.isCue); isOutput {
			if why := c.outputFails(cond, c.byID[id], key); why != "" {
				return why, true
			}
			continue
		}
		keys = append(keys, cond)
	}
	if len(keys) == 0 {
		return "", true
	}
	board, err := c.cfg.Lookup.Conditions(cr.spec.ID, keys)
	if err != nil {
		c.broken = true
		return "", false
	}
	for _, cond := range keys {
		v, ok := board[cond]
		if !ok {
			return fmt.Sprintf("condition %s does not hold: no such key on the blackboard", cond), true
		}
		if !Truthy(v) {
			return fmt.Sprintf("condition %s does not hold: %s", cond, strings.TrimSpace(string(v))), true
		}
	}
	return "", true
}

func (c *Core) isCue(id string) bool { return c.byID[id] != nil }

// outputFails says why condition cond, on output key of cue up, does not
// hold ("" when it does). orch validate makes sure up is upstream.
func (c *Core) outputFails(cond string, up *cue, key string) string {
	if up.state != Completed {
		return fmt.Sprintf("condition %s does not hold: cue %s is %s, not completed", cond, up.spec.ID, up.state)
	}
	v, ok := up.outputs[key]
	if !ok {
		return fmt.Sprintf("condition %s does not hold: cue %s has no output %s", cond, up.spec.ID, key)
	}
	raw, err := json.Marshal(v)
	if err != nil || !Truthy(raw) {
		return fmt.Sprintf("condition %s does not hold: %s", cond, strings.TrimSpace(string(raw)))
	}
	return ""
}

// askForGo asks a person for GO on a terminal, once per cue at a time.
func (c *Core) askForGo(cr *cue) {
	if !c.cfg.CanAsk || cr.asking || cr.declined {
		return
	}
	cr.asking = true
	c.asking++
	c.decide(Decision{Kind: AskForGo, Cue: cr.pos})
}

// setState records a cue's new state; the cues waiting for it are looked at
// again.
func (c *Core) setState(cr *cue, s State, reason string) {
	cr.state, cr.reason = s, reason
	if s == Pending {
		delete(c.live, cr)
	} else {
		c.live[cr] = true
	}
	c.decide(Decision{Kind: CueState, Cue: cr.pos, State: s, Reason: reason})
	c.touchNext(cr)
}

// endCue records a final state, stops the cue's attempts still running (a
// cue warned early and then blocked or skipped) and frees the cue's slot.
func (c *Core) endCue(cr *cue, s State, reason string) {
	c.endCueWhy(cr, s, reason, fmt.Sprintf("cue %s is %s", cr.spec.ID, s))
}

// endCueWhy is endCue telling the cue's attempts stopWhy.
func (c *Core) endCueWhy(cr *cue, s State, reason, stopWhy string) {
	for i := range cr.targets {
		t := &cr.targets[i]
		if t.attempt != 0 {
			c.decide(Decision{Kind: StopAttempt, Cue: cr.pos, Target: i, Attempt: t.attempt, Agent: t.agent, Reason: stopWhy})
		}
		if t.parked != 0 { // paused for a GO that will not come: it ends with the cue
			c.decide(Decision{Kind: AttemptEnded, Cue: cr.pos, Target: i, Attempt: t.parked, Agent: t.agent,
				AttemptState: AttemptStopped, Reason: stopWhy, Class: "stopped"})
			t.parked = 0
		}
	}
	c.stopMerge(cr, stopWhy)
	switch {
	case cr.state == Warning || cr.state == Standby:
		c.freePrepared()
	case cr.state == Go && cr.fan == nil: // a for_each cue holds no GO slot: its items do
		c.freeGo()
		c.release(cr)
	}
	if cr.parent != nil {
		c.itemLeft(cr, cr.state)
	}
	if (cr.spec.Manual() || cr.state == Interrupted) && !cr.approved {
		c.unapproved--
	}
	cr.state, cr.reason = s, reason
	c.finals++
	delete(c.live, cr)
	c.touchNext(cr)
	d := Decision{Kind: CueState, Cue: cr.pos, State: s, Reason: reason}
	if s == Completed {
		d.Outputs = cr.outputs
	}
	c.decide(d)
	if cr.parent != nil {
		c.itemEnded(cr)
	}
}

// endCueClass is endCue for a cue that fails without an attempt (a
// fan-out's list that is not one), recording the failure's class.
func (c *Core) endCueClass(cr *cue, s State, reason, class string) {
	c.endCue(cr, s, reason)
	c.out[len(c.out)-1].Class = class
}

// warningLead is how long before its GO a cue with no dependencies gets
// its WARNING: its warning_lead, else the cuelist's defaults.warning_lead.
// A cue with dependencies gets its WARNING when the last of them goes into
// GO, which is its lead.
func (c *Core) warningLead(cr *cue) time.Duration {
	if len(cr.spec.Deps) > 0 || len(cr.spec.After) > 0 {
		return 0
	}
	if d := cr.spec.WarningLead.D(); d > 0 {
		return d
	}
	return c.plan.Cuelist.Defaults.WarningLead.D()
}

// estimatedGo is when the cue is expected to go, from the plan's
// estimates: at the end of its warning_lead, or when the dependencies in GO
// are expected to complete (their GO time plus their estimate); never
// before now (a dependency that overran its estimate is expected now).
func (c *Core) estimatedGo(now time.Time, cr *cue) time.Time {
	at := now
	if cr.state == Warning || cr.state == Pending {
		if lead := cr.warnedAt.Add(c.warningLead(cr)); lead.After(at) {
			at = lead
		}
	}
	for _, deps := range [][]*planner.Cue{cr.spec.Deps, cr.spec.After} {
		for _, d := range deps {
			dep := c.byID[d.ID]
			if dep.state == Go && !dep.goAt.IsZero() && dep.goAt.Add(d.Estimate).After(at) {
				at = dep.goAt.Add(d.Estimate)
			}
		}
	}
	return at.UTC()
}
