package sched_test

import (
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/sched"
)

// A success clears the agent's cooldown (docs/design.md#fallback-chains: RecordSuccess): a
// cue after it starts the agent at once.
func TestSuccessClearsCooldown(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: B, agents: [a]}
    - {id: C, agents: [a], dependencies: [B]}
`, `agent: {id: a, command: [sh, -c, "true"], cooldown: 1m, retry: {max_attempts: 1, retry_on: [timeout]}}
`, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("a fails at A", h.ended("A", sched.End{Failed: true, Class: "timeout", Reason: "429", Retriable: true}),
		"ended A/0#1 failed timeout", "cooldown a until +1m0s", "A failed: a: 429",
		"B standby", "B go", "go B/0", "C warning") // C is prepared, and waits: a cools down
	h.want("a succeeds at B", h.completed("B"),
		"ended B/0#1 completed ", "cooldown a cleared: succeeded at cue B (it was cooling down until "+h.now.Add(time.Minute).Format(time.TimeOnly)+")",
		"B completed", "start C/0#1 a", "C standby", "C go", "go C/0")
	h.want("no cooldown to clear", h.completed("C"), "ended C/0#1 completed ", "C completed")
}

// An agent's own retry respects its cooldown: it waits for the cooldown's
// end or goes to the fallback, whichever can start first.
func TestRetryRespectsCooldown(t *testing.T) {
	const agentA = `agent: {id: a, command: [sh, -c, "true"], cooldown: 1m, retry: {max_attempts: 2, backoff: 1s, retry_on: [timeout]}`
	fail := sched.End{Failed: true, Class: "timeout", Reason: "429", Retriable: true}

	h := newHarness(t, "", "    - {id: A, agents: [a]}\n", agentA+"}\n", 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("no fallback: the retry waits", h.ended("A", fail),
		"ended A/0#1 failed timeout", "cooldown a until +1m0s", "retry a 2 of 2 in 1m0s (cooldown)")
	if got := h.core.WakeAt(); !got.Equal(h.now.Add(time.Minute)) {
		t.Errorf("wake at %s, want the end of the cooldown", got.Sub(h.now))
	}
	h.now = h.now.Add(time.Second) // the backoff is over, the cooldown is not
	h.core.Wake()
	h.want("still cooling", h.advance())
	h.now = h.now.Add(time.Minute)
	h.core.Wake()
	h.want("cooled down", h.advance(), "start A/0#2 a", "go A/0")

	h = newHarness(t, "", "    - {id: A, agents: [a]}\n", agentA+", fallback: [b]}\n---\n"+`agent: {id: b, command: [sh, -c, "true"]}
`, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("the fallback can start at once", h.ended("A", fail),
		"ended A/0#1 failed timeout", "cooldown a until +1m0s",
		"fallback a failed (timeout) and cools down until "+h.now.Add(time.Minute).Format(time.TimeOnly)+"; its fallback can start sooner: b",
		"start A/0#2 b (fallback)", "go A/0")

	h = newHarness(t, "", "    - {id: A, agents: [a]}\n", agentA+", fallback: [b]}\n---\n"+`agent: {id: b, command: [sh, -c, "true"], cooldown: 1m}
`, 4, false)
	h.cool["b"] = h.now.Add(2 * time.Minute)
	h.core.Begin(h.now)
	h.advance()
	h.want("the fallback cools down longer: the retry waits", h.ended("A", fail),
		"ended A/0#1 failed timeout", "cooldown a until +1m0s", "retry a 2 of 2 in 1m0s (cooldown)")
}

// The fallback is for the failures retry_on calls retriable; an agent
// whose retry_on is left out falls back on any failure.
func TestFallbackOnlyForRetriable(t *testing.T) {
	h := newHarness(t, "", "    - {id: A, agents: [a]}\n", `agent: {id: a, command: [sh, -c, "true"], fallback: [b], retry: {max_attempts: 2, retry_on: [timeout]}}
---
agent: {id: b, command: [sh, -c, "true"]}
`, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("contract is not in retry_on", h.ended("A", sched.End{Failed: true, Class: "contract", Reason: "did not provide x"}),
		"ended A/0#1 failed contract", "A failed: a: did not provide x")

	h = newHarness(t, "", "    - {id: A, agents: [a]}\n", `agent: {id: a, command: [sh, -c, "true"], fallback: [b]}
---
agent: {id: b, command: [sh, -c, "true"]}
`, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("no retry_on: every failure falls back", h.ended("A", sched.End{Failed: true, Class: "exit:1", Reason: "exit 1"}),
		"ended A/0#1 failed exit:1", "fallback a failed (exit:1): b", "start A/0#2 b (fallback)", "go A/0")
}
