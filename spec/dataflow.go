package spec

import (
	"fmt"
	"sort"
)

// dataFlow is the static data-flow check, a kind of type check: every key an
// agent requires must reach its cue, from the cue's inputs, the cuelist's inputs
// or the provides of an agent of an ancestor cue. Fallback agents run in the
// same place, so their requires are checked too.
//
// Keys available at each cue are propagated in topological order as bitsets
// over the provided keys: linear in the graph times the number of keys/64.
func (c *checker) dataFlow(cl *Cuelist, g *CueGraph) {
	order, ok := g.Order()
	if !ok {
		return
	}
	keyBit := map[string]int{}
	for _, cue := range cl.Cues {
		for _, p := range c.cueProvides(cue) {
			if _, ok := keyBit[p]; !ok {
				keyBit[p] = len(keyBit)
			}
		}
	}
	words := (len(keyBit) + 63) / 64
	avail := make([][]uint64, len(cl.Cues)) // keys provided by ancestors
	own := make([][]uint64, len(cl.Cues))   // keys provided by the cue's own agents
	unknown := make([]bool, len(cl.Cues))   // the cue or an ancestor names something unknown
	for _, v := range order {
		avail[v] = make([]uint64, words)
		own[v] = make([]uint64, words)
		unknown[v] = c.unknown[cl.Cues[v]]
		for _, u := range g.Pred[v] {
			for w := range words {
				avail[v][w] |= avail[u][w] | own[u][w]
			}
			unknown[v] = unknown[v] || unknown[u]
		}
		for _, p := range c.cueProvides(cl.Cues[v]) {
			b := keyBit[p]
			own[v][b/64] |= 1 << (b % 64)
		}
	}
	clashes, reported := c.inputClashes(cl), map[string]bool{}
	for v, cue := range cl.Cues {
		if unknown[v] {
			continue // what reaches it is not known: the unknown name is the error
		}
		has := func(key string) bool {
			if _, ok := cue.Inputs[key]; ok {
				return true
			}
			if _, ok := cl.Inputs[key]; ok {
				return true
			}
			b, ok := keyBit[key]
			return ok && avail[v][b/64]&(1<<(b%64)) != 0
		}
		for _, group := range clashes {
			c.inputVarClash(cl, cue, group, has, reported)
		}
		for i, id := range cue.Agents {
			a := c.agents[id]
			if a == nil {
				continue
			}
			c.requiresMet(cue, Pointer("agents", i), a, "", has)
			for _, fb := range a.Fallback {
				if fa := c.agents[fb]; fa != nil {
					c.requiresMet(cue, Pointer("agents", i), fa, fmt.Sprintf(" (fallback of %q)", a.ID), has)
				}
			}
		}
	}
}

// cueProvides lists the keys a cue's agents provide, with the exports
// already reported as provided by none of them (reported once, not again at
// every cue that requires them).
func (c *checker) cueProvides(cue *Cue) []string {
	var keys []string
	for _, id := range cue.Agents {
		if a := c.agents[id]; a != nil {
			keys = append(keys, a.Provides...)
		}
	}
	if cue.AcceptChildExports {
		for _, a := range c.childAgents(cue) {
			keys = append(keys, a.Provides...)
		}
	}
	return append(keys, c.badExports[cue]...)
}

func (c *checker) requiresMet(cue *Cue, ptr string, a *Agent, note string, has func(string) bool) {
	var missing []string
	for _, r := range a.Requires {
		if !has(r) {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return
	}
	sort.Strings(missing)
	c.errorAt(cue.Origin, ptr, "missing-input",
		"agent %q%s requires %s, which cue %s does not receive: not in the cue's or the cuelist's inputs, and no agent of an earlier cue provides %s",
		a.ID, note, quoteList(missing), cue.ID, pronoun(len(missing)))
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
