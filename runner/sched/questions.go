package sched

import (
	"fmt"
	"sort"
	"time"
)

// Question is a question an agent asked, as Tasks decided it: who asked,
// who it is with (an ancestor agent at work, or the person) and when it is
// due. The first answer, its deadline, or its asker's end closes it.
type Question[W comparable] struct {
	ID       string // q1, q2, ...: what orch answer RUN QID names
	Asker    W
	From     NodeID // the asker's task
	To       W      // the ancestor agent's attempt it is with; zero: the person
	ToNode   NodeID // that agent's task; NoNode: the person
	Deadline time.Time
	seq      int
}

// WithPerson reports whether the person is the one to answer.
func (q Question[W]) WithPerson() bool { return q.ToNode == NoNode }

type question[W comparable] struct{ Question[W] }

// Ask opens a question from the task from, asked by the attempt by, due
// after timeout: it goes to the nearest ancestor agent at work, else to the
// person.
func (t *Tasks[W]) Ask(now time.Time, from NodeID, by W, timeout time.Duration) Question[W] {
	t.asked++
	to, toNode := t.nearestWorkingAncestor(from)
	q := &question[W]{Question[W]{ID: fmt.Sprintf("q%d", t.asked), Asker: by, From: from, To: to, ToNode: toNode,
		Deadline: now.Add(timeout), seq: t.asked}}
	t.open[q.ID] = q
	return q.Question
}

// ToPerson sends an open question up to the person (its agent could not
// take it, or answered with something else); false if it is closed.
func (t *Tasks[W]) ToPerson(id string) (Question[W], bool) {
	q := t.open[id]
	if q == nil {
		return Question[W]{}, false
	}
	var zero W
	q.To, q.ToNode = zero, NoNode
	return q.Question, true
}

// Answer closes an open question with its answer; false if it is closed
// already (exactly one of a question's endings acts).
func (t *Tasks[W]) Answer(id string) (Question[W], bool) {
	q := t.open[id]
	if q == nil {
		return Question[W]{}, false
	}
	delete(t.open, id)
	return q.Question, true
}

// PersonAnswers is orch answer for an open question: it closes it, unless
// the question is with an agent, which answers it (withAgent: the person's
// answer is not used).
func (t *Tasks[W]) PersonAnswers(id string) (q Question[W], withAgent, ok bool) {
	o := t.open[id]
	if o == nil {
		return Question[W]{}, false, false
	}
	if !o.WithPerson() {
		return o.Question, true, true
	}
	delete(t.open, id)
	return o.Question, false, true
}

// Due closes the questions nobody answered by now, oldest first.
func (t *Tasks[W]) Due(now time.Time) []Question[W] {
	return t.closeWhere(func(q *question[W]) bool { return !now.Before(q.Deadline) })
}

// Withdraw closes the open questions of an attempt that ended.
func (t *Tasks[W]) Withdraw(by W) []Question[W] {
	return t.closeWhere(func(q *question[W]) bool { return q.Asker == by })
}

func (t *Tasks[W]) closeWhere(match func(*question[W]) bool) []Question[W] {
	var out []Question[W]
	for id, q := range t.open {
		if match(q) {
			out = append(out, q.Question)
			delete(t.open, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// NextDeadline is when the next open question is due; zero: none is open.
func (t *Tasks[W]) NextDeadline() time.Time {
	var next time.Time
	for _, q := range t.open {
		if next.IsZero() || q.Deadline.Before(next) {
			next = q.Deadline
		}
	}
	return next
}
