package planner

import (
	"github.com/orch-cli/orch/spec"
)

// forEachDiags checks what a fan-out's from names, as a condition's
// CUE.key is checked: the cue must depend on CUE (directly or not), so that
// its output is known when the list is read, and CUE's agents must provide
// the key. It warns when an agent's concurrency holds the items back (see
// concurrencyDiags).
func forEachDiags(p *Plan) spec.Diagnostics {
	var diags spec.Diagnostics
	isCue := func(id string) bool { return p.ByID[id] != nil }
	for _, c := range p.Cues {
		f := c.ForEach
		if f == nil {
			continue
		}
		if f.From != "" {
			diags = append(diags, fromDiags(p, c, isCue)...)
		}
		diags = append(diags, concurrencyDiags(p, c)...)
	}
	return diags
}

// fromDiags checks one fan-out's from.
func fromDiags(p *Plan, c *Cue, isCue func(string) bool) spec.Diagnostics {
	var diags spec.Diagnostics
	f := c.ForEach
	ptr := "/for_each/from"
	id, key, ok := f.Source(isCue)
	if !ok {
		diags.Add(spec.Error, c.At(ptr), c.Ptr+ptr, "unknown-cue",
			"for_each of cue %s reads %q, which names no cue of cuelist %s: from is CUE.key, an output of a cue it depends on", c.ID, f.From, p.Cuelist.ID)
		return diags
	}
	up := p.ByID[id]
	if up == c || !p.Reaches(up, c) {
		diags.Add(spec.Error, c.At(ptr), c.Ptr+ptr, "for-each-not-upstream",
			"for_each of cue %s reads an output of cue %s, which it does not depend on (directly or not): the list is not known when %s starts (add %s to its dependencies)",
			c.ID, id, c.ID, id)
		return diags
	}
	provided, known := cueProvides(p, up)
	if known && len(provided) > 0 && !provided[key] {
		diags.Add(spec.Error, c.At(ptr), c.Ptr+ptr, "unknown-output",
			"for_each of cue %s reads output %q of cue %s, which none of its agents provides (they provide %s)",
			c.ID, key, id, keyList(provided))
	} else if known && len(provided) == 0 {
		diags.Add(spec.Error, c.At(ptr), c.Ptr+ptr, "unknown-output",
			"for_each of cue %s reads output %q of cue %s, whose agents provide nothing: add %s to an agent's provides",
			c.ID, key, id, key)
	}
	return diags
}

// concurrencyDiags warns when the items of fan-out c can never be as many
// in GO at once as its max_parallel says (an agent serves at most its
// concurrency of cues, and items, at once), or, without max_parallel, when
// an agent that serves one cue at a time (concurrency left out) runs them
// one after another: max_parallel: 1 says that is meant.
func concurrencyDiags(p *Plan, c *Cue) spec.Diagnostics {
	var diags spec.Diagnostics
	f := c.ForEach
	if f.From == "" && len(f.Items) < 2 {
		return nil
	}
	for _, id := range c.Agents {
		a := p.Agents[id]
		switch {
		case a == nil:
		case f.MaxParallel > a.MaxConcurrency():
			diags.Add(spec.Warning, c.At("/for_each/max_parallel"), c.Ptr+"/for_each/max_parallel", "for-each-concurrency",
				"the items of cue %s run at most %d at a time, not %d: agent %s serves %d cue(s) at once (set its concurrency: %d)",
				c.ID, a.MaxConcurrency(), f.MaxParallel, a.ID, a.MaxConcurrency(), f.MaxParallel)
		case f.MaxParallel == 0 && a.Concurrency == 0:
			diags.Add(spec.Warning, c.At("/for_each"), c.Ptr+"/for_each", "for-each-concurrency",
				"the items of cue %s run one at a time: agent %s serves one cue at once (set its concurrency, or max_parallel: 1 to say it is meant)",
				c.ID, a.ID)
		}
	}
	return diags
}
