package sched

import "time"

// Limit is the limit a run ran out of (its cuelist's limits): from then on
// no GO is given, and the runner stops the run.
type Limit struct {
	Name string // max_credits, max_cost_usd or max_duration

	Credits, MaxCredits float64       // max_credits: the run's credits and the limit
	CostUSD, MaxCostUSD float64       // max_cost_usd: the run's cost and the limit
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

// RestoreUsage takes back the credits and cost a resumed run had used.
func (c *Core) RestoreUsage(credits, costUSD float64) { c.credits, c.costUSD = credits, costUSD }

// Used is what the run's agents reported they used so far.
func (c *Core) Used() (credits, costUSD float64) { return c.credits, c.costUSD }

// AddUsage counts the credits and cost an attempt used (what it reported
// since its last report) toward the run's; at max_credits or max_cost_usd
// the run is out of that limit (credits are checked first).
func (c *Core) AddUsage(credits, costUSD float64) {
	c.credits += credits
	c.costUSD += costUSD
	limits := c.plan.Cuelist.Limits
	if max := limits.MaxCredits; max > 0 && c.credits >= max {
		c.Exhaust(Limit{Name: "max_credits", Credits: c.credits, MaxCredits: max})
	}
	if max := limits.MaxCostUSD; max > 0 && c.costUSD >= max {
		c.Exhaust(Limit{Name: "max_cost_usd", CostUSD: c.costUSD, MaxCostUSD: max})
	}
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
