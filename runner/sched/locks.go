package sched

import "sort"

// locks counts the holders of each subject. A resumed run starts with none
// held (in-flight cues were reset and the dead owner's agents killed), so
// the count is always that of cues in GO.
type locks struct {
	holders map[Subject]map[*cue]bool
	waiters map[Subject]map[*cue]bool
	told    map[told]bool // (cue, subject) pairs already recorded as a conflict
}

type told struct {
	cue *cue
	s   Subject
}

func newLocks() locks {
	return locks{holders: map[Subject]map[*cue]bool{}, waiters: map[Subject]map[*cue]bool{}, told: map[told]bool{}}
}

// subjects lists what a cue holds in GO, without repeats.
func (c *Core) subjects(cr *cue) []Subject {
	seen := map[Subject]bool{}
	var out []Subject
	add := func(s Subject) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, name := range cr.spec.Claims {
		add(Subject{"resource", name})
	}
	for _, t := range cr.targets {
		add(Subject{"timing", t.agent.ID})
	}
	for _, o := range cr.spec.Outputs {
		add(Subject{"output", o})
	}
	return out
}

// Capacity is how many cues may hold s at once.
func (c *Core) Capacity(s Subject) int {
	switch s.Kind {
	case "resource":
		if n := c.plan.Cuelist.Resources[s.Name]; n > 0 {
			return n
		}
	case "timing":
		if a := c.plan.Agents[s.Name]; a != nil {
			return a.MaxConcurrency()
		}
	}
	return 1
}

// acquire takes every subject the cue needs for GO, or none: then the cue
// waits (it is woken when a holder lets go) and the conflict is recorded.
func (c *Core) acquire(cr *cue) bool {
	subs := c.subjects(cr)
	var busy []Subject
	for _, s := range subs {
		if len(c.locks.holders[s]) >= c.Capacity(s) {
			busy = append(busy, s)
		}
	}
	if len(busy) > 0 {
		for _, s := range busy {
			if c.locks.waiters[s] == nil {
				c.locks.waiters[s] = map[*cue]bool{}
			}
			c.locks.waiters[s][cr] = true
			c.conflict(cr, s)
		}
		return false
	}
	for _, s := range subs {
		if c.locks.holders[s] == nil {
			c.locks.holders[s] = map[*cue]bool{}
		}
		c.locks.holders[s][cr] = true
		delete(c.locks.waiters[s], cr)
	}
	cr.holding = subs
	return true
}

// release lets go of what the cue held and wakes the cues waiting for it.
func (c *Core) release(cr *cue) {
	for _, s := range cr.holding {
		delete(c.locks.holders[s], cr)
		for w := range c.locks.waiters[s] {
			c.touch(w)
		}
	}
	cr.holding = nil
}

// conflict decides, once per cue and subject, to record that the cue waits
// for a subject others hold (and to tell its agents).
func (c *Core) conflict(cr *cue, s Subject) {
	key := told{cr, s}
	if c.locks.told[key] {
		return
	}
	c.locks.told[key] = true
	holders := make([]int, 0, len(c.locks.holders[s]))
	for h := range c.locks.holders[s] {
		holders = append(holders, h.pos)
	}
	sort.Ints(holders)
	c.decide(Decision{Kind: Conflict, Cue: cr.pos, Subject: s, Capacity: c.Capacity(s), Holders: holders})
}
