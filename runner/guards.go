package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strconv"
	"time"

	"golang.org/x/time/rate"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/sched"
)

// Guardrails the cuelist does not set (seed 004 §8: warn at 10, block at 20).
const (
	DefaultLoopWarn        = 10
	DefaultLoopBlock       = 20
	DefaultMessageRate     = 50 // messages per second per agent
	DefaultQuestionTimeout = 30 * time.Minute

	// loopGuardSize bounds the payloads one attempt's guard remembers; past
	// it, those seen once are forgotten (a loop repeats, so it stays).
	loopGuardSize = 8192
)

// loopGuard counts the requests one attempt's agent sent, by type and
// payload (the id aside): the same request again and again is a loop.
type loopGuard struct {
	seed  maphash.Seed
	count map[uint64]int
}

func (g *loopGuard) add(msg protocols.Message) int {
	if g.count == nil {
		g.seed, g.count = maphash.MakeSeed(), map[uint64]int{}
	}
	if len(g.count) >= loopGuardSize {
		for k, n := range g.count {
			if n == 1 {
				delete(g.count, k)
			}
		}
	}
	body, _ := json.Marshal(msg.Body) // a decoded body always encodes
	var h maphash.Hash
	h.SetSeed(g.seed)
	h.WriteString(msg.Type)
	h.WriteByte(0)
	h.Write(body)
	k := h.Sum64()
	g.count[k]++
	return g.count[k]
}

func (r *run) loopLimits() (warn, block int) {
	g := r.plan.Cuelist.Guardrails
	warn, block = g.LoopWarn, g.LoopBlock
	if warn <= 0 {
		warn = DefaultLoopWarn
	}
	if block <= 0 {
		block = DefaultLoopBlock
	}
	return warn, block
}

// checkLoop counts msg; from loop_warn repeats on the agent gets a
// guard.warning with each one, and at loop_block the attempt fails as
// loop_detected (the message is not acted on).
func (a *attempt) checkLoop(ap *agentProcess, msg protocols.Message) *failure {
	n := a.guard.add(msg)
	warn, block := a.r.loopLimits()
	if n < warn && n < block {
		return nil
	}
	ev := Event{RunID: a.r.id, At: time.Now().UTC(), Type: EvGuard, Cue: a.cue.ID, Agent: a.agent.ID, Attempt: a.number}
	if n >= block {
		ev.Reason = fmt.Sprintf("loop detected: %s sent the same %s %d times (loop_block %d)", a.agent.ID, msg.Type, n, block)
		_ = a.r.publish(context.Background(), ev)
		return failf("loop_detected", "%s", ev.Reason)
	}
	ev.Reason = fmt.Sprintf("possible loop: %s sent the same %s %d times (warned from %d, the attempt fails at %d)", a.agent.ID, msg.Type, n, warn, block)
	_ = a.r.publish(context.Background(), ev)
	return ap.send(a, protocols.Reply(msg, protocols.GuardWarning{Reason: ev.Reason, Count: n}))
}

// rateLimited says which requests count against an agent's message rate:
// those that reach another agent or the person. Blackboard and memory
// requests are storage; a flood of them is slowed by the store itself.
func rateLimited(t string) bool {
	switch t {
	case protocols.TypeMessageSend, protocols.TypeMessageUser, protocols.TypeDiscoveryReport, protocols.TypeQuestionAsk,
		protocols.TypeStatusUpdate, protocols.TypeStatusUsage, protocols.TypeEscalationConflict, protocols.TypeEscalationError:
		return true
	}
	return false
}

func (r *run) messageRate() int {
	if n := r.plan.Cuelist.Guardrails.MessageRate; n > 0 {
		return n
	}
	return DefaultMessageRate
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
		n := ap.r.messageRate()
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
		a := ap.attemptFor(msg)
		ap.mu.Unlock()
		reason := fmt.Sprintf("%s sends more than %d messages a second: throttled (%d messages held back so far)",
			ap.agent.ID, ap.r.messageRate(), ap.throttled)
		ev := Event{RunID: ap.r.id, At: time.Now().UTC(), Type: EvGuard, Agent: ap.agent.ID, Reason: reason}
		if a != nil {
			ev.Cue, ev.Attempt = a.cue.ID, a.number
		}
		_ = ap.r.publish(context.Background(), ev)
		warning := protocols.New(protocols.GuardWarning{Reason: reason, Count: ap.throttled})
		go func() { _ = ap.send(a, warning) }() // never on the reader: the agent may not be reading its stdin
	}
	time.Sleep(delay)
}

// Usage is what an attempt has used so far, as a driver reports it: each
// field is the attempt's total (not an increment). A field left zero keeps
// the total reported before, so a driver may report cost and tokens apart.
type Usage struct {
	CostUSD      float64
	InputTokens  int64
	OutputTokens int64
	Credits      float64
}

// merged is u with the fields it leaves zero taken from before.
func (u Usage) merged(before Usage) Usage {
	if u.CostUSD == 0 {
		u.CostUSD = before.CostUSD
	}
	if u.InputTokens == 0 {
		u.InputTokens = before.InputTokens
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = before.OutputTokens
	}
	if u.Credits == 0 {
		u.Credits = before.Credits
	}
	return u
}

func (u Usage) minus(v Usage) Usage {
	return Usage{CostUSD: u.CostUSD - v.CostUSD, InputTokens: u.InputTokens - v.InputTokens,
		OutputTokens: u.OutputTokens - v.OutputTokens, Credits: u.Credits - v.Credits}
}

func (u Usage) plus(v Usage) Usage {
	return Usage{CostUSD: u.CostUSD + v.CostUSD, InputTokens: u.InputTokens + v.InputTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens, Credits: u.Credits + v.Credits}
}

// exhaustedData is the record of the limit the run ran out of.
func exhaustedData(l *sched.Limit) ExhaustedData {
	switch l.Name {
	case "max_credits":
		return ExhaustedData{Limit: l.Name, Used: strconv.FormatFloat(l.Credits, 'f', -1, 64), Max: strconv.FormatFloat(l.MaxCredits, 'f', -1, 64)}
	case "max_cost_usd":
		return ExhaustedData{Limit: l.Name, Used: "$" + strconv.FormatFloat(l.CostUSD, 'f', -1, 64), Max: "$" + strconv.FormatFloat(l.MaxCostUSD, 'f', -1, 64)}
	}
	return ExhaustedData{Limit: l.Name, Used: l.Used.Round(time.Millisecond).String(), Max: l.Max.String()}
}
