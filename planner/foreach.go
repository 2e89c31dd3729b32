package planner

import (
	"github.com/orch-cli/orch/spec"
)

// forEachDiags checks what a fan-out's from names, as a condition's
// CUE.key is checked: the cue must depend on CUE (directly or not), so that
// its output is known when the list is read, and CUE's agents must provide
// the key when they declare what they provide. It warns when the items can
// never be as many in GO at once as max_parallel says: an agent serves at
// most its concurrency of cues (and items) at once.
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
		want, ptr := f.MaxParallel, "/for_each/max_parallel"
		if want == 0 {
			want, ptr = p.Cuelist.MaxParallel, "/for_each"
			if want <= 0 {
				want = 4 // the runner's default max_parallel
			}
		}
		if f.From == "" {
			want = min(want, len(f.Items))
		}
		for _, id := range c.Agents {
			a := p.Agents[id]
			if a == nil || want <= a.MaxConcurrency() {
				continue
			}
			diags.Add(spec.Warning, c.At(ptr), c.Ptr+ptr, "for-each-concurrency",
				"the items of cue %s run at most %d at a time, not %d: agent %s serves %d cue(s) at once (set its concurrency: %d)",
				c.ID, a.MaxConcurrency(), want, a.ID, a.MaxConcurrency(), want)
		}
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
