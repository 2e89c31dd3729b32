package sched_test

import (
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/sched"
)

// Two independent cues claim one database. priority and orchestrator
// order them in the plan (the winner goes first, the other waits for its
// end without a conflict at run time); fcfs decides at run time: the first
// to reach GO holds it, the other waits in STANDBY, told once, and goes
// when it is released.
func TestArbitration(t *testing.T) {
	cues := `    - {id: LOW, agents: [a], claims: [db], priority: 1}
    - {id: HIGH, agents: [b], claims: [db], priority: 5}
    - {id: LONG, agents: [a], dependencies: [HIGH]}
`
	for _, tc := range []struct {
		strategy string
		first    string
		second   string
	}{
		{"priority", "HIGH", "LOW"},
		{"orchestrator", "HIGH", "LOW"}, // its remaining critical path is longer
		{"fcfs", "LOW", "HIGH"},         // plan order reaches GO first
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			h := newHarness(t, "  arbitration: "+tc.strategy+"\n  resources: {db: 1}\n", cues, protoAgents, 4, false)
			h.core.Begin(h.now)
			h.advance()
			for _, c := range []string{"LOW", "HIGH"} {
				if h.state(c) == sched.Warning {
					h.warned(c)
				}
			}
			var got []string
			for _, c := range []string{"LOW", "HIGH"} {
				if h.state(c) == sched.Standby {
					got = append(got, h.ready(c)...)
				}
			}
			if h.state(tc.first) != sched.Go || h.state(tc.second) == sched.Go {
				t.Fatalf("%s is %s and %s is %s; want %s in GO alone\n%s", tc.first, h.state(tc.first), tc.second, h.state(tc.second),
					tc.first, strings.Join(h.log, "\n"))
			}
			conflicts := 0
			for _, l := range got {
				if strings.HasPrefix(l, "conflict ") {
					conflicts++
					want := "conflict " + tc.second + " waits for resource db held by " + tc.first + " (capacity 1)"
					if l != want {
						t.Errorf("got %q, want %q", l, want)
					}
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.strategy == "fcfs"]; conflicts != want {
				t.Errorf("%d conflicts decided, want %d:\n%s", conflicts, want, strings.Join(got, "\n"))
			}
			h.completed(tc.first)
			if h.state(tc.second) == sched.Warning {
				h.warned(tc.second)
			}
			if h.state(tc.second) == sched.Standby {
				h.ready(tc.second)
			}
			if h.state(tc.second) != sched.Go {
				t.Errorf("%s is %s after %s released db, want go\n%s", tc.second, h.state(tc.second), tc.first, strings.Join(h.log, "\n"))
			}
		})
	}
}

// An agent serves one cue at a time unless its concurrency says more: the
// agent is a subject like a resource.
func TestAgentConcurrency(t *testing.T) {
	h := newHarness(t, "  arbitration: fcfs\n", `    - {id: A, agents: [a]}
    - {id: B, agents: [a]}
`, `agent: {id: a, command: [sh, -c, "true"]}
`, 4, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "A warning", "start A/0#1 a", "A standby", "A go", "go A/0",
		"B warning", "start B/0#1 a", "B standby", "conflict B waits for timing a held by A (capacity 1)")
	h.want("A completes", h.completed("A"), "ended A/0#1 completed ", "A completed", "B go", "go B/0")
}

// Out of a limit, no GO is given, not even to a retry of a cue in GO; the
// duration left counts from Begin.
func TestLimits(t *testing.T) {
	h := newHarness(t, "  limits: {max_duration: 10m}\n", `    - {id: A, agents: [a]}
    - {id: B, agents: [b]}
`, `agent: {id: a, protocol: jsonl, command: [sh, -c, "true"]}
---
agent: {id: b, command: [sh, -c, "true"], retry: {max_attempts: 2, backoff: 1s, retry_on: [timeout]}}
`, 4, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "A warning", "start A/0#1 a", "B warning", "start B/0#1 b", "B standby", "B go", "go B/0")
	if left, ok := h.core.DurationLeft(h.now.Add(4 * time.Minute)); !ok || left != 6*time.Minute {
		t.Errorf("duration left %s %v, want 6m", left, ok)
	}
	h.core.Exhaust(sched.Limit{Name: "max_credits"})
	h.warned("A")
	h.want("A ready, out of a limit", h.ready("A"))
	h.ended("B", sched.End{Failed: true, Class: "timeout", Reason: "timed out", Retriable: true})
	h.now = h.now.Add(time.Second)
	h.core.Wake()
	h.want("B's retry gets no GO", h.advance(), "start B/0#2 b")
}

