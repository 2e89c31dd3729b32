package sched

import (
	"time"

	"github.com/orch-cli/orch/spec"
)

// A run on Temporal continues as a new workflow execution when its history
// grows long (engine/temporal/continue.go). It does so only at a quiet
// point, when no attempt runs and every cue not over waits (pending, or
// interrupted until orch go): there the core is a few numbers per cue, which
// Carry takes and Resume puts back exactly, deciding nothing (unlike
// Restore, which takes a crashed run back and starts what it left over).

// Carried is the core at a quiet point (Carry): each cue that is not a
// plain pending one with nothing behind it, the run's usage, its cooldowns
// and when it began.
type Carried struct {
	Cues []CarriedCue `json:",omitempty"`
	// Completed are the cues completed with neither outputs nor a reason,
	// as ranges of positions [from, to] (most cues of a long run: a few
	// bytes, not a few per cue).
	Completed [][2]int             `json:",omitempty"`
	Began     time.Time            // max_duration counts from here
	Credits   float64              `json:",omitempty"`
	CostUSD   float64              `json:",omitempty"`
	Cooldowns map[string]time.Time `json:",omitempty"`
	// Merges are the merges done at cues not over: such a cue goes on
	// from its merge's commit, not from a new merge.
	Merges []CarriedMerge `json:",omitempty"`
}

// CarriedMerge is a merge of the branches of cue Pos's dependencies, done
// (its attempt at the cue, its commit, what it took in).
type CarriedMerge struct {
	Pos, Attempt int
	Commit       string
	Sources      []MergeSource
}

// CarriedCue is one cue of the plan at a quiet point.
type CarriedCue struct {
	Pos      int
	State    State           `json:",omitempty"` // "": pending
	Reason   string          `json:",omitempty"`
	Attempts int             `json:",omitempty"`
	Approved bool            `json:",omitempty"`
	Outputs  map[string]any  `json:",omitempty"`
	Targets  []CarriedTarget `json:",omitempty"` // a pending cue's agents, when one was tried
	ItemIDs  []string        `json:",omitempty"` // a for_each cue over: its items
	ItemAtts map[string]int  `json:",omitempty"` // a pending for_each cue: its earlier items' attempts
}

// CarriedTarget is where one agent of a pending cue stands.
type CarriedTarget struct {
	Fallbacks, Tries int
	Parked           int            `json:",omitempty"` // an attempt paused for a GO, which its next launch takes again
	Outputs          map[string]any `json:",omitempty"`
}

// Hold stops the core from sending any more cues into WARNING: the attempts
// running go on to their ends, so that the run reaches a quiet point.
// Release lets them go again.
func (c *Core) Hold() { c.held = true }

// Release ends a Hold: every pending cue is looked at again.
func (c *Core) Release() {
	c.held = false
	for _, cr := range c.cues {
		if cr.state == Pending {
			c.touch(cr)
		}
	}
}

