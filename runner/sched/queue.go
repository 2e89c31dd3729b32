package sched

import "container/heap"

// cueQueue is a set of cues ordered by plan position: the loop steps only
// cues that something touched, earliest in the plan first, so its work per
// iteration follows what changed, not the size of the plan.
type cueQueue struct {
	items []int
	in    []bool
}

func newCueQueue(n int) *cueQueue { return &cueQueue{in: make([]bool, n)} }

func (q *cueQueue) push(pos int) {
	if pos >= len(q.in) { // an item of a fan-out, added after the plan's cues
		q.in = append(q.in, make([]bool, pos+1-len(q.in))...)
	}
	if !q.in[pos] {
		q.in[pos] = true
		heap.Push(q, pos)
	}
}

// pop returns the earliest cue in the set, or -1.
func (q *cueQueue) pop() int {
	if len(q.items) == 0 {
		return -1
	}
	pos := heap.Pop(q).(int)
	q.in[pos] = false
	return pos
}

func (q *cueQueue) Len() int           { return len(q.items) }
func (q *cueQueue) Less(i, j int) bool { return q.items[i] < q.items[j] }
func (q *cueQueue) Swap(i, j int)      { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *cueQueue) Push(x any)         { q.items = append(q.items, x.(int)) }
func (q *cueQueue) Pop() any {
	x := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return x
}
