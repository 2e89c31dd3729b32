package sched

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/orch-cli/orch/spec"
)

// current returns the target whose attempt number is attempt, or nil: a
// report from an attempt already replaced is stale.
func (c *Core) current(pos, i, attempt int) (*cue, *target) {
	cr := c.cues[pos]
	t := &cr.targets[i]
	if t.attempt != attempt || attempt == 0 {
		return cr, nil
	}
	c.touch(cr)
	return cr, t
}

// Warned is an attempt's acknowledged WARNING.
func (c *Core) Warned(pos, i, attempt int) {
	cr, t := c.current(pos, i, attempt)
	if t == nil {
		return
	}
	t.phase = tWarned
	if cr.state == Standby || cr.state == Go { // a retry joins a cue already further on
		t.phase = tStandby
		c.decide(Decision{Kind: SendStandby, Cue: pos, Target: i, Attempt: attempt, Agent: t.agent})
	}
}

// Ready is an attempt's acknowledged STANDBY.
func (c *Core) Ready(pos, i, attempt int) {
	cr, t := c.current(pos, i, attempt)
	if t == nil {
		return
	}
	t.phase = tReady
	if cr.state == Go && !c.exhausted { // out of a limit: no new GO
		t.phase = tGoing
		c.decide(Decision{Kind: SendGo, Cue: pos, Target: i, Attempt: attempt, Agent: t.agent})
	}
}

// End is how an attempt ended.
type End struct {
	Failed    bool
	Class     string // exit:N, timeout, malfunction, signal, contract, failed, stopped, start, ...
	Reason    string
	Retriable bool // the agent's retry policy covers the class, or the agent said so
	Outputs   map[string]any
}

// Ended is an attempt's end: it is recorded, and the cue completes, the
// agent retries, a fallback takes over, or the cue fails.
func (c *Core) Ended(now time.Time, pos, i, attempt int, e End) {
	cr, t := c.current(pos, i, attempt)
	if t == nil {
		return
	}
	t.attempt = 0
	ag := t.agent
	if t.parking {
		t.parking = false
		if e.Failed && e.Class == "stopped" && !cr.state.Final() {
			t.parked, t.phase = attempt, tIdle
			c.decide(Decision{Kind: AttemptEnded, Cue: pos, Target: i, Attempt: attempt, Agent: ag, AttemptState: AttemptPaused,
				Reason: "prepared, waits for its GO: the run paused (orch go prepares this attempt again)", Class: "paused"})
			return
		}
	}
	state := AttemptCompleted
	if e.Failed {
		state = AttemptFailed
		if c.stopping || cr.state.Final() || e.Class == "stopped" {
			state = AttemptStopped
		}
	}
	c.decide(Decision{Kind: AttemptEnded, Cue: pos, Target: i, Attempt: attempt, Agent: ag,
		AttemptState: state, Reason: e.Reason, Class: e.Class, Outputs: e.Outputs})
	if state == AttemptStopped {
		if !cr.state.Final() && !c.stopping {
			t.phase = tIdle // stood down (a skipped or paused cue); nothing more to do
		}
		return
	}
	if state == AttemptCompleted {
		if until := c.cooldown(now, ag); !until.IsZero() { // a success clears the cooldown
			c.cooldowns[ag.ID] = time.Time{}
			c.decide(Decision{Kind: CooldownCleared, Cue: pos, Target: i, Attempt: attempt, Agent: ag, Until: now.UTC(),
				Reason: fmt.Sprintf("succeeded at cue %s (it was cooling down until %s)", cr.spec.ID, until.Format(time.TimeOnly))})
		}
		t.phase, t.outputs = tDone, e.Outputs
		if c.allAt(cr, tDone) {
			c.completeCue(cr)
		}
		return
	}
	if ag.Cooldown > 0 && e.Retriable {
		until := now.Add(ag.Cooldown.D()).UTC()
		c.cooldowns[ag.ID] = until
		c.decide(Decision{Kind: Cooldown, Cue: pos, Target: i, Agent: ag, Reason: e.Reason, Until: until})
	}
	switch {
	case e.Retriable && t.tries < MaxAttempts(ag):
		c.retryOrFallback(now, cr, i, attempt, e)
	case FallsBack(ag, e) && c.takeFallback(cr, t, "failed ("+e.Class+")"):
	default:
		t.phase = tFailed
		c.endCue(cr, Failed, fmt.Sprintf("%s: %s", ag.ID, e.Reason))
	}
}

// retryOrFallback decides what follows a retriable failure with attempts
// left: the agent's own retry after its backoff, unless the agent cools
// down past it; then whichever can start first (see fallbackFirst) goes:
// the next fallback, or the retry at the end of the cooldown.
func (c *Core) retryOrFallback(now time.Time, cr *cue, i, attempt int, e End) {
	t := &cr.targets[i]
	ag := t.agent
	delay := Backoff(ag, t.tries, c.cfg.Jitter)
	retryAt, cooling := now.Add(delay), time.Time{}
	if until := c.cooldown(now, ag); until.After(retryAt) {
		if c.fallbackFirst(now, t, until) && c.takeFallback(cr, t, fmt.Sprintf("failed (%s) and cools down until %s; its fallback can start sooner",
			e.Class, until.Format(time.TimeOnly))) {
			return
		}
		retryAt, delay, cooling = until, until.Sub(now), until
	}
	t.phase, t.retryAt = tIdle, retryAt
	c.wakeNoLaterThan(t.retryAt, cr)
	c.decide(Decision{Kind: Retry, Cue: cr.pos, Target: i, Attempt: attempt, Agent: ag, Reason: e.Reason, Class: e.Class,
		N: t.tries + 1, Max: MaxAttempts(ag), Delay: delay, Until: cooling})
}

