package planner

import (
	"container/heap"
	"fmt"
	"sort"

	"github.com/dominikbraun/graph"

	"github.com/orch-cli/orch/spec"
)

// Conflict is one arbitration decision between cues that may run at the same
// time, in the seeds' escalation.conflict form.
type Conflict struct {
	Type     string // "resource", "timing" (one agent beyond its concurrency) or "output"
	Cues     []*Cue // the cues involved; with a winner, the winner first
	Agents   []string
	Subject  string // resource_in_question: the resource, agent or output target
	Capacity int    // how many may hold the subject at once
	Strategy string // proposed_resolution: priority, fcfs or orchestrator
	Winner   *Cue   // the cue that goes first; nil when decided at run time (fcfs)
	Ordered  bool   // an ordering edge winner -> other was added to the plan
	Reason   string
}

// SuggestedWinner is the winner's first agent, as the seed format names it.
func (c *Conflict) SuggestedWinner() string {
	if c.Winner == nil || len(c.Winner.Agents) == 0 {
		return ""
	}
	return c.Winner.Agents[0]
}

// bucket is a set of cues competing for one subject with a capacity.
type bucket struct {
	kind     string
	subject  string
	capacity int
	members  []int // cue indices, file order
}

// buckets groups cues by resource claimed, agent targeted and output declared.
// Only groups larger than their capacity can conflict; nothing compares all
// pairs of cues. A cue that alone needs more than a subject's capacity (an
// agent listed twice, a resource claimed twice) is a conflict no ordering can
// resolve: an error at the repeated reference.
func (b *builder) buckets(p *Plan) []bucket {
	type key struct{ kind, subject string }
	groups := map[key][]int{}
	capacityOf := func(k key) int {
		switch k.kind {
		case "resource":
			if n, ok := p.Cuelist.Resources[k.subject]; ok && n > 0 {
				return n
			}
		case "timing":
			if a := b.agents[k.subject]; a != nil {
				return a.MaxConcurrency()
			}
		}
		return 1
	}
	for _, c := range p.Cues {
		demand := map[key]int{}
		add := func(kind, subject, field string, i int) {
			k := key{kind, subject}
			demand[k]++
			if demand[k] == 1 {
				groups[k] = append(groups[k], c.Index)
			} else if kind != "output" && demand[k] > capacityOf(k) {
				ptr := spec.Pointer(field, i)
				b.diags.Add(spec.Error, c.At(ptr), c.Ptr+ptr, "unresolvable-conflict",
					"cue %s needs %s %q %d times at once, but %s: no ordering can resolve this", c.ID, noun(kind), subject, demand[k], capacityText(kind, capacityOf(k)))
			}
		}
		for i, r := range c.Claims {
			add("resource", r, "claims", i)
		}
		for i, a := range c.Agents {
			add("timing", a, "agents", i)
		}
		for i, o := range c.Outputs {
			add("output", o, "outputs", i)
		}
	}
	var out []bucket
	for k, members := range groups {
		if capacity := capacityOf(k); len(members) > capacity {
			out = append(out, bucket{k.kind, k.subject, capacity, members})
		}
	}
	kindOrder := map[string]int{"resource": 0, "timing": 1, "output": 2}
	sort.Slice(out, func(i, j int) bool {
		if out[i].kind != out[j].kind {
			return kindOrder[out[i].kind] < kindOrder[out[j].kind]
		}
		return out[i].subject < out[j].subject
	})
	return out
}

func noun(kind string) string {
	if kind == "timing" {
		return "agent"
	}
	return kind
}

func capacityText(kind string, n int) string {
	if kind == "timing" {
		return fmt.Sprintf("it serves %d cue(s) at a time (concurrency)", n)
	}
	return fmt.Sprintf("its capacity is %d", n)
}

