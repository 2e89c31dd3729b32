package planner

import "math/bits"

// bitset is a set of cue indices, one bit each: reachability rows are bitsets
// so "may these two cues run at the same time" is two word lookups.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) or(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

// each calls f for every index in the set, in increasing order.
func (b bitset) each(f func(int)) {
	for w, word := range b {
		for word != 0 {
			t := bits.TrailingZeros64(word)
			f(w*64 + t)
			word &= word - 1
		}
	}
}

// matrix is one bitset per cue, allocated as one block.
type matrix []bitset

func newMatrix(n int) matrix {
	words := (n + 63) / 64
	block := make([]uint64, n*words)
	m := make(matrix, n)
	for i := range m {
		m[i] = block[i*words : (i+1)*words : (i+1)*words]
	}
	return m
}

// closure is one set of cue indices per cue, each row compressed (see row):
// the reachability of a plan. As one dense block it took n²/8 bytes, 101 MB
// for a 29,000-cue chain; a chain's rows are runs of ones, an independent
// cue's are empty, so compressed they take a few words each.
type closure []row

// row is a bitset whose words before off, and from off+lead+len(mid)+tail
// on, are zero; of the words from off, the first lead are all ones, then
// come mid, then tail words of all ones.
type row struct {
	off, lead, tail int
	mid             []uint64
}

const allOnes = ^uint64(0)

// word returns the row's word w.
func (r *row) word(w int) uint64 {
	if w -= r.off; w < 0 {
		return 0
	}
	if w < r.lead {
		return allOnes
	}
	if w -= r.lead; w < len(r.mid) {
		return r.mid[w]
	}
	if w -= len(r.mid); w < r.tail {
		return allOnes
	}
	return 0
}

// end is the index of the word after the row's last nonzero one.
func (r *row) end() int { return r.off + r.lead + len(r.mid) + r.tail }

func (r *row) has(i int) bool { return r.word(i/64)&(1<<(i%64)) != 0 }

// orInto sets in b every index of the row.
func (r *row) orInto(b bitset) {
	w := r.off
	for range r.lead {
		b[w] = allOnes
		w++
	}
	for _, x := range r.mid {
		b[w] |= x
		w++
	}
	for range r.tail {
		b[w] = allOnes
		w++
	}
}

// each calls f for every index in the row, in increasing order.
func (r *row) each(f func(int)) {
	for w := r.off; w < r.end(); w++ {
		for word := r.word(w); word != 0; word &= word - 1 {
			f(w*64 + bits.TrailingZeros64(word))
		}
	}
}

// compress returns the row holding words b[lo:hi] (the others are zero).
func compress(b bitset, lo, hi int) row {
	for lo < hi && b[lo] == 0 {
		lo++
	}
	for hi > lo && b[hi-1] == 0 {
		hi--
	}
	r := row{off: lo}
	for lo < hi && b[lo] == allOnes {
		lo++
		r.lead++
	}
	for hi > lo && b[hi-1] == allOnes {
		hi--
		r.tail++
	}
	if hi > lo {
		r.mid = append([]uint64(nil), b[lo:hi]...)
	}
	return r
}
