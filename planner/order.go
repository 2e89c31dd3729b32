package planner

import (
	"container/heap"
	"sort"
	"time"
)

// adjacency is the plan's graph over cue indices, read from the
// dominikbraun/graph edge list once: the library's own sorts are O(V²), so
// ordering, levels and paths are computed here. (The edge list, not
// AdjacencyMap: that copies a map per vertex, 25 MB at 10k cues.)
type adjacency struct {
	succ, pred [][]int
	kinds      map[[2]int]string // edge (u,v) -> "dependency", "auto_follow" or "arbitration"
}

func newAdjacency(p *Plan) (*adjacency, error) {
	edges, err := p.Graph.Edges()
	if err != nil {
		return nil, err
	}
	n := len(p.Cues)
	a := &adjacency{succ: make([][]int, n), pred: make([][]int, n), kinds: make(map[[2]int]string, len(edges))}
	for _, e := range edges {
		u, v := p.ByID[e.Source].Index, p.ByID[e.Target].Index
		a.succ[u] = append(a.succ[u], v)
		a.pred[v] = append(a.pred[v], u)
		a.kinds[[2]int{u, v}] = e.Properties.Attributes["kind"]
	}
	for i := range a.succ { // map iteration is random: sort for a stable result
		sort.Ints(a.succ[i])
		sort.Ints(a.pred[i])
	}
	return a, nil
}

func (a *adjacency) kind(u, v int) string { return a.kinds[[2]int{u, v}] }

// kahn returns a topological order in which, among cues ready at the same
// time, first(x, y) decides; ok is false if there is a cycle.
func (a *adjacency) kahn(first func(x, y int) bool) (order []int, ok bool) {
	n := len(a.succ)
	indeg := make([]int, n)
	for v := range a.pred {
		indeg[v] = len(a.pred[v])
	}
	h := &readyHeap{first: first}
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			h.items = append(h.items, v)
		}
	}
	heap.Init(h)
	order = make([]int, 0, n)
	for h.Len() > 0 {
		u := heap.Pop(h).(int)
		order = append(order, u)
		for _, w := range a.succ[u] {
			if indeg[w]--; indeg[w] == 0 {
				heap.Push(h, w)
			}
		}
	}
	return order, len(order) == n
}

type readyHeap struct {
	items []int
	first func(x, y int) bool
}

func (h *readyHeap) Len() int           { return len(h.items) }
func (h *readyHeap) Less(i, j int) bool { return h.first(h.items[i], h.items[j]) }
func (h *readyHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *readyHeap) Push(x any)         { h.items = append(h.items, x.(int)) }
func (h *readyHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// ancestors is the transitive closure of the dependency edges: row v holds
// every cue that must complete before v. Each row is made in one dense
// scratch bitset, of which only the words it touched are compressed and
// cleared again.
func (a *adjacency) ancestors(order []int) closure {
	c := make(closure, len(a.succ))
	scratch := newBitset(len(a.succ))
	for _, v := range order {
		if len(a.pred[v]) == 0 {
			continue
		}
		lo, hi := len(scratch), 0
		for _, u := range a.pred[v] {
			r := &c[u]
			if r.end() > r.off {
				r.orInto(scratch)
				lo, hi = min(lo, r.off), max(hi, r.end())
			}
			scratch.set(u)
			lo, hi = min(lo, u/64), max(hi, u/64+1)
		}
		c[v] = compress(scratch, lo, hi)
		clear(scratch[lo:hi])
	}
	return c
}

// descendants is the transpose: row u holds every cue that waits for u.
func (a *adjacency) descendants(order []int) matrix {
	return a.descendantsInto(newMatrix(len(a.succ)), order)
}

// descendantsInto recomputes the descendants into m, reusing its memory.
func (a *adjacency) descendantsInto(m matrix, order []int) matrix {
	for _, row := range m {
		clear(row)
	}
	for i := len(order) - 1; i >= 0; i-- {
		u := order[i]
		for _, w := range a.succ[u] {
			m[u].or(m[w])
			m[u].set(w)
		}
	}
	return m
}

// remaining sets each cue's longest estimated path to the end of the plan
// (itself included): what the orchestrator strategy compares.
func (a *adjacency) remaining(p *Plan, order []int) {
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		var longest time.Duration
		for _, w := range a.succ[v] {
			longest = max(longest, p.Cues[w].Remaining)
		}
		p.Cues[v].Remaining = p.Cues[v].Estimate + longest
	}
}

// waves puts each cue one level after the latest of its predecessors.
func (a *adjacency) waves(p *Plan, order []int) {
	for _, v := range order {
		w := 0
		for _, u := range a.pred[v] {
			w = max(w, p.Cues[u].Wave+1)
		}
		p.Cues[v].Wave = w
		for len(p.Waves) <= w {
			p.Waves = append(p.Waves, nil)
		}
	}
	for _, c := range p.Cues { // file order within a wave
		p.Waves[c.Wave] = append(p.Waves[c.Wave], c)
	}
}

// critical finds the longest path by estimate; among equal paths, the one that
// ends (then starts) earliest in file order.
func (a *adjacency) critical(p *Plan, order []int) {
	n := len(order)
	if n == 0 {
		return
	}
	finish := make([]time.Duration, n)
	via := make([]int, n)
	end := -1
	for _, v := range order {
		via[v] = -1
		var start time.Duration
		for _, u := range a.pred[v] {
			if finish[u] > start || finish[u] == start && via[v] >= 0 && u < via[v] {
				start, via[v] = finish[u], u
			}
		}
		finish[v] = start + p.Cues[v].Estimate
		if end < 0 || finish[v] > finish[end] || finish[v] == finish[end] && v < end {
			end = v
		}
	}
	p.Critical.Length = finish[end]
	for v := end; v >= 0; v = via[v] {
		p.Critical.Cues = append(p.Critical.Cues, p.Cues[v])
		p.Cues[v].Critical = true
	}
	for i, j := 0, len(p.Critical.Cues)-1; i < j; i, j = i+1, j-1 {
		p.Critical.Cues[i], p.Critical.Cues[j] = p.Critical.Cues[j], p.Critical.Cues[i]
	}
}
