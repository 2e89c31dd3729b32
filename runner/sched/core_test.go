package sched_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/sched"
)

// A protocol agent's cue goes through every phase on its acks; the next
// cue is warned as soon as its dependency is in GO (early WARNING), and
// stands by only once the dependency completed.
func TestPhasesAndEarlyWarning(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: B, agents: [b], dependencies: [A]}
`, protoAgents, 4, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "A warning", "start A/0#1 a")
	h.want("A warned", h.warned("A"), "A standby", "standby A/0")
	h.want("A ready", h.ready("A"), "A go", "go A/0", "B warning", "start B/0#1 b")
	h.want("B warned early", h.warned("B"))
	if h.state("B") != sched.Warning {
		t.Errorf("B is %s before A completed, want warning", h.state("B"))
	}
	h.want("A completed", h.completed("A"), "ended A/0#1 completed ", "A completed", "B standby", "standby B/0")
	h.want("B ready", h.ready("B"), "B go", "go B/0")
	h.want("B completed", h.completed("B"), "ended B/0#1 completed ", "B completed")
	if !h.core.Finished() {
		t.Error("not finished")
	}
}

// A plain agent without prepare or ready_check goes through WARNING and
// STANDBY as soon as its attempt is recorded.
func TestTrivialAgentGoesStraightToGo(t *testing.T) {
	h := newHarness(t, "", "    - {id: A, agents: [a]}\n", plainAgents, 4, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "A warning", "start A/0#1 a", "A standby", "A go", "go A/0")
}

// max_parallel bounds the cues being prepared and the cues in GO; a freed
// slot goes to the earliest waiting cue.
func TestParallelBudget(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: B, agents: [b]}
`, protoAgents, 1, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "A warning", "start A/0#1 a")
	h.warned("A")
	h.want("A in GO frees the prepare slot", h.ready("A"), "A go", "go A/0", "B warning", "start B/0#1 b")
	h.warned("B")
	h.want("B waits for a GO slot", h.ready("B"))
	h.want("A completed frees it", h.completed("A"), "ended A/0#1 completed ", "A completed", "B go", "go B/0")
}

// A failed dependency blocks what depends on it, transitively, and stops
// an attempt already warned early.
func TestBlockedPropagation(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: B, agents: [b], dependencies: [A]}
    - {id: C, agents: [a], dependencies: [B]}
`, protoAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.warned("A")
	h.ready("A") // B is warned early
	h.want("A fails", h.ended("A", sched.End{Failed: true, Class: "exit:1", Reason: "exit status 1"}),
		"ended A/0#1 failed exit:1", "A failed: a: exit status 1",
		"stop B/0: cue B is blocked", "B blocked: dependency A failed",
		"C blocked: dependency B is blocked")
	if !h.core.Finished() {
		t.Error("not finished")
	}
}

// Conditions are read from the blackboard when the cue would stand by: a
// missing or falsy key skips it (and blocks what depends on it); a truthy
// one lets it go on; a board that cannot be read decides nothing more.
func TestConditions(t *testing.T) {
	cues := `    - {id: A, agents: [a], conditions: [ship_it]}
    - {id: B, agents: [b], dependencies: [A]}
