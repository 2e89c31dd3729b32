package driver

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/record"
)

// rateLimited says which requests count against an agent's message rate:
// those that reach another agent or the person (an agent's state, reported
// with status.report, is an event each). Blackboard and memory requests are
// storage; a flood of them is slowed by the store itself.
func rateLimited(t string) bool {
	switch t {
	case protocols.TypeMessageSend, protocols.TypeMessageUser, protocols.TypeDiscoveryReport, protocols.TypeQuestionAsk,
		protocols.TypeStatusReport, protocols.TypeStatusUpdate, protocols.TypeStatusUsage, protocols.TypeEscalationConflict,
		protocols.TypeEscalationError:
		return true
	}
	return false
}

// throttle holds an agent's reader back while the agent sends messages
// faster than its rate: its stdout pipe fills and it waits, so a flood costs
// orch no memory. The agent is told (guard.warning) at most once a second.
// It runs on the process's reader goroutine.
func (ap *agentProcess) throttle(msg protocols.Message) {
	if !rateLimited(msg.Type) {
		return
	}
	if ap.limiter == nil {
		n := ap.run.MessageRate
		ap.limiter = rate.NewLimiter(rate.Limit(n), n)
	}
	delay := ap.limiter.Reserve().Delay()
	if delay <= 0 {
		return
	}
	ap.throttled++
	if time.Since(ap.warnedAt) >= time.Second {
		ap.warnedAt = time.Now()
		ap.mu.Lock()
		d := ap.attemptFor(msg)
		ap.mu.Unlock()
		reason := fmt.Sprintf("%s sends more than %d messages a second: throttled (%d messages held back so far)",
			ap.agent.ID, ap.run.MessageRate, ap.throttled)
		ev := record.Event{RunID: ap.run.ID, At: time.Now().UTC(), Type: record.EvGuard, Agent: ap.agent.ID, Reason: reason}
		if d != nil {
			ev.Cue, ev.Attempt = d.a.Cue.ID, d.a.Number
		}
		_ = ap.run.Host.Publish(ev)
		warning := protocols.New(protocols.GuardWarning{Reason: reason, Count: ap.throttled})
		go func() { _ = ap.send(d, warning) }() // never on the reader: the agent may not be reading its stdin
	}
	time.Sleep(delay)
}
