// Package planner compiles a validated cuelist into an immutable plan: the DAG
// of cues (a dominikbraun/graph directed graph), a stable topological order,
// waves, the critical path, conflicts between cues that may run at the same
// time with the arbitration decided for each, and every agent's effective tool
// policy. The runner executes a Plan; `orch plan` shows one.
package planner

import (
	"math/bits"
	"sort"
	"time"

	"github.com/dominikbraun/graph"

	"github.com/orch-cli/orch/spec"
)

// DefaultEstimate is a cue's expected duration when it has no estimate.
const DefaultEstimate = time.Minute

// Plan is a compiled cuelist. It is never changed after Build returns.
type Plan struct {
	Cuelist   *spec.Cuelist
	Agents    map[string]*spec.Agent // every agent the cues target, with their fallbacks and handoff_to receivers, and the merges' resolvers
	Cues      []*Cue                 // in file order
	ByID      map[string]*Cue
	Graph     graph.Graph[string, *Cue] // dependency, auto_follow and arbitration edges; the edges of one kind (and subject) share their Attributes map
	Order     []*Cue                    // stable topological order (file order breaks ties)
	Waves     [][]*Cue                  // cues by level: wave n needs only cues of earlier waves
	Critical  CriticalPath
	Strategy  string // arbitration: priority, fcfs or orchestrator
	Conflicts []*Conflict
	Tools     []AgentTools // effective tools per agent, by agent id

	ancestors closure // ancestors[v] has u when u must complete before v (dependencies and auto_follow)
}

// Cue is one cue of the plan.
type Cue struct {
	*spec.Cue
	Index     int           // position in the cuelist
	Deps      []*Cue        // cues that must complete first: dependencies, and cues whose auto_follow is this one
	After     []*Cue        // cues the arbitration put before this one (ordering edges)
	Next      []*Cue        // cues that wait for this one (either kind of edge)
	FollowsOf *Cue          // the cue whose auto_follow starts this one, if any
	Wave      int           // 0-based level in the final graph
	Estimate  time.Duration // estimate, or DefaultEstimate
	Remaining time.Duration // longest estimated path from this cue's start to the end of the plan
	Critical  bool          // on the critical path
	Priority  int           // effective priority: the cue's, else the highest of its agents'
}

// CriticalPath is the longest chain of cues by estimate.
type CriticalPath struct {
	Length time.Duration
	Cues   []*Cue
}

// Build compiles one cuelist of a loaded, valid set. Diagnostics are errors
// the plan could not be built around (cycles are reported by spec.Check) and
// conflicts no ordering can resolve.
func Build(set *spec.Set, cl *spec.Cuelist) (*Plan, spec.Diagnostics) {
	b := &builder{set: set, agents: set.AgentIndex()}
	return b.build(cl)
}

type builder struct {
	set    *spec.Set
	agents map[string]*spec.Agent
	diags  spec.Diagnostics
}

func (b *builder) build(cl *spec.Cuelist) (*Plan, spec.Diagnostics) {
	p := b.skeleton(cl)
	p.Graph = graph.New(func(c *Cue) string { return c.ID }, graph.Directed())
	for _, c := range p.Cues {
		_ = p.Graph.AddVertex(c)
	}
	// The edges of one kind share one attribute map (a map per edge was a
	// quarter of a 10,000-cue plan's memory): the plan is never changed.
	dependency := graph.EdgeAttributes(map[string]string{"kind": "dependency"})
	autoFollow := graph.EdgeAttributes(map[string]string{"kind": "auto_follow"})
	for _, c := range p.Cues {
		for _, dep := range c.Dependencies {
			if d := p.ByID[dep]; d != nil {
				_ = p.Graph.AddEdge(d.ID, c.ID, dependency)
			}
		}
		if f := p.ByID[c.AutoFollow]; f != nil {
			_ = p.Graph.AddEdge(c.ID, f.ID, autoFollow)
		}
	}
	adj, err := newAdjacency(p)
	if err != nil {
		b.diags.Add(spec.Error, cl.At(""), cl.Ptr, "internal", "building the graph of cuelist %s: %v", cl.ID, err)
		return nil, b.diags
	}
	order, ok := adj.kahn(func(a, c int) bool { return a < c })
	if !ok {
		b.diags.Add(spec.Error, cl.At(""), cl.Ptr, "cycle", "cuelist %s has a dependency cycle; it cannot be planned", cl.ID)
		return nil, b.diags
	}
	p.ancestors = adj.ancestors(order)
	adj.remaining(p, order)
	b.arbitrate(p, adj, order)
	b.finish(p, adj)
	p.Tools = b.tools(p)
	return p, b.diags
}

