package spec

import (
	"container/heap"
	"sort"
)

// CueGraph is the dependency graph of one cuelist over cue indices: an edge
// u -> v means u must complete before v starts (v depends on u, or u's
// auto_follow is v). Unknown references are left out (reported elsewhere).
type CueGraph struct {
	Cuelist *Cuelist
	Index   map[string]int // cue id -> index (first definition wins)
	Succ    [][]int
	Pred    [][]int
	edges   map[[2]int]string // (u,v) -> pointer of the reference that declares it
}

// NewCueGraph builds the graph of cl's dependencies and auto_follow links.
func NewCueGraph(cl *Cuelist) *CueGraph {
	n := len(cl.Cues)
	g := &CueGraph{Cuelist: cl, Index: make(map[string]int, n), Succ: make([][]int, n), Pred: make([][]int, n), edges: make(map[[2]int]string, n)}
	for i, c := range cl.Cues {
		if _, dup := g.Index[c.ID]; !dup && c.ID != "" {
			g.Index[c.ID] = i
		}
	}
	for v, c := range cl.Cues {
		for j, dep := range c.Dependencies {
			if u, ok := g.Index[dep]; ok {
				g.addEdge(u, v, c.Ptr+Pointer("dependencies", j))
			}
		}
		if c.AutoFollow != "" {
			if w, ok := g.Index[c.AutoFollow]; ok {
				g.addEdge(v, w, c.Ptr+"/auto_follow")
			}
		}
	}
	return g
}

func (g *CueGraph) addEdge(u, v int, ptr string) {
	key := [2]int{u, v}
	if _, dup := g.edges[key]; dup {
		return
	}
	g.edges[key] = ptr
	g.Succ[u] = append(g.Succ[u], v)
	g.Pred[v] = append(g.Pred[v], u)
}

// EdgePointer returns the pointer of the reference that declares u -> v.
func (g *CueGraph) EdgePointer(u, v int) string { return g.edges[[2]int{u, v}] }

// Cycles returns one cycle per strongly connected component that has one, each
// as a path of cue indices starting and ending at the component's first cue in
// file order. One Tarjan pass, iterative (a ring of 10,000 cues must not
// exhaust the stack), then a breadth-first search inside each component.
func (g *CueGraph) Cycles() [][]int {
	n := len(g.Succ)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	comp := make([]int, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	var stack []int
	type frame struct{ v, next int }
	var calls []frame
	counter, ncomp := 0, 0
	var cycles [][]int
	for root := 0; root < n; root++ {
		if index[root] >= 0 {
			continue
		}
		calls = append(calls, frame{v: root})
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			if f.next < len(g.Succ[f.v]) {
				w := g.Succ[f.v][f.next]
				f.next++
				if index[w] < 0 {
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{v: w})
				} else if onStack[w] && index[w] < low[f.v] {
					low[f.v] = index[w]
				}
				continue
			}
			v := f.v
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				if p := calls[len(calls)-1].v; low[v] < low[p] {
					low[p] = low[v]
				}
			}
			if low[v] != index[v] {
				continue
			}
			var members []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				members = append(members, w)
				if w == v {
					break
				}
			}
			if len(members) > 1 || g.hasSelfLoop(v) {
				cycles = append(cycles, g.cycleIn(members, comp, ncomp))
			}
			ncomp++
		}
	}
	// Report in file order of each cycle's first cue, whatever order Tarjan found them.
	sort.Slice(cycles, func(i, j int) bool { return cycles[i][0] < cycles[j][0] })
	return cycles
}

func (g *CueGraph) hasSelfLoop(v int) bool {
	_, ok := g.edges[[2]int{v, v}]
	return ok
}

// cycleIn finds a shortest cycle through the component's first cue.
func (g *CueGraph) cycleIn(members []int, comp []int, c int) []int {
	start := members[0]
	for _, m := range members {
		start = min(start, m)
	}
	if g.hasSelfLoop(start) {
		return []int{start, start}
	}
	prev := map[int]int{start: -1}
	queue := []int{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, w := range g.Succ[u] {
			if comp[w] != c {
				continue
			}
			if w == start {
				path := []int{start}
				for x := u; x != start; x = prev[x] {
					path = append(path, x)
				}
				reverse(path[1:])
				return append(path, start)
			}
			if _, seen := prev[w]; !seen {
				prev[w] = u
				queue = append(queue, w)
			}
		}
	}
	return []int{start, start} // unreachable for a real component
}

// Order returns the cues in a topological order in which, among cues that are
// ready at the same time, the one earlier in the file comes first (Kahn's
// algorithm with a min-heap). ok is false when the graph has a cycle.
func (g *CueGraph) Order() (order []int, ok bool) {
	n := len(g.Succ)
	indeg := make([]int, n)
	for v := range g.Pred {
		indeg[v] = len(g.Pred[v])
	}
	h := &intHeap{}
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			*h = append(*h, v)
		}
	}
	heap.Init(h)
	order = make([]int, 0, n)
	for h.Len() > 0 {
		u := heap.Pop(h).(int)
		order = append(order, u)
		for _, w := range g.Succ[u] {
			if indeg[w]--; indeg[w] == 0 {
				heap.Push(h, w)
			}
		}
	}
	return order, len(order) == n
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func reverse(s []int) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}