// fallbackFirst says whether the target's next fallback can start before
// until, when its agent's cooldown ends: "first" compares when each could
// start — the fallback at once, or at the end of its own cooldown — and a
// tie goes to the agent's own retry.
func (c *Core) fallbackFirst(now time.Time, t *target, until time.Time) bool {
	next := c.nextFallback(t)
	if next == nil {
		return false
	}
	nextAt := now
	if u := c.cooldown(now, next); !u.IsZero() {
		nextAt = u
	}
	return nextAt.Before(until)
}

// FallsBack reports whether a failure moves the cue to the agent's next
// fallback (docs/design.md#fallback-chains: fallback is for retriable failures): one its retry
// policy retries or the agent said is retriable; an agent whose retry_on
// is left out falls back on every failure.
func FallsBack(a *spec.Agent, e End) bool {
	return e.Retriable || a.Retry == nil || len(a.Retry.RetryOn) == 0
}

// completeCue merges the targets' outputs, exports the cue's exports to the
// blackboard and records the cue completed.
func (c *Core) completeCue(cr *cue) {
	cr.outputs = map[string]any{}
	for _, t := range cr.targets {
		for k, v := range t.outputs {
			cr.outputs[k] = v
		}
	}
	c.agentBranches(cr)
	c.finishCompleted(cr)
}

// finishCompleted records a cue completed with its outputs: they reach
// the cues downstream (an item's reach them through its for_each cue's),
// and its exports go to the blackboard first.
func (c *Core) finishCompleted(cr *cue) {
	if len(cr.outputs) > 0 && cr.parent == nil {
		c.withOutputs.Add(cr.spec)
	}
	for _, key := range cr.spec.Exports {
		v, ok := cr.outputs[key]
		if !ok {
			continue
		}
		c.decide(Decision{Kind: Export, Cue: cr.pos, Key: key, Value: v, Agent: cr.targets[0].agent})
	}
	c.endCue(cr, Completed, "")
}

// cooldown returns when the agent's cooldown ends, if it is after now.
// Only an agent whose contract has a cooldown is ever put on one. What
// this run decided wins over the store, which may not have it yet.
func (c *Core) cooldown(now time.Time, agent *spec.Agent) time.Time {
	if agent.Cooldown <= 0 {
		return time.Time{}
	}
	until, known := c.cooldowns[agent.ID]
	if !known {
		until = c.cfg.Lookup.CooldownUntil(agent.ID)
	}
	if !until.After(now) {
		return time.Time{}
	}
	return until
}

// nextFallback is the fallback takeFallback would take, or nil.
func (c *Core) nextFallback(t *target) *spec.Agent {
	listed := c.plan.Agents[t.listed]
	if listed == nil || t.fallbacks >= len(listed.Fallback) {
		return nil
	}
	return c.plan.Agents[listed.Fallback[t.fallbacks]]
}

// takeFallback replaces the target's agent with the next fallback of the
// agent the cue listed; false when none is left.
func (c *Core) takeFallback(cr *cue, t *target, why string) bool {
	listed := c.plan.Agents[t.listed]
	if listed == nil || t.fallbacks >= len(listed.Fallback) {
		return false
	}
	next := c.nextFallback(t)
	t.fallbacks++
	if next == nil {
		return false
	}
	c.decide(Decision{Kind: Fallback, Cue: cr.pos, Agent: t.agent, To: next, Reason: why})
	t.agent, t.tries, t.retryAt, t.phase = next, 0, time.Time{}, tIdle
	c.touch(cr)
	return true
}

// Backoff is the delay before retry n (1-based): exponential from the
// agent's backoff, capped, with jitter in [d/2, d] (jitter(n) is random in
// [0, n]; nil: math/rand).
func Backoff(a *spec.Agent, n int, jitter func(time.Duration) time.Duration) time.Duration {
	base, capAt := time.Second, 30*time.Second
	if a.Retry != nil {
		if a.Retry.Backoff > 0 {
			base = a.Retry.Backoff.D()
		}
		if a.Retry.MaxBackoff > 0 {
			capAt = a.Retry.MaxBackoff.D()
		}
	}
	d := base
	for i := 1; i < n && d < capAt; i++ {
		d *= 2
	}
	d = min(d, capAt)
	if d <= 1 {
		return d
	}
	if jitter == nil {
		return d/2 + randN(d/2)
	}
	return d/2 + jitter(d/2)
}

// MaxAttempts is how many attempts the agent's retry policy allows.
func MaxAttempts(a *spec.Agent) int {
	if a.Retry == nil || a.Retry.MaxAttempts < 1 {
		return 1
	}
	return a.Retry.MaxAttempts
}

// Retriable reports whether the agent's retry policy covers the failure
// class: with a retry block, every class unless retry_on narrows it to the
// classes it lists; without one, none. (A task.failed with retriable: true
// is retried whatever this says; End.Retriable says so.) The same answer
// decides whether a failure puts the agent on cooldown.
func Retriable(a *spec.Agent, class string) bool {
	if a.Retry == nil {
		return false
	}
	if len(a.Retry.RetryOn) == 0 {
		return true
	}
	for _, on := range a.Retry.RetryOn {
		if on == class || on == "exit:any" && strings.HasPrefix(class, "exit:") {
			return true
		}
	}
	return false
}

// Truthy is how a condition reads a blackboard value: false, null, 0, "",
// "false", "no", "off" and "0" (any case) do not hold; anything else does.
func Truthy(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "", "false", "no", "off", "0":
			return false
		}
		return true
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}