// Quiet reports whether the run is at a quiet point Carry can take: no
// cue is being prepared or in GO, no person is being asked, no merge runs,
// and no decision waits to be read.
func (c *Core) Quiet() bool {
	if c.asking > 0 || c.merges.active > 0 || len(c.out) > 0 || c.prepared > 0 || c.inGo > 0 {
		return false
	}
	for _, cr := range c.cues {
		switch {
		case cr.state.Final() || cr.state == Interrupted:
		case cr.state == Pending && cr.fan == nil:
			for _, t := range cr.targets {
				if t.attempt != 0 || t.phase != tIdle && t.phase != tDone {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// Carry takes the core at a quiet point (Quiet must hold). The items of
// fan-outs, all over, are not carried: their for_each cue's outputs are.
func (c *Core) Carry() Carried {
	out := Carried{Began: c.began, Credits: c.credits, CostUSD: c.costUSD}
	for agent, until := range c.cooldowns {
		if out.Cooldowns == nil {
			out.Cooldowns = map[string]time.Time{}
		}
		out.Cooldowns[agent] = until
	}
	for _, cr := range c.cues[:len(c.plan.Order)] {
		cc := CarriedCue{Pos: cr.pos, Reason: cr.reason, Attempts: cr.attempts, Approved: cr.approved, Outputs: cr.outputs, ItemAtts: cr.itemAttempts}
		if cr.state != Pending {
			cc.State = cr.state
		}
		if cr.fan != nil {
			for _, it := range cr.fan.items {
				cc.ItemIDs = append(cc.ItemIDs, it.spec.ID)
			}
		} else {
			cc.ItemIDs = cr.itemIDs
		}
		if cr.state == Pending {
			for _, t := range cr.targets {
				if t.fallbacks > 0 || t.tries > 0 || t.parked != 0 || t.phase == tDone {
					cc.Targets = carriedTargets(cr)
					break
				}
			}
		}
		if cr.state.Final() {
			cc.Attempts = 0 // a cue over starts no attempt again
			if cr.state == Completed && cc.Reason == "" && cc.Outputs == nil && cc.ItemIDs == nil {
				out.addCompleted(cr.pos)
				continue
			}
		}
		if cc.State == "" && cc.Reason == "" && cc.Attempts == 0 && !cc.Approved && cc.Outputs == nil && cc.Targets == nil && cc.ItemAtts == nil {
			continue // a plain pending cue: New makes it so
		}
		out.Cues = append(out.Cues, cc)
	}
	c.carryMerges(&out)
	return out
}

// carryMerges adds the merges done at cues not over, in plan order.
func (c *Core) carryMerges(out *Carried) {
	for _, cr := range c.cues {
		if j := c.merges.job(cr.pos); j != nil && j.phase == mDone && !cr.state.Final() {
			out.Merges = append(out.Merges, CarriedMerge{Pos: cr.pos, Attempt: j.attempt, Commit: j.commit, Sources: j.sources})
		}
	}
}

// resumeMerges puts the carried merges back, done.
func (c *Core) resumeMerges(k Carried) {
	for _, m := range k.Merges {
		if m.Pos < 0 || m.Pos >= len(c.cues) {
			continue
		}
		cr := c.cues[m.Pos]
		if c.merges.jobs == nil {
			c.merges.jobs = map[int]*mergeJob{}
		}
		c.merges.jobs[m.Pos] = &mergeJob{id: m.Pos, anchor: cr, attempt: m.Attempt, policy: spec.MergeOf(c.plan.Cuelist, cr.spec.Cue),
			sources: m.Sources, phase: mDone, commit: m.Commit}
	}
}

func (k *Carried) addCompleted(pos int) {
	if n := len(k.Completed); n > 0 && k.Completed[n-1][1] == pos-1 {
		k.Completed[n-1][1] = pos
		return
	}
	k.Completed = append(k.Completed, [2]int{pos, pos})
}

func carriedTargets(cr *cue) []CarriedTarget {
	out := make([]CarriedTarget, len(cr.targets))
	for i, t := range cr.targets {
		out[i] = CarriedTarget{Fallbacks: t.fallbacks, Tries: t.tries, Parked: t.parked}
		if t.phase == tDone {
			out[i].Outputs = t.outputs
			if out[i].Outputs == nil {
				out[i].Outputs = map[string]any{}
			}
		}
	}
	return out
}

// Resume puts a carried core back, after New and before Begin, deciding
// nothing: the run goes on from where Carry took it. Begin's now is not
// when the run began: Resumed sets that back after Begin.
func (c *Core) Resume(k Carried) {
	c.credits, c.costUSD = k.Credits, k.CostUSD
	for agent, until := range k.Cooldowns {
		c.cooldowns[agent] = until
	}
	c.resumeMerges(k)
	for _, r := range k.Completed {
		for pos := max(r[0], 0); pos <= r[1] && pos < len(c.plan.Order); pos++ {
			c.cues[pos].state = Completed
		}
	}
	for _, cc := range k.Cues {
		if cc.Pos < 0 || cc.Pos >= len(c.plan.Order) {
			continue
		}
		cr := c.cues[cc.Pos]
		cr.reason, cr.attempts, cr.approved, cr.outputs, cr.itemAttempts = cc.Reason, cc.Attempts, cc.Approved, cc.Outputs, cc.ItemAtts
		cr.itemIDs = cc.ItemIDs
		if cc.State != "" {
			cr.state = cc.State
		}
		if cr.state.Final() && len(cr.outputs) > 0 {
			c.withOutputs.Add(cr.spec)
		}
		if cr.state != Pending && !cr.state.Final() {
			c.live[cr] = true // interrupted: waiting for orch go
		}
		for i, t := range cc.Targets {
			if i >= len(cr.targets) {
				break
			}
			tg := &cr.targets[i]
			tg.fallbacks, tg.tries, tg.parked = t.Fallbacks, t.Tries, t.Parked
			if t.Fallbacks > 0 {
				listed := c.plan.Agents[tg.listed]
				if t.Fallbacks <= len(listed.Fallback) {
					tg.agent = c.plan.Agents[listed.Fallback[t.Fallbacks-1]]
				}
			}
			if t.Outputs != nil {
				tg.phase, tg.outputs = tDone, t.Outputs
			}
		}
	}
}

// Resumed sets when the run began (max_duration), after Begin.
func (c *Core) Resumed(began time.Time) {
	if !began.IsZero() {
		c.began = began
	}
}
