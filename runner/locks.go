package runner

import (
	"fmt"
	"sort"

	"github.com/orch-cli/orch/protocols"
)

// subject is something cues hold while in GO: a resource (one unit per
// claim), an agent (one of its concurrency slots) or an output target.
type subject struct{ kind, name string }

// locks counts the holders of each subject. It lives in the loop alone; a
// resumed run starts with none held (in-flight cues were reset and the dead
// owner's agents killed), so the count is always that of cues in GO.
type locks struct {
	holders map[subject]map[*cueRun]bool
	waiters map[subject]map[*cueRun]bool
	told    map[[2]any]bool // (cue, subject) pairs already recorded as a conflict
}

func newLocks() *locks {
	return &locks{holders: map[subject]map[*cueRun]bool{}, waiters: map[subject]map[*cueRun]bool{}, told: map[[2]any]bool{}}
}

// subjects lists what a cue holds in GO, without repeats.
func (r *run) subjects(c *cueRun) []subject {
	seen := map[subject]bool{}
	var out []subject
	add := func(s subject) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, name := range c.cue.Claims {
		add(subject{"resource", name})
	}
	for _, t := range c.targets {
		add(subject{"timing", t.agent.ID})
	}
	for _, o := range c.cue.Outputs {
		add(subject{"output", o})
	}
	return out
}

func (r *run) capacity(s subject) int {
	switch s.kind {
	case "resource":
		if n := r.plan.Cuelist.Resources[s.name]; n > 0 {
			return n
		}
	case "timing":
		if a := r.plan.Agents[s.name]; a != nil {
			return a.MaxConcurrency()
		}
	}
	return 1
}

// acquire takes every subject the cue needs for GO, or none: then the cue
// waits (it is woken when a holder lets go) and the conflict is recorded.
func (r *run) acquire(c *cueRun) bool {
	subs := r.subjects(c)
	var busy []subject
	for _, s := range subs {
		if len(r.locks.holders[s]) >= r.capacity(s) {
			busy = append(busy, s)
		}
	}
	if len(busy) > 0 {
		for _, s := range busy {
			if r.locks.waiters[s] == nil {
				r.locks.waiters[s] = map[*cueRun]bool{}
			}
			r.locks.waiters[s][c] = true
			r.conflict(c, s)
		}
		return false
	}
	for _, s := range subs {
		if r.locks.holders[s] == nil {
			r.locks.holders[s] = map[*cueRun]bool{}
		}
		r.locks.holders[s][c] = true
		delete(r.locks.waiters[s], c)
	}
	c.holding = subs
	return true
}

// release lets go of what the cue held and wakes the cues waiting for it.
func (r *run) release(c *cueRun) {
	for _, s := range c.holding {
		delete(r.locks.holders[s], c)
		for w := range r.locks.waiters[s] {
			r.touch(w)
		}
	}
	c.holding = nil
}

// conflict records, once per cue and subject, that the cue waits for a
// subject others hold, and tells the waiting agents (escalation.conflict).
func (r *run) conflict(c *cueRun, s subject) {
	key := [2]any{c, s}
	if r.locks.told[key] {
		return
	}
	r.locks.told[key] = true
	var holders []*cueRun
	for h := range r.locks.holders[s] {
		holders = append(holders, h)
	}
	sort.Slice(holders, func(i, j int) bool { return holders[i].pos < holders[j].pos })
	cues := []string{}
	agents := map[string]bool{}
	for _, h := range append(holders, c) {
		cues = append(cues, h.cue.ID)
		for _, a := range h.cue.Agents {
			agents[a] = true
		}
	}
	d := ConflictData{ConflictType: s.kind, CuesInvolved: cues, AgentsInvolved: sortedKeys(agents), ResourceInQuestion: s.name,
		Capacity: r.capacity(s), ProposedResolution: r.plan.Strategy}
	if len(holders) > 0 {
		d.Winner = holders[0].cue.ID
		if len(holders[0].cue.Agents) > 0 {
			d.SuggestedWinner = holders[0].cue.Agents[0]
		}
	}
	holding := make([]string, len(holders))
	for i, h := range holders {
		holding[i] = h.cue.ID
	}
	d.Reason = fmt.Sprintf("%s %s is held by %s (capacity %d): %s waits in STANDBY until it is free",
		s.kind, s.name, join(holding), d.Capacity, c.cue.ID)
	if r.plan.Strategy == "fcfs" {
		d.Reason = "first come, first served: " + d.Reason
	}
	r.emit(Event{Type: EvConflict, Cue: c.cue.ID, Reason: d.Reason, Data: d})
	for _, t := range c.targets {
		if a := t.att; a != nil && a.agent.Protocol == "jsonl" {
			m := r.outbound(a, protocols.EscalationConflict{ConflictType: d.ConflictType, CuesInvolved: d.CuesInvolved,
				AgentsInvolved: d.AgentsInvolved, ResourceInQuestion: d.ResourceInQuestion, ProposedResolution: d.ProposedResolution,
				Winner: d.Winner, SuggestedWinner: d.SuggestedWinner, Reason: d.Reason})
			r.then(func() { a.tell(m) })
		}
	}
}

// tell writes an already recorded message to the attempt's agent, if it has
// a live process; it is information, so a failure to write is not one.
func (a *attempt) tell(m *wireMessage) {
	a.r.procsMu.Lock()
	ap := a.r.procs[a.agent.ID]
	a.r.procsMu.Unlock()
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
