package planner

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"
)

// linearizeByClosure is how linearize worked before it walked the graph:
// Kahn's algorithm among the members alone, a member's successors read from
// the descendants closure (quadratic on a long chain). It is the reference
// the graph walk must agree with.
func linearizeByClosure(members []int, desc matrix, first func(x, y int) bool) []int {
	n := len(desc)
	mask := newBitset(n)
	indeg := make([]int32, n)
	for _, m := range members {
		mask.set(m)
	}
	row := newBitset(n)
	successorsOf := func(x int, f func(int)) {
		for w := range row {
			row[w] = desc[x][w] & mask[w]
		}
		row.each(f)
	}
	for _, x := range members {
		successorsOf(x, func(y int) { indeg[y]++ })
	}
	h := &readyHeap{first: first}
	for _, m := range members {
		if indeg[m] == 0 {
			h.items = append(h.items, m)
		}
	}
	heap.Init(h)
	out := make([]int, 0, len(members))
	for h.Len() > 0 {
		x := heap.Pop(h).(int)
		out = append(out, x)
		successorsOf(x, func(y int) {
			if indeg[y]--; indeg[y] == 0 {
				heap.Push(h, y)
			}
		})
	}
	return out
}

// TestLinearizeAgreesWithTheClosure: on random graphs, member sets and
// rankings, walking the graph (non-members passing at once) gives exactly
// the order the closure gave: the same plan, the same conflicts.
func TestLinearizeAgreesWithTheClosure(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 2026))
	for round := range 400 {
		n := 1 + r.IntN(90)
		a := &adjacency{succ: make([][]int, n), pred: make([][]int, n), kinds: map[[2]int]string{}}
		density := r.Float64() * 0.2
		for u := range n {
			for v := u + 1; v < n; v++ {
				if r.Float64() < density {
					a.succ[u] = append(a.succ[u], v)
					a.pred[v] = append(a.pred[v], u)
				}
			}
		}
		// Cue indexes in a topological order would make "x < y" agree with
		// the graph; shuffle the ranking so that first often disagrees.
		rank := r.Perm(n)
		first := func(x, y int) bool { return rank[x] < rank[y] }
		var members []int
		for x := range n {
			if r.IntN(3) > 0 {
				members = append(members, x)
			}
		}
		order, ok := a.kahn(func(x, y int) bool { return x < y })
		if !ok {
			t.Fatalf("round %d: a cycle in a forward-only graph", round)
		}
		want := linearizeByClosure(members, a.descendants(order), first)
		if got := linearize(members, a, first); !slices.Equal(got, want) {
			t.Fatalf("round %d (n=%d, members %v):\n got %v\nwant %v", round, n, members, got, want)
		}
	}
}
