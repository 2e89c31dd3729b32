package sched

import (
	"fmt"
	"time"

	"github.com/orch-cli/orch/spec"
)

// ChildStep is what the core decides when an attempt of a child task (a
// handoff's receiver or a spawned agent) ends: how the attempt is recorded,
// then either another attempt at At or the task's end.
type ChildStep struct {
	Attempt AttemptState // completed, failed or stopped
	Retry   bool         // attempt again at At (Delay after the end)
	At      time.Time
	Delay   time.Duration
	End     State  // when not retrying: Completed, Failed or Stopped
	Reason  string // why it failed or stopped
}

// ChildEnded decides a child task's next step after its attempt number
// tries ended as e (e.Retriable: the agent's retry policy covers the class,
// or the agent said so). A child has its agent's retries with their
// backoff, but no fallback and no cooldown: its parent gets the failure and
// decides. It takes no GO slot and no lock, so nothing else of the run is
// touched: the core's state does not change.
func (c *Core) ChildEnded(now time.Time, agent *spec.Agent, tries int, e End) ChildStep {
	return ChildEnded(now, agent, tries, e, c.cfg.Jitter)
}

// ChildEnded is Core.ChildEnded with its jitter (see Backoff) given.
func ChildEnded(now time.Time, agent *spec.Agent, tries int, e End, jitter func(time.Duration) time.Duration) ChildStep {
	switch {
	case !e.Failed:
		return ChildStep{Attempt: AttemptCompleted, End: Completed}
	case e.Class == "stopped":
		return ChildStep{Attempt: AttemptStopped, End: Stopped, Reason: e.Reason}
	case e.Retriable && tries < MaxAttempts(agent):
		delay := Backoff(agent, tries, jitter)
		return ChildStep{Attempt: AttemptFailed, Retry: true, At: now.Add(delay), Delay: delay, Reason: e.Reason}
	}
	return ChildStep{Attempt: AttemptFailed, End: Failed, Reason: fmt.Sprintf("%s: %s", agent.ID, e.Reason)}
}