// arbitrate finds the conflicts and decides them by the cuelist's strategy.
//
// For each bucket, its members are put in a linear extension of the current
// order (dependencies plus the ordering edges decided so far) that prefers the
// strategy's winner whenever the order allows; then member i must complete
// before member i+capacity starts. Any capacity+1 members then include two
// that are ordered, so the subject is never over-booked; and every new edge
// goes forward in an order the graph already admits, so no edge can close a
// cycle: when the preferred winner cannot go first, the other order is chosen
// and the reason says so.
func (b *builder) arbitrate(p *Plan, adj *adjacency, order []int) {
	buckets := b.buckets(p)
	if len(buckets) == 0 {
		return // nothing shared: no n×n descendants matrix to build
	}
	desc := adj.descendants(order) // grows with each decision
	first := b.ranking(p)
	for _, bk := range buckets {
		seq := linearize(bk.members, adj, first)
		var edges [][2]int
		var undecided []*Cue
		for i := 0; i+bk.capacity < len(seq); i++ {
			u, v := seq[i], seq[i+bk.capacity]
			if p.ancestors[v].has(u) || p.ancestors[u].has(v) {
				continue // a dependency already orders them: no conflict
			}
			cu, cv := p.Cues[u], p.Cues[v]
			if p.Strategy == "fcfs" {
				if !desc[u].has(v) {
					undecided = appendOnce(undecided, cu, cv)
				}
				continue
			}
			c := b.conflict(p, bk, cu, cv)
			switch {
			case desc[u].has(v):
				c.Reason = fmt.Sprintf("%s and %s are already ordered by earlier decisions: %s goes first", cu.ID, cv.ID, cu.ID)
			default:
				c.Ordered = true
				c.Reason = b.reason(p, cu, cv, first)
				edges = append(edges, [2]int{u, v})
			}
			p.Conflicts = append(p.Conflicts, c)
		}
		if len(undecided) > 0 {
			c := b.conflict(p, bk, undecided...)
			c.Reason = fmt.Sprintf("decided at run time: the first cue to reach GO holds %s%s; the others wait in STANDBY and are told", bk.subject, capacityNote(bk))
			p.Conflicts = append(p.Conflicts, c)
		}
		arbitration := graph.EdgeAttributes(map[string]string{"kind": "arbitration", "subject": bk.subject})
		for _, e := range edges {
			_ = p.Graph.AddEdge(p.Cues[e[0]].ID, p.Cues[e[1]].ID, arbitration)
			adj.succ[e[0]] = append(adj.succ[e[0]], e[1])
			adj.pred[e[1]] = append(adj.pred[e[1]], e[0])
			adj.kinds[e] = "arbitration"
		}
		desc = extend(desc, adj, edges)
	}
}

func capacityNote(bk bucket) string {
	if bk.capacity > 1 {
		return fmt.Sprintf(" (%d at a time)", bk.capacity)
	}
	return ""
}

func appendOnce(list []*Cue, cues ...*Cue) []*Cue {
	for _, c := range cues {
		found := false
		for _, x := range list {
			found = found || x == c
		}
		if !found {
			list = append(list, c)
		}
	}
	return list
}

// conflict starts a record for cues competing in bk; the first cue is the winner
// unless the strategy decides at run time.
func (b *builder) conflict(p *Plan, bk bucket, cues ...*Cue) *Conflict {
	sort.SliceStable(cues[1:], func(i, j int) bool { return cues[1+i].Index < cues[1+j].Index })
	c := &Conflict{Type: bk.kind, Cues: cues, Subject: bk.subject, Capacity: bk.capacity, Strategy: p.Strategy}
	if p.Strategy != "fcfs" {
		c.Winner = cues[0]
	} else {
		sort.Slice(cues, func(i, j int) bool { return cues[i].Index < cues[j].Index })
	}
	seen := map[string]bool{}
	for _, cue := range cues {
		for _, a := range cue.Agents {
			if !seen[a] {
				seen[a] = true
				c.Agents = append(c.Agents, a)
			}
		}
	}
	return c
}

// ranking returns "x goes before y" for the strategy: priority (higher first),
// orchestrator (longer remaining critical path, then priority), fcfs (file
// order only: the run decides); file order breaks every tie.
func (b *builder) ranking(p *Plan) func(x, y int) bool {
	cues := p.Cues
	return func(x, y int) bool {
		a, c := cues[x], cues[y]
		switch p.Strategy {
		case "priority":
			if a.Priority != c.Priority {
				return a.Priority > c.Priority
			}
		case "orchestrator":
			if a.Remaining != c.Remaining {
				return a.Remaining > c.Remaining
			}
			if a.Priority != c.Priority {
				return a.Priority > c.Priority
			}
		}
		return x < y
	}
}

