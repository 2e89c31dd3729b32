package sched

import "time"

// Limit is the limit a run ran out of (its cuelist's limits): from then on
// no GO is given, and the runner stops the run.
type Limit struct {
	Name string // max_credits or max_duration

	Credits, MaxCredits float64       // max_credits: the run's credits and the limit
	Used, Max           time.Duration // max_duration: how long the run ran, and the limit
}

// Exhausted is the limit the run ran out of; nil while it has not.
func (c *Core) Exhausted() *Limit { return c.limit }

// Exhaust says the run is out of a limit: no GO is given from now on. The
// first limit reached is the one the run ran out of.
func (c *Core) Exhaust(l Limit) {
	if c.limit == nil {
		c.limit = &l
	}
	c.exhausted = true
}

// RestoreCredits takes back the credits a resumed run had used.
func (c *Core) RestoreCredits(total float64) { c.credits = total }

// AddCredits counts credits an attempt used (status.usage) toward the run's
// and returns the run's total; at max_credits the run is out of credits.
func (c *Core) AddCredits(delta float64) (total float64) {
	c.credits += delta
	if max := c.plan.Cuelist.Limits.MaxCredits; max > 0 && c.credits >= max {
		c.Exhaust(Limit{Name: "max_credits", Credits: c.credits, MaxCredits: max})
	}
	return c.credits
}

// CheckDuration exhausts the run when max_duration has passed by now.
func (c *Core) CheckDuration(now time.Time) {
	if left, ok := c.DurationLeft(now); ok && left <= 0 {
		c.Exhaust(Limit{Name: "max_duration", Used: now.Sub(c.began), Max: c.plan.Cuelist.Limits.MaxDuration.D()})
	}
}

// DurationLeft is how long the run may still run under max_duration (a
// resumed run counts from its resumption); ok is false without the limit.
func (c *Core) DurationLeft(now time.Time) (left time.Duration, ok bool) {
	max := c.plan.Cuelist.Limits.MaxDuration.D()
	if max <= 0 {
		return 0, false
	}
	return max - now.Sub(c.began), true
}

// Began is when the run started or was continued (Begin's now).
func (c *Core) Began() time.Time { return c.began }