`
	for _, tc := range []struct {
		name  string
		value string // "" unset
		want  []string
	}{
		{"unset", "", []string{"A warning", "start A/0#1 a", "stop A/0: cue A is skipped",
			"A skipped: condition ship_it does not hold: no such key on the blackboard", "B blocked: dependency A was skipped"}},
		{"falsy", `"no"`, []string{"A warning", "start A/0#1 a", "stop A/0: cue A is skipped",
			`A skipped: condition ship_it does not hold: "no"`, "B blocked: dependency A was skipped"}},
		{"truthy", `"yes"`, []string{"A warning", "start A/0#1 a", "A standby", "A go", "go A/0", "B warning", "start B/0#1 b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "", cues, plainAgents, 4, false)
			if tc.value != "" {
				h.board["ship_it"] = json.RawMessage(tc.value)
			}
			h.core.Begin(h.now)
			h.want("begin", h.advance(), tc.want...)
		})
	}
	h := newHarness(t, "", cues, plainAgents, 4, false)
	h.fail = errors.New("disk gone")
	h.core.Begin(h.now)
	h.want("unreadable board", h.advance(), "A warning", "start A/0#1 a")
	if h.state("A") != sched.Warning {
		t.Errorf("A is %s, want it left in warning", h.state("A"))
	}
}

// A manual cue stands by until a person says GO: asked at the terminal when
// one can be, else it waits for orch go (and the run is stuck meanwhile).
func TestManualGo(t *testing.T) {
	cues := "    - {id: A, agents: [a], go: manual}\n"
	h := newHarness(t, "", cues, plainAgents, 4, true)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "A warning", "start A/0#1 a", "A standby", "ask A")
	h.want("asked once", h.advance())
	h.core.ApprovalAnswered(h.pos("A"), false)
	h.want("declined", h.advanceAfter())
	if got := h.core.Waiting(); len(got) != 1 || got[0] != "A" {
		t.Errorf("waiting %v", got)
	}
	if !h.core.Stuck(1) {
		t.Error("a declined manual cue standing by is not stuck")
	}
	if !h.core.Approve("A", "orch go") || h.core.Approve("A", "orch go") {
		t.Error("Approve: want true once, then false")
	}
	h.want("orch go", h.advanceAfter(), "manual go A: orch go", "A go", "go A/0")

	h = newHarness(t, "", cues, plainAgents, 4, false)
	h.core.Begin(h.now)
	h.want("nobody to ask", h.advance(), "A warning", "start A/0#1 a", "A standby")
	h.core.ApprovalAnswered(h.pos("A"), true)
	h.want("approved at the terminal", h.advanceAfter(), "manual go A: approved at the terminal", "A go", "go A/0")
}

// A retriable failure is retried after the backoff (doubling, capped), on
// the fake clock; attempts are numbered on; the last failure fails the cue.
func TestRetryBackoff(t *testing.T) {
	h := newHarness(t, "", "    - {id: A, agents: [a]}\n", `agent: {id: a, command: [sh, -c, "true"], retry: {max_attempts: 3, backoff: 1s, max_backoff: 1500ms, retry_on: [timeout]}}
`, 4, false)
	h.core.Begin(h.now)
	h.advance()
	fail := sched.End{Failed: true, Class: "timeout", Reason: "timed out", Retriable: true}
	h.want("first failure", h.ended("A", fail), "ended A/0#1 failed timeout", "retry a 2 of 3 in 1s")
	if got := h.core.WakeAt().Sub(h.now); got != time.Second {
		t.Errorf("wake in %s, want 1s", got)
	}
	h.now = h.now.Add(999 * time.Millisecond)
	h.core.Wake()
	h.want("too early", h.advance())
	h.now = h.now.Add(time.Millisecond)
	h.core.Wake()
	h.want("retry", h.advance(), "start A/0#2 a", "go A/0")
	h.want("second failure", h.ended("A", fail), "ended A/0#2 failed timeout", "retry a 3 of 3 in 1.5s")
	h.now = h.now.Add(1500 * time.Millisecond)
	h.core.Wake()
	h.want("last retry", h.advance(), "start A/0#3 a", "go A/0")
	h.want("out of attempts", h.ended("A", fail), "ended A/0#3 failed timeout", "A failed: a: timed out")

	// A failure the policy does not cover is not retried.
	h = newHarness(t, "", "    - {id: A, agents: [a]}\n", `agent: {id: a, command: [sh, -c, "true"], retry: {max_attempts: 3}}
`, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("not retriable", h.ended("A", sched.End{Failed: true, Class: "exit:2", Reason: "exit status 2"}),
		"ended A/0#1 failed exit:2", "A failed: a: exit status 2")
}

func TestBackoffJitterAndCap(t *testing.T) {
	a := compile(t, "", "    - {id: A, agents: [a]}\n", `agent: {id: a, command: [sh, -c, "true"], retry: {max_attempts: 9, backoff: 2s, max_backoff: 5s}}
