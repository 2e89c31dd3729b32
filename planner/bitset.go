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
