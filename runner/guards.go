package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// Guardrails the cuelist does not set (seed 004 §8: warn at 10, block at 20).
const (
	DefaultLoopWarn        = 10
	DefaultLoopBlock       = spec.DefaultLoopBlock
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

// loopLimits are the loop guard's thresholds: a request's n-th repeat gets
// a warning from warn on, is blocked from block on, fails the attempt at fail.
type loopLimits struct{ warn, block, fail int }

// speaks says whether the guard warns about, blocks or fails the n-th repeat.
func (l loopLimits) speaks(n int) bool { return n >= min(l.warn, l.block, l.fail) }

// blocks says whether the n-th repeat of a request is not acted on.
func (l loopLimits) blocks(n int) bool { return n >= l.block || n >= l.fail }

// loopGuard is the cuelist's loop guard thresholds, defaults filled in:
// loop_fail left out is twice loop_block.
func (r *run) loopGuard() loopLimits {
	g := r.plan.Cuelist.Guardrails
	l := loopLimits{g.LoopWarn, g.LoopBlock, g.LoopFail}
	if l.warn <= 0 {
		l.warn = DefaultLoopWarn
	}
	if l.block <= 0 {
		l.block = DefaultLoopBlock
	}
	if l.fail <= 0 {
		l.fail = 2 * l.block
	}
	return l
}

// guardRequest counts a request that is answered with what it asked (a
// blackboard read or watch) and gives the loop guard's verdict: stop is
// true when the guard answered it instead (the request is recorded here,
// as nothing else will) or failed the attempt (f).
func (r *run) guardRequest(a *attemptRun, peer driver.Peer, wm *driver.Wire) (stop bool, f *attempt.Failure) {
	n := a.guard.add(wm.Msg)
	if r.loopGuard().blocks(n) {
		if f := a.Record("in", wm); f != nil {
			return true, f
		}
		_, f := a.loopVerdict(peer, wm.Msg, n)
		return true, f
	}
	_, f = a.loopVerdict(peer, wm.Msg, n)
	return f != nil, f
}

// loopVerdict acts on the n-th repeat of msg (a.guard.add counts them;
// seed 004 §8: the guard blocks the call, not the agent). From loop_warn
// repeats on the agent gets a guard.warning with each one and the request is
// served; from loop_block on the request is not acted on: it is answered
// with a protocol.error telling the agent to try another way (blocked is
// true), and the agent goes on; at loop_fail the attempt fails as
// loop_detected.
func (a *attemptRun) loopVerdict(peer driver.Peer, msg protocols.Message, n int) (blocked bool, f *attempt.Failure) {
	l := a.r.loopGuard()
	if !l.speaks(n) {
		return false, nil
	}
	warn, block, fail := l.warn, l.block, l.fail
	ev := record.Event{RunID: a.r.id, At: time.Now().UTC(), Type: record.EvGuard, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number}
	switch {
	case n >= fail:
		ev.Reason = fmt.Sprintf("loop detected: %s sent the same %s %d times (loop_fail %d)", a.Agent.ID, msg.Type, n, fail)
		_ = a.r.publish(context.Background(), ev)
		return true, attempt.Failf("loop_detected", "%s", ev.Reason)
	case n >= block:
		ev.Reason = fmt.Sprintf("loop blocked: %s sent the same %s %d times (blocked from %d, the attempt fails at %d)", a.Agent.ID, msg.Type, n, block, fail)
		_ = a.r.publish(context.Background(), ev)
		reason := fmt.Sprintf("loop_blocked: you sent the same %s %d times; try a different approach", msg.Type, n)
		return true, peer.Send(protocols.Reply(msg, protocols.ProtocolError{Reason: reason}))
	}
	ev.Reason = fmt.Sprintf("possible loop: %s sent the same %s %d times (warned from %d, blocked from %d)", a.Agent.ID, msg.Type, n, warn, block)
	_ = a.r.publish(context.Background(), ev)
	return false, peer.Send(protocols.Reply(msg, protocols.GuardWarning{Reason: ev.Reason, Count: n}))
}

func (r *run) messageRate() int {
	if n := r.plan.Cuelist.Guardrails.MessageRate; n > 0 {
		return n
	}
	return DefaultMessageRate
}
