package sched_test

import "testing"

// StopCue ends one cue stopped (its attempt told who stopped it), blocks its
// dependents, and leaves the rest of the run going.
func TestStopCue(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: B, agents: [b]}
    - {id: C, agents: [a], dependencies: [A]}
`, plainAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	ok, why := h.core.StopCue("A", "stopped by alice")
	if !ok {
		t.Fatalf("StopCue: %s", why)
	}
	h.want("stop A", h.advanceAfter(),
		"stop A/0: cue A was stopped: stopped by alice", "A stopped: stopped by alice", "stop C/0: cue C is blocked", "C blocked: dependency A was stopped") // C was prepared early
	if ok, why := h.core.StopCue("A", "again"); ok || why != "cue A is already stopped" {
		t.Errorf("a second stop: %v %q", ok, why)
	}
	if ok, why := h.core.StopCue("NOPE", "x"); ok || why != "the run has no cue NOPE" {
		t.Errorf("an unknown cue: %v %q", ok, why)
	}
	h.want("B goes on", h.completed("B"), "ended B/0#1 completed ", "B completed")
	if got := h.core.StoppedCues(); len(got) != 1 || got[0] != "A" {
		t.Errorf("stopped cues %v", got)
	}
}