// A resumed run takes every recorded cue state back: final ones stay,
// interrupted ones wait for orch go, one in GO that is not idempotent is
// interrupted, the others start over; attempt numbers continue and failed
// attempts count.
func TestRestore(t *testing.T) {
	cues := `    - {id: DONE, agents: [a], exports: [x]}
    - {id: SKIP, agents: [a]}
    - {id: FAIL, agents: [a]}
    - {id: BLOCK, agents: [a], dependencies: [FAIL]}
    - {id: INT, agents: [a]}
    - {id: GOING, agents: [a], idempotent: false}
    - {id: AGAIN, agents: [b]}
    - {id: WARN, agents: [d]}
    - {id: USED, agents: [c]}
    - {id: PEND, agents: [e], dependencies: [DONE]}
    - {id: STOP, agents: [f]}
`
	agents := `agent: {id: a, protocol: jsonl, command: [sh, -c, "true"], provides: [x]}
---
agent: {id: b, protocol: jsonl, command: [sh, -c, "true"]}
---
agent: {id: c, protocol: jsonl, command: [sh, -c, "true"], retry: {max_attempts: 2, retry_on: [timeout]}}
---
agent: {id: d, protocol: jsonl, command: [sh, -c, "true"]}
---
agent: {id: e, protocol: jsonl, command: [sh, -c, "true"]}
---
agent: {id: f, protocol: jsonl, command: [sh, -c, "true"]}
`
	h := newHarness(t, "", cues, agents, 20, false)
	running := []sched.Running{{Agent: "a", Number: 3}}
	for id, rec := range map[string]sched.Recorded{
		"DONE":  {State: sched.Completed, Attempts: 1, Outputs: map[string]any{"x": 1}},
		"SKIP":  {State: sched.Skipped, Reason: "condition"},
		"FAIL":  {State: sched.Failed, Reason: "a: boom", Attempts: 1},
		"BLOCK": {State: sched.Blocked, Reason: "dependency FAIL failed"},
		"INT":   {State: sched.Interrupted, Attempts: 2},
		"GOING": {State: sched.Go, Attempts: 3, Running: running},
		"AGAIN": {State: sched.Go, Attempts: 1, Running: []sched.Running{{Agent: "b", Number: 1}}},
		"WARN":  {State: sched.Warning, Attempts: 4},
		"USED":  {State: sched.Standby, Attempts: 2, AgentAttempts: map[string]int{"c": 2}},
		"STOP":  {State: sched.Stopped, Reason: "the run was stopped: orch stop", Attempts: 1},
	} {
		h.core.Restore(id, rec)
	}
	h.core.Begin(h.now)
	restored := map[string]bool{}
	for _, l := range h.take() {
		restored[l] = true
	}
	for _, want := range []string{
		"interrupted GOING#3 a",
		"GOING interrupted: it was in GO when its run's owner stopped, and it is not idempotent: orch go r1 GOING runs it again",
		"interrupted AGAIN#1 b",
		"AGAIN pending: its run's owner stopped; it starts over",
		"WARN pending: its run's owner stopped; it starts over",
		"USED pending: its run's owner stopped; it starts over",
		"USED failed: c: no attempts left (all failed before the run was resumed)",
		"STOP pending: its run's owner stopped; it starts over",
	} {
		if !restored[want] {
			t.Errorf("restore did not decide %q; it decided:\n%v", want, restored)
		}
	}
	if len(restored) != 8 {
		t.Errorf("restore decided %d things, want 8: %v", len(restored), restored)
	}
	for id, want := range map[string]sched.State{"DONE": sched.Completed, "SKIP": sched.Skipped, "FAIL": sched.Failed, "BLOCK": sched.Blocked,
		"INT": sched.Interrupted, "GOING": sched.Interrupted, "AGAIN": sched.Pending, "WARN": sched.Pending, "USED": sched.Failed, "PEND": sched.Pending, "STOP": sched.Pending} {
		if got := h.state(id); got != want {
			t.Errorf("%s restored %s, want %s", id, got, want)
		}
	}
	if got := h.core.Outputs(h.pos("DONE")); got["x"] != 1 {
		t.Errorf("DONE's outputs: %v", got)
	}
	n := 0
	h.plan.EachAncestorIn(h.plan.ByID["PEND"], h.core.WithOutputs(), func(*planner.Cue) { n++ })
	if n != 1 {
		t.Error("DONE is not among the cues with outputs")
	}
	got := h.advance()
	for _, want := range []string{"AGAIN warning", "start AGAIN/0#2 b", "WARN warning", "start WARN/0#5 d", "PEND warning", "start PEND/0#1 e", "STOP warning", "start STOP/0#2 f"} {
		if !contains(got, want) {
			t.Errorf("after the resume, want %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if got := h.core.Waiting(); strings.Join(got, ",") != "INT,GOING" {
		t.Errorf("waiting for orch go: %v", got)
	}
	h.core.Approve("INT", "orch go")
	h.want("orch go for INT", h.advanceAfter(), "manual go INT: orch go", "INT pending: orch go: run it again", "INT warning", "start INT/0#3 a")
}

// Stopping the run ends every cue not yet over and stops their attempts;
// pausing stands cues down to pending.
func TestStopAndStandDown(t *testing.T) {
	cues := `    - {id: A, agents: [a]}
    - {id: B, agents: [b], dependencies: [A]}
`
	h := newHarness(t, "", cues, protoAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.warned("A")
	h.core.StandDown("paused")
	h.want("stand down", h.take(), "A pending: paused")
	h.core.Stopping()
	h.core.EndAll(sched.Stopped, "stop")
	h.want("stop", h.take(), "stop A/0: cue A is stopped", "A stopped: stop", "B stopped: stop")
	h.core.Ended(h.now, h.pos("A"), 0, h.attempt("A", 0), sched.End{Failed: true, Class: "signal", Reason: "killed"})
	h.want("A's attempt ends", h.take(), "ended A/0#1 stopped signal")
	if !h.core.Finished() {
		t.Error("not finished")
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}
