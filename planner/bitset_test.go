package planner

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestClosureMatchesDense: the compressed reachability of chains (forward,
// backward, interleaved), independent cues and random DAGs holds exactly the
// indices a dense closure holds, word by word.
func TestClosureMatchesDense(t *testing.T) {
	const n = 300
	rng := rand.New(rand.NewPCG(1, 2))
	dags := map[string]func(v int) []int{
		"chain":       func(v int) []int { return upTo(v, v-1) },
		"backward":    func(v int) []int { return upTo(n, v+1) }, // each cue waits for the next
		"interleaved": func(v int) []int { return upTo(v, v-2) },
		"independent": func(int) []int { return nil },
		"random": func(v int) []int {
			var out []int
			for range 3 {
				if v > 0 {
					out = append(out, rng.IntN(v))
				}
			}
			return out
		},
		"blocks": func(v int) []int { // cues depend on every cue of the block of 100 before
			if v < 100 {
				return nil
			}
			var out []int
			for u := v/100*100 - 100; u < v/100*100; u++ {
				out = append(out, u)
			}
			return out
		},
	}
	for name, preds := range dags {
		a := &adjacency{succ: make([][]int, n), pred: make([][]int, n)}
		for v := range n {
			for _, u := range preds(v) {
				a.succ[u] = append(a.succ[u], v)
				a.pred[v] = append(a.pred[v], u)
			}
		}
		order, ok := a.kahn(func(x, y int) bool { return x < y })
		if !ok {
			t.Fatalf("%s: cyclic", name)
		}
		dense := newMatrix(n)
		for _, v := range order {
			for _, u := range a.pred[v] {
				dense[v].or(dense[u])
				dense[v].set(u)
			}
		}
		c := a.ancestors(order)
		for v := range n {
			r := &c[v]
			for w := range dense[v] {
				if r.word(w) != dense[v][w] {
					t.Fatalf("%s: row %d word %d is %x, want %x", name, v, w, r.word(w), dense[v][w])
				}
			}
			var got, want []int
			r.each(func(i int) { got = append(got, i) })
			dense[v].each(func(i int) { want = append(want, i) })
			if !slices.Equal(got, want) {
				t.Fatalf("%s: row %d lists %v, want %v", name, v, got, want)
			}
		}
	}
}

// upTo is [u] when 0 <= u < v, else nothing.
func upTo(v, u int) []int {
	if u >= 0 && u < v {
		return []int{u}
	}
	return nil
}

// TestCompressedChainIsSmall: a long chain's closure takes a few words a
// row, not a row of n bits.
func TestCompressedChainIsSmall(t *testing.T) {
	const n = 10000
	a := &adjacency{succ: make([][]int, n), pred: make([][]int, n)}
	order := make([]int, n)
	for v := range n {
		order[v] = v
		if v > 0 {
			a.succ[v-1] = append(a.succ[v-1], v)
			a.pred[v] = append(a.pred[v], v-1)
		}
	}
	words := 0
	for _, r := range a.ancestors(order) {
		words += len(r.mid)
	}
	if words > n {
		t.Errorf("the chain's closure keeps %d explicit words, want at most one a row", words)
	}
}
