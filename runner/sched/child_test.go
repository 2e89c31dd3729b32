package sched_test

import (
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// A child task's attempt ends: the core decides the retry, at the backoff
// on the fake clock, or the task's end. No fallback and no cooldown: its
// parent gets the failure.
func TestChildEnded(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	full := func(d time.Duration) time.Duration { return d } // no jitter: the longest delay
	policy := &spec.Agent{ID: "a", Retry: &spec.Retry{MaxAttempts: 3, Backoff: spec.Duration(time.Second), MaxBackoff: spec.Duration(1500 * time.Millisecond)},
		Cooldown: spec.Duration(time.Minute), Fallback: []string{"b"}}
	none := &spec.Agent{ID: "a", Cooldown: spec.Duration(time.Minute), Fallback: []string{"b"}}
	failed := sched.End{Failed: true, Class: "timeout", Reason: "timed out", Retriable: true}
	notCovered := sched.End{Failed: true, Class: "exit:2", Reason: "exit status 2"}
	stopped := sched.End{Failed: true, Class: "stopped", Reason: "its parent ended", Retriable: true}
	cases := []struct {
		name  string
		agent *spec.Agent
		tries int
		end   sched.End
		want  sched.ChildStep
	}{
		{"completed", policy, 1, sched.End{Outputs: map[string]any{"k": 1}}, sched.ChildStep{Attempt: sched.AttemptCompleted, End: sched.Completed}},
		{"completed on a retry", policy, 3, sched.End{}, sched.ChildStep{Attempt: sched.AttemptCompleted, End: sched.Completed}},
		{"first retry after the backoff", policy, 1, failed,
			sched.ChildStep{Attempt: sched.AttemptFailed, Retry: true, At: now.Add(time.Second), Delay: time.Second, Reason: "timed out"}},
		{"second retry doubled and capped", policy, 2, failed,
			sched.ChildStep{Attempt: sched.AttemptFailed, Retry: true, At: now.Add(1500 * time.Millisecond), Delay: 1500 * time.Millisecond, Reason: "timed out"}},
		{"out of attempts", policy, 3, failed, sched.ChildStep{Attempt: sched.AttemptFailed, End: sched.Failed, Reason: "a: timed out"}},
		{"class not retriable", policy, 1, notCovered, sched.ChildStep{Attempt: sched.AttemptFailed, End: sched.Failed, Reason: "a: exit status 2"}},
		{"no retry policy", none, 1, failed, sched.ChildStep{Attempt: sched.AttemptFailed, End: sched.Failed, Reason: "a: timed out"}},
		{"stopped is never retried", policy, 1, stopped, sched.ChildStep{Attempt: sched.AttemptStopped, End: sched.Stopped, Reason: "its parent ended"}},
	}
	for _, c := range cases {
		if got := sched.ChildEnded(now, c.agent, c.tries, c.end, full); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The core decides a child's step from its jitter and leaves the run's
// cues alone: no decision, no cooldown, no fallback, no retry note.
func TestCoreChildEndedDecidesNothingElse(t *testing.T) {
	h := newHarness(t, "", "    - {id: A, agents: [a]}\n", `agent: {id: a, command: [sh, -c, "true"], cooldown: 1m, retry: {max_attempts: 2, backoff: 2s}}
`, 4, false)
	h.core.Begin(h.now)
	h.advance()
	a := &spec.Agent{ID: "a", Retry: &spec.Retry{MaxAttempts: 2, Backoff: spec.Duration(2 * time.Second)}, Cooldown: spec.Duration(time.Minute)}
	step := h.core.ChildEnded(h.now, a, 1, sched.End{Failed: true, Class: "timeout", Reason: "timed out", Retriable: true})
	if !step.Retry || !step.At.Equal(h.now.Add(2*time.Second)) {
		t.Errorf("got %+v, want a retry at +2s (the harness's jitter)", step)
	}
	h.want("the cues", h.take())
}

// Retriable is the agent's retry policy: every class with a retry block,
// unless retry_on narrows it; none without.
func TestRetriable(t *testing.T) {
	all := &spec.Agent{Retry: &spec.Retry{MaxAttempts: 2}}
	on := &spec.Agent{Retry: &spec.Retry{MaxAttempts: 2, RetryOn: []string{"timeout", "exit:any"}}}
	for _, c := range []struct {
		agent *spec.Agent
		class string
		want  bool
	}{
		{&spec.Agent{}, "timeout", false},
		{all, "malfunction", true},
		{on, "timeout", true},
		{on, "exit:3", true},
		{on, "malfunction", false},
	} {
		if got := sched.Retriable(c.agent, c.class); got != c.want {
			t.Errorf("Retriable(%v, %q) = %v, want %v", c.agent.Retry, c.class, got, c.want)
		}
	}
}
