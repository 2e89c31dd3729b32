package sched_test

import (
	"testing"

	"github.com/orch-cli/orch/runner/sched"
)

// stopped is an attempt's end when the run stops it.
var stopped = sched.End{Failed: true, Class: "stopped", Reason: "the run is paused"}

// The run pauses for a manual GO (Park, then its attempts are stopped and
// the cues stand down, with no advance between: the process exits): the
// attempt standing by is paused, not stopped; the cue's next preparation
// starts it again under its number, and it gets the GO. An attempt
// stopped for another reason while parking is stopped as before.
func TestParkKeepsTheAttempt(t *testing.T) {
	h := newHarness(t, "", "    - {id: A, agents: [a], go: manual}\n    - {id: B, agents: [b], go: manual}\n", plainAgents, 4, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "A warning", "start A/0#1 a", "A standby", "B warning", "start B/0#1 b", "B standby")
	if !h.core.Stuck(2) {
		t.Fatal("two manual cues standing by: not stuck")
	}
	h.core.Park()
	h.core.Ended(h.now, h.pos("A"), 0, 1, stopped)
	h.core.Ended(h.now, h.pos("B"), 0, 1, sched.End{Failed: true, Class: "exit:1", Reason: "exited 1"})
	h.core.StandDown("stood down")
	h.want("paused", h.take(), "ended A/0#1 paused paused", "ended B/0#1 failed exit:1",
		"B failed: b: exited 1", "A pending: stood down")
	h.want("prepared again", h.advance(), "A warning", "start A/0#1 a", "A standby")
	if !h.core.Approve("A", "orch go") {
		t.Fatal("Approve A")
	}
	h.want("orch go", h.advanceAfter(), "manual go A: orch go", "A go", "go A/0")
	h.want("done", h.completed("A"), "ended A/0#1 completed ", "A completed")
}

// Again marks the start of a paused attempt, and only that one.
func TestParkAgainFlag(t *testing.T) {
	h := newHarness(t, "", "    - {id: A, agents: [a], go: manual}\n", plainAgents, 4, false)
	h.core.Begin(h.now)
	h.core.Advance(h.now)
	if d := startOf(h.core.Decisions()); d == nil || d.Again {
		t.Fatalf("first start: %+v, want one without Again", d)
	}
	h.core.Park()
	h.core.Ended(h.now, 0, 0, 1, stopped)
	h.core.StandDown("stood down")
	h.core.Advance(h.now)
	if d := startOf(h.core.Decisions()); d == nil || !d.Again || d.Attempt != 1 {
		t.Fatalf("start after the pause: %+v, want attempt 1 with Again", d)
	}
}

func startOf(ds []sched.Decision) *sched.Decision {
	for _, d := range ds {
		if d.Kind == sched.StartAttempt {
			return &d
		}
	}
	return nil
}

// A resumed run (orch go continues it in a new process) takes back the
// attempt recorded paused: the cue's preparation starts it under its number.
// One whose cue is over, or whose agent no longer attempts there, is ended
// (recorded interrupted); a cue ending before it is prepared again ends it
// stopped.
func TestRestoreParked(t *testing.T) {
	cues := "    - {id: A, agents: [a], go: manual}\n    - {id: B, agents: [a]}\n    - {id: C, agents: [a], go: manual}\n"
	h := newHarness(t, "", cues, plainAgents, 4, false)
	h.core.Restore("A", sched.Recorded{State: sched.Pending, Attempts: 3, Paused: []sched.Running{{Agent: "a", Number: 3}}})
	h.core.Restore("B", sched.Recorded{State: sched.Completed, Attempts: 1, Paused: []sched.Running{{Agent: "a", Number: 1}}})
	h.core.Restore("C", sched.Recorded{State: sched.Pending, Attempts: 1, Paused: []sched.Running{{Agent: "gone", Number: 1}}})
	h.want("restore", h.take(), "interrupted B#1 a", "interrupted C#1 gone")
	h.core.Begin(h.now)
	h.want("prepared again", h.advance(), "A warning", "start A/0#3 a", "A standby", "C warning", "start C/0#2 a", "C standby")

	h = newHarness(t, "", cues, plainAgents, 4, false)
	h.core.Restore("A", sched.Recorded{State: sched.Pending, Attempts: 1, Paused: []sched.Running{{Agent: "a", Number: 1}}})
	h.take()
	h.core.Begin(h.now)
	h.core.EndAll(sched.Stopped, "stopped")
	got := h.take()
	if len(got) == 0 || got[0] != "ended A/0#1 stopped stopped" {
		t.Errorf("a paused attempt of a cue the run stops: %q, want it ended stopped first", got)
	}
}