`).Agents["a"]
	for n, want := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 3: 5 * time.Second, 8: 5 * time.Second} {
		if got := sched.Backoff(a, n, func(time.Duration) time.Duration { return 0 }); got != want/2 {
			t.Errorf("retry %d, least jitter: %s, want %s", n, got, want/2)
		}
		if got := sched.Backoff(a, n, func(d time.Duration) time.Duration { return d }); got != want {
			t.Errorf("retry %d, most jitter: %s, want %s", n, got, want)
		}
		for range 20 {
			if got := sched.Backoff(a, n, nil); got < want/2 || got > want {
				t.Errorf("retry %d: %s out of [%s, %s]", n, got, want/2, want)
			}
		}
	}
}

// When an agent's attempts are used up, its fallback takes over with
// attempts of its own; a cooldown is recorded for a retriable failure of an
// agent with one, and an agent cooling down hands its first try to its
// fallback (or waits for the end of the cooldown without one).
func TestFallbackAndCooldown(t *testing.T) {
	agents := `agent: {id: a, command: [sh, -c, "true"], cooldown: 1m, fallback: [b], retry: {max_attempts: 1, retry_on: [timeout]}}
---
agent: {id: b, command: [sh, -c, "true"]}
`
	h := newHarness(t, "", "    - {id: A, agents: [a]}\n", agents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("a fails", h.ended("A", sched.End{Failed: true, Class: "timeout", Reason: "429", Retriable: true}),
		"ended A/0#1 failed timeout", "cooldown a until +1m0s", "fallback a failed (timeout): b",
		"start A/0#2 b (fallback)", "go A/0")
	h.want("b completes", h.completed("A"), "ended A/0#2 completed ", "A completed")

	h = newHarness(t, "", "    - {id: A, agents: [a]}\n", agents, 4, false)
	h.cool["a"] = h.now.Add(time.Minute)
	h.core.Begin(h.now)
	h.want("a cooling down", h.advance(), "A warning",
		"fallback a is cooling down until "+h.now.Add(time.Minute).Format(time.TimeOnly)+": b", "start A/0#1 b (fallback)",
		"A standby", "A go", "go A/0")

	h = newHarness(t, "", "    - {id: A, agents: [b2]}\n", `agent: {id: b2, command: [sh, -c, "true"], cooldown: 1m}
`, 4, false)
	h.cool["b2"] = h.now.Add(time.Minute)
	h.core.Begin(h.now)
	h.want("no fallback: waits", h.advance(), "A warning")
	if got := h.core.WakeAt(); !got.Equal(h.now.Add(time.Minute)) {
		t.Errorf("wake at %s, want the end of the cooldown", got)
	}
	h.now = h.now.Add(time.Minute)
	h.core.Wake()
	h.want("cooled down", h.advance(), "start A/0#1 b2", "A standby", "A go", "go A/0")
}

// A protocol agent's retry joins its cue in GO: it is warned, stood by and
// sent GO on its acks; a report from the attempt it replaced is ignored.
func TestRetryJoinsCueInGo(t *testing.T) {
	h := newHarness(t, "", "    - {id: A, agents: [a]}\n", `agent: {id: a, protocol: jsonl, command: [sh, -c, "true"], retry: {max_attempts: 2, backoff: 1s, retry_on: [malfunction]}}
`, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.warned("A")
	h.ready("A")
	h.ended("A", sched.End{Failed: true, Class: "malfunction", Reason: "bad line", Retriable: true})
	h.now = h.now.Add(time.Second)
	h.core.Wake()
	h.want("retry", h.advance(), "start A/0#2 a")
	h.core.Ready(h.pos("A"), 0, 1) // the first attempt, already replaced
	h.want("stale report", h.advanceAfter())
	h.want("warned", h.warned("A"), "standby A/0")
	h.want("ready", h.ready("A"), "go A/0")
	h.want("completed", h.completed("A"), "ended A/0#2 completed ", "A completed")
}

// A completed cue's outputs are merged from its agents; its exports are
// written to the board before it is recorded completed, and its outputs
// go with that record.
func TestCompletionExportsFirst(t *testing.T) {
	h := newHarness(t, "", "    - {id: A, agents: [a, b], exports: [x, missing]}\n", plainAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.core.Ended(h.now, h.pos("A"), 1, h.attempt("A", 1), sched.End{Outputs: map[string]any{"y": 2}})
	h.want("b completes", h.advanceAfter(), "ended A/1#2 completed ")
	h.core.Ended(h.now, h.pos("A"), 0, h.attempt("A", 0), sched.End{Outputs: map[string]any{"x": 1}})
	h.want("a completes", h.take(), "ended A/0#1 completed ", "export x=1 by a", "A completed")
	if got := h.core.Outputs(h.pos("A")); got["x"] != 1 || got["y"] != 2 {
		t.Errorf("outputs %v", got)
	}
}