// reason explains why u goes before v.
func (b *builder) reason(p *Plan, u, v *Cue, first func(x, y int) bool) string {
	if first(v.Index, u.Index) {
		return fmt.Sprintf("%s would go first by %s but cannot start before %s (it waits for earlier cues): %s goes first and %s waits for it",
			v.ID, p.Strategy, u.ID, u.ID, v.ID)
	}
	switch p.Strategy {
	case "orchestrator":
		if u.Remaining != v.Remaining {
			return fmt.Sprintf("%s has the longer remaining critical path (%s vs %s): it goes first and %s waits; binding on both", u.ID, u.Remaining, v.Remaining, v.ID)
		}
		if u.Priority != v.Priority {
			return fmt.Sprintf("equal remaining critical path (%s); %s has priority %d, %s %d: %s goes first; binding on both", u.Remaining, u.ID, u.Priority, v.ID, v.Priority, u.ID)
		}
		return fmt.Sprintf("equal remaining critical path (%s) and priority (%d): file order decides, %s goes first; binding on both", u.Remaining, u.Priority, u.ID)
	default:
		if u.Priority != v.Priority {
			return fmt.Sprintf("%s has priority %d, %s %d: %s goes first and %s waits for it", u.ID, u.Priority, v.ID, v.Priority, u.ID, v.ID)
		}
		return fmt.Sprintf("equal priority (%d): file order decides, %s goes first and %s waits for it", u.Priority, u.ID, v.ID)
	}
}

// linearize puts the members in an order the graph admits (its edges: the
// dependencies and the decisions so far), preferring first whenever the
// order allows. It is Kahn's algorithm over the whole graph in which a cue
// that is no member passes as soon as it is ready (it is not in the order
// and waits for nobody's choice) while the ready members wait in a heap: a
// member is ready exactly when every member that reaches it is placed. It
// walks each edge once: the descendants closure of a long chain holds n²/2
// bits, and counting a member's successors in it made a 20,000-cue chain
// with one shared agent take over a second.
func linearize(members []int, adj *adjacency, first func(x, y int) bool) []int {
	n := len(adj.succ)
	member := make([]bool, n)
	for _, m := range members {
		member[m] = true
	}
	indeg := make([]int32, n)
	for _, succ := range adj.succ {
		for _, y := range succ {
			indeg[y]++
		}
	}
	h := &readyHeap{first: first}
	var passing []int // ready cues that are no members
	ready := func(x int) {
		if member[x] {
			heap.Push(h, x)
		} else {
			passing = append(passing, x)
		}
	}
	for x := range n {
		if indeg[x] == 0 {
			ready(x)
		}
	}
	release := func(x int) {
		for _, y := range adj.succ[x] {
			if indeg[y]--; indeg[y] == 0 {
				ready(y)
			}
		}
	}
	out := make([]int, 0, len(members))
	for {
		for len(passing) > 0 {
			x := passing[len(passing)-1]
			passing = passing[:len(passing)-1]
			release(x)
		}
		if h.Len() == 0 {
			return out
		}
		x := heap.Pop(h).(int)
		out = append(out, x)
		release(x)
	}
}

// extend updates the descendants closure for new edges u -> v: every cue that
// reaches u (or is u) now reaches v and all of v's descendants. Many edges at
// once are cheaper to absorb by recomputing the closure.
func extend(desc matrix, adj *adjacency, edges [][2]int) matrix {
	if len(edges) == 0 {
		return desc
	}
	if len(edges) > 64 {
		order, _ := adj.kahn(func(x, y int) bool { return x < y })
		return adj.descendantsInto(desc, order)
	}
	for _, e := range edges {
		u, v := e[0], e[1]
		for x := range desc {
			if (x == u || desc[x].has(u)) && !desc[x].has(v) {
				desc[x].or(desc[v])
				desc[x].set(v)
			}
		}
	}
	return desc
}