// skeleton creates the plan's cues (the first of duplicate ids only) and
// collects the agents they use.
func (b *builder) skeleton(cl *spec.Cuelist) *Plan {
	p := &Plan{Cuelist: cl, Agents: map[string]*spec.Agent{}, ByID: map[string]*Cue{}, Strategy: cl.Arbitration}
	if p.Strategy == "" {
		p.Strategy = "priority"
	}
	for _, sc := range cl.Cues {
		if _, dup := p.ByID[sc.ID]; dup || sc.ID == "" {
			continue // reported by spec.Check
		}
		c := &Cue{Cue: sc, Index: len(p.Cues), Estimate: sc.Estimate.D(), Priority: b.priority(sc)}
		if c.Estimate <= 0 {
			c.Estimate = DefaultEstimate
		}
		p.Cues = append(p.Cues, c)
		p.ByID[c.ID] = c
		for _, id := range sc.Agents {
			b.addAgent(p, id)
		}
		if m := sc.Merge; m != nil && m.Agent != "" { // the resolver of its merge's conflicts
			b.addAgent(p, m.Agent)
		}
	}
	if m := cl.Defaults.Merge; m != nil && m.Agent != "" {
		b.addAgent(p, m.Agent)
	}
	for _, c := range p.Cues {
		if f := p.ByID[c.AutoFollow]; f != nil {
			f.FollowsOf = c
		}
	}
	return p
}

// priority is a cue's priority for arbitration: its own, else the highest of
// its agents' (0 when none is set).
func (b *builder) priority(c *spec.Cue) int {
	if c.Priority != nil {
		return *c.Priority
	}
	best, found := 0, false
	for _, id := range c.Agents {
		if a := b.agents[id]; a != nil && (!found || a.Priority > best) {
			best, found = a.Priority, true
		}
	}
	return best
}

// addAgent records an agent the plan uses, with the fallbacks it may be
// replaced by and the agents it may hand work to or spawn (handoff_to): a
// run may start any of them.
func (b *builder) addAgent(p *Plan, id string) {
	a := b.agents[id]
	if a == nil || p.Agents[id] != nil {
		return
	}
	p.Agents[id] = a
	for _, fb := range a.Fallback {
		b.addAgent(p, fb)
	}
	for _, to := range a.HandoffTo {
		b.addAgent(p, to)
	}
}

// finish derives the final order, waves and critical path from the graph with
// the arbitration edges, and wires each cue's neighbours.
func (b *builder) finish(p *Plan, adj *adjacency) {
	for v := range adj.succ { // arbitration appended edges: restore the sorted order
		sort.Ints(adj.succ[v])
		sort.Ints(adj.pred[v])
	}
	order, ok := adj.kahn(func(a, c int) bool { return a < c })
	if !ok {
		panic("planner: an arbitration edge closed a cycle") // arbitrate only adds forward edges
	}
	p.Order = make([]*Cue, len(order))
	for i, v := range order {
		p.Order[i] = p.Cues[v]
	}
	for v, c := range p.Cues {
		for _, u := range adj.pred[v] {
			if adj.kind(u, v) == "arbitration" {
				c.After = append(c.After, p.Cues[u])
			} else {
				c.Deps = append(c.Deps, p.Cues[u])
			}
		}
		for _, w := range adj.succ[v] {
			c.Next = append(c.Next, p.Cues[w])
		}
	}
	adj.waves(p, order)
	adj.critical(p, order)
}

// WithoutGraph returns a copy of the plan that shares everything but the
// library graph, and leaves p as it is. Ordering, reachability and lanes
// are computed from the graph at Build and kept, the renderings do not need
// it, and a run holds its plan to the end: for 10k cues the graph is ~35 MB
// of maps and attributes.
func (p *Plan) WithoutGraph() *Plan {
	q := *p
	q.Graph = nil
	return &q
}

// Reaches reports whether a must complete before b starts, through
// dependencies and auto_follow (not arbitration).
func (p *Plan) Reaches(a, b *Cue) bool { return p.ancestors[b.Index].has(a.Index) }

// Concurrent reports whether a and b may run at the same time: neither
// depends on the other, directly or transitively.
func (p *Plan) Concurrent(a, b *Cue) bool {
	return a != b && !p.Reaches(a, b) && !p.Reaches(b, a)
}

// EachAncestorIn calls f for every cue that must complete before c and whose
// index is set in mask (a bitset over Cue.Index, as from NewCueSet): the
// runner asks only about cues that produced outputs.
func (p *Plan) EachAncestorIn(c *Cue, mask CueSet, f func(*Cue)) {
	row := &p.ancestors[c.Index]
	for w := row.off; w < row.end(); w++ {
		word := row.word(w) & mask[w]
		for word != 0 {
			f(p.Cues[w*64+bits.TrailingZeros64(word)])
			word &= word - 1
		}
	}
}

// CueSet is a set of cues of one plan, by Cue.Index.
type CueSet []uint64

// NewCueSet returns an empty set sized for the plan.
func (p *Plan) NewCueSet() CueSet { return CueSet(newBitset(len(p.Cues))) }

// Add puts c in the set.
func (s CueSet) Add(c *Cue) { bitset(s).set(c.Index) }

// Ancestors returns every cue that must complete before c, in file order.
func (p *Plan) Ancestors(c *Cue) []*Cue {
	var out []*Cue
	p.ancestors[c.Index].each(func(i int) { out = append(out, p.Cues[i]) })
	return out
}

// WaitsFor lists the cues c waits for, each once: its dependencies, then
// the arbitration's ordering edges (what a run records as the DAG's edges).
func (c *Cue) WaitsFor() []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]*Cue{c.Deps, c.After} {
		for _, d := range list {
			if !seen[d.ID] {
				seen[d.ID] = true
				out = append(out, d.ID)
			}
		}
	}
	return out
}
