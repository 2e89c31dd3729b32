package sched_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/sched"
)

// A non-idempotent cue whose GO was lost while the run went on (its
// worker died) is interrupted: it frees its GO slot, runs no attempt by
// itself and waits for orch go; then it runs again with the next number,
// and the lost attempt does not count against max_attempts.
func TestInterruptWaitsForGo(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a], idempotent: false}
    - {id: B, agents: [b]}
`, plainAgents, 1, false)
	h.core.Begin(h.now)
	h.advance()
	h.take()
	if !h.core.Interrupt(h.pos("A"), 0, h.attempt("A", 0), "its worker was lost") {
		t.Fatal("Interrupt refused A's attempt in GO")
	}
	got := h.advanceAfter()
	h.want("interrupt", got[:2], "interrupted A#1 a", "A interrupted: its worker was lost: orch go r1 A runs it again")
	h.want("B gets the GO slot", got[2:], "B go", "go B/0") // prepared while A ran
	if h.core.Interrupt(h.pos("A"), 0, 1, "again") {
		t.Error("a second Interrupt of the same attempt was taken")
	}
	h.want("B completes", h.completed("B"), "ended B/0#1 completed ", "B completed")
	if w := h.core.Waiting(); !reflect.DeepEqual(w, []string{"A"}) || !h.core.Stuck(0) {
		t.Fatalf("waiting %v, stuck %v: want A waiting for a person", w, h.core.Stuck(0))
	}
	if !h.core.Approve("A", "orch go") {
		t.Fatal("orch go A refused")
	}
	h.want("orch go", h.advanceAfter(), "manual go A: orch go", "A pending: orch go: run it again",
		"A warning", "start A/0#2 a", "A standby", "A go", "go A/0")
	h.want("A completes", h.completed("A"), "ended A/0#2 completed ", "A completed")
}

// A cue prepared early while the interrupted one was in GO is stood down
// (its attempt stopped, back to pending), so that the run waits for a
// person instead of an attempt that can never go; after orch go it is
// prepared again.
func TestInterruptStandsDownWhatFollows(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a], idempotent: false}
    - {id: C, agents: [b], dependencies: [A]}
`, plainAgents, 2, false)
	h.core.Begin(h.now)
	h.advance()
	h.take()
	h.core.Interrupt(h.pos("A"), 0, 1, "its worker was lost")
	h.want("interrupt", h.advanceAfter(), "interrupted A#1 a", "stop C/0: cue A is interrupted",
		"C pending: cue A is interrupted: it is prepared again when that cue goes",
		"A interrupted: its worker was lost: orch go r1 A runs it again")
	h.want("C's attempt ends", h.ended("C", sched.End{Failed: true, Class: "stopped"}), "ended C/0#1 stopped stopped")
	if w := h.core.Waiting(); !reflect.DeepEqual(w, []string{"A"}) || !h.core.Stuck(0) {
		t.Fatalf("waiting %v, stuck %v: want A waiting for a person", w, h.core.Stuck(0))
	}
	h.core.Approve("A", "orch go")
	got := h.advanceAfter()
	if !reflect.DeepEqual(got[len(got)-2:], []string{"C warning", "start C/0#2 b"}) {
		t.Errorf("after orch go, C is not prepared again:\n%s", strings.Join(got, "\n"))
	}
}
