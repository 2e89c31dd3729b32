package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/spec"
)

// cueRun is one cue's progress in this run.
type cueRun struct {
	pos      int // position in plan order
	cue      *planner.Cue
	state    CueState
	reason   string
	targets  []*target
	attempts int // highest attempt number used (attempts continue across agents and resumes)
	approved bool
	outputs  map[string]any
	holding  []subject // what the cue holds while in GO
}

// targetPhase is where one target agent of a cue is.
type targetPhase int

const (
	tIdle    targetPhase = iota // no attempt running (not started, or waiting to retry)
	tWarning                    // WARNING sent, waiting for its ack
	tWarned                     // acked WARNING
	tStandby                    // STANDBY sent
	tReady                      // acked STANDBY: waits for GO
	tGoing                      // GO sent
	tDone                       // completed
	tFailed                     // failed for good: no retry, no fallback left
)

// target is one agent a cue addresses: the agent listed, or the fallback that
// replaced it.
type target struct {
	agentID   string      // as listed in the cue
	agent     *spec.Agent // the one attempting now
	fallbacks int         // how many of agentID's fallbacks were taken
	tries     int         // attempts on the current agent
	phase     targetPhase
	att       *attempt
	retryAt   time.Time
	outputs   map[string]any
}

// advance steps every touched cue, in plan order, as many phases forward as
// it can go now.
func (r *run) advance(ctx context.Context) {
	for pos := r.touched.pop(); pos >= 0; pos = r.touched.pop() {
		c := r.cues[pos]
		for r.step(ctx, c) {
		}
	}
}

// touch marks a cue to be looked at by the next advance.
func (r *run) touch(c *cueRun) { r.touched.push(c.pos) }

// touchNext marks the cues that wait for c: its state decides theirs.
func (r *run) touchNext(c *cueRun) {
	for _, n := range c.cue.Next {
		r.touch(r.byID[n.ID])
	}
}

// freePrepared and freeGo release a budget slot and wake the earliest cue
// that waited for one.
func (r *run) freePrepared() {
	r.prepared--
	if pos := r.waitWarn.pop(); pos >= 0 {
		r.touched.push(pos)
	}
}

func (r *run) freeGo() {
	r.inGo--
	if pos := r.waitGo.pop(); pos >= 0 {
		r.touched.push(pos)
	}
}

// step moves one cue at most one phase forward and reports whether it did.
func (r *run) step(ctx context.Context, c *cueRun) bool {
	if c.state.Final() || r.broken.get() != nil {
		return false
	}
	if dep, why := r.blockedBy(c); dep != "" {
		r.endCue(ctx, c, CueBlocked, fmt.Sprintf("dependency %s %s", dep, why))
		return false
	}
	switch c.state {
	case CueInterrupted:
		if !c.approved {
			return false // waits for orch go
		}
		r.setState(ctx, c, CuePending, "orch go: run it again")
		return true
	case CuePending:
		if !r.warnable(c) {
			return false // a dependency's change touches it again
		}
		if r.prepared >= r.parallel {
			r.waitWarn.push(c.pos)
			return false
		}
		r.setState(ctx, c, CueWarning, "")
		r.prepared++
		r.startTargets(ctx, c)
		return true
	case CueWarning:
		r.startTargets(ctx, c)
		if r.allAt(c, tWarned) && r.ready(c) {
			if why := r.conditionFails(ctx, c); why != "" {
				if r.broken.get() != nil {
					return false // the board could not be read: the run ends
				}
				r.skip(ctx, c, why)
				return false
			}
			r.setState(ctx, c, CueStandby, "")
			for _, t := range c.targets {
				t.phase = tStandby
				if att := t.att; !att.trivial {
					r.orderStandby(att)
				} else {
					t.phase = tReady
				}
			}
			return true
		}
	case CueStandby:
		r.startTargets(ctx, c)
		if !r.allAt(c, tReady) {
			return false
		}
		if c.cue.Manual() && !c.approved {
			r.askForGo(ctx, c)
			return false
		}
		if r.inGo >= r.parallel {
			r.waitGo.push(c.pos)
			return false
		}
		if r.exhausted.Load() != nil {
			return false // out of a limit: the loop stops the run
		}
		if !r.acquire(c) {
			return false // woken when a holder lets go
		}
		r.freePrepared()
		r.inGo++
		r.setState(ctx, c, CueGo, "")
		for _, t := range c.targets {
			t.phase = tGoing
			r.orderGo(t.att, r.task(c, t.att))
		}
		return true
	case CueGo:
		r.startTargets(ctx, c) // retries and fallbacks go straight through the phases
	}
	return false
}

// blockedBy names a dependency that can no longer complete.
func (r *run) blockedBy(c *cueRun) (string, string) {
	for _, d := range c.cue.Deps {
		switch r.byID[d.ID].state {
		case CueFailed:
			return d.ID, "failed"
		case CueBlocked:
			return d.ID, "is blocked"
		case CueSkipped:
			return d.ID, "was skipped"
		case CueStopped:
			return d.ID, "was stopped"
		}
	}
	return "", ""
}

// warnable: WARNING goes out as soon as the last unfinished dependency has
// gone into GO, so preparation overlaps the work before it. A cue the
// arbitration put after another waits until that one is in GO too.
func (r *run) warnable(c *cueRun) bool {
	for _, d := range append(c.cue.Deps, c.cue.After...) {
		if s := r.byID[d.ID].state; s != CueGo && !s.Final() {
			return false
		}
	}
	return true
}

// ready: every dependency completed and every arbitration predecessor ended.
func (r *run) ready(c *cueRun) bool {
	for _, d := range c.cue.Deps {
		if r.byID[d.ID].state != CueCompleted {
			return false
		}
	}
	for _, d := range c.cue.After {
		if !r.byID[d.ID].state.Final() {
			return false
		}
	}
	return true
}

func (r *run) allAt(c *cueRun, p targetPhase) bool {
	for _, t := range c.targets {
		if t.phase < p || t.phase == tFailed {
			return false
		}
	}
	return true
}

// startTargets launches an attempt for every target without one whose retry
// time has come (all of them when the cue enters WARNING).
func (r *run) startTargets(ctx context.Context, c *cueRun) {
	for _, t := range c.targets {
		if t.phase != tIdle || t.att != nil {
			continue
		}
		if !t.retryAt.IsZero() && time.Now().Before(t.retryAt) {
			r.wakeNoLaterThan(t.retryAt, c)
			continue
		}
		if until := r.cooldown(ctx, t.agent); !until.IsZero() && t.tries == 0 {
			if r.takeFallback(ctx, c, t, "is cooling down until "+until.Format(time.TimeOnly)) {
				continue // retried on the next pass with the fallback
			}
			r.wakeNoLaterThan(until, c)
			continue
		}
		r.launch(ctx, c, t)
	}
}

// wakeNoLaterThan makes the loop wake by t and then look at c again.
func (r *run) wakeNoLaterThan(t time.Time, c *cueRun) {
	if r.wakeAt.IsZero() || t.Before(r.wakeAt) {
		r.wakeAt = t
	}
	r.sleepers[c] = true
}

// launch records the attempt, then starts it: the number is committed first
// so a crash never loses or reuses it.
func (r *run) launch(ctx context.Context, c *cueRun, t *target) {
	c.attempts++
	t.tries++
	t.retryAt = time.Time{}
	n := r.tree.root(c.cue.ID, t.agent)
	a := newAttempt(r, c, t, n, c.attempts, r.reports)
	r.tree.serve(n, a)
	r.emit(Event{Type: EvAttemptStarted, Cue: c.cue.ID, Agent: t.agent.ID, Attempt: a.number,
		Data: AttemptStartedData{Fallback: t.agent.ID != t.agentID}})
	if a.agent.Protocol == "jsonl" { // WARNING is recorded with the decision to send it
		a.warning = r.outbound(a, protocols.CoordWarning{RunID: r.id, CueID: c.cue.ID, TargetAgents: c.cue.Agents, Attempt: a.number})
	}
	t.att = a
	t.phase = tWarning
	// The attempt is counted once its goroutine starts, with the commit:
	// an attempt whose start could not be recorded never runs, and the
	// stop path must not wait for its report.
	r.then(func() {
		r.running++
		r.active.Add(1)
		go a.run(ctx)
	})
	if a.trivial { // nothing to do at WARNING and STANDBY: warned as soon as recorded
		switch c.state {
		case CueWarning, CuePending:
			t.phase = tWarned
		case CueStandby:
			t.phase = tReady
		case CueGo: // a retry or a fallback of a cue already in GO
			if r.exhausted.Load() != nil {
				break // out of a limit: no new GO
			}
			t.phase = tGoing
			r.orderGo(a, r.task(c, a))
		}
	}
}

// orderStandby records coord.standby for a protocol agent's attempt and
// orders the attempt to send it once recorded.
func (r *run) orderStandby(a *attempt) {
	var m *wireMessage
	if a.agent.Protocol == "jsonl" {
		m = r.outbound(a, protocols.CoordStandby{RunID: r.id, CueID: a.cue.cue.ID, TargetAgents: a.cue.cue.Agents})
	}
	r.then(func() { a.orders <- orderMsg{kind: orderStandby, msg: m} })
}

// orderGo orders the attempt to go once the decision is committed. A
// protocol agent's coord.go, which carries the blackboard as it is now, is
// recorded with the decision: one commit, not a second one before sending.
func (r *run) orderGo(a *attempt, task *Task) {
	var m *wireMessage
	if a.agent.Protocol == "jsonl" {
		m = r.outbound(a, protocols.CoordGo{RunID: r.id, CueID: a.cue.cue.ID, TargetAgents: a.cue.cue.Agents,
			Task: protocolTask(a.withBlackboard(task))})
	}
	r.thenGo(func() { a.orders <- orderMsg{kind: orderGo, task: task, msg: m} })
}

// outbound creates a message to an agent and emits its record, so that it is
// stored with the decision that sends it.
func (r *run) outbound(a *attempt, b protocols.Body) *wireMessage {
	msg := protocols.New(b)
	raw, err := protocols.Encode(msg)
	if err != nil {
		panic(fmt.Sprintf("runner: cannot encode %s: %v", msg.Type, err)) // orch's own messages always encode
	}
	m := &wireMessage{msg: msg, raw: raw}
	r.emit(a.messageEvent("out", m))
	return m
}

// conditionFails checks the cue's conditions against the blackboard: every
// name other than all_dependencies_complete and approval_received must be a
// key that is set and truthy.
func (r *run) conditionFails(ctx context.Context, c *cueRun) string {
	var board map[string]BlackboardEntry
	for _, cond := range c.cue.Conditions {
		if cond == "all_dependencies_complete" || cond == "approval_received" {
			continue
		}
		if board == nil {
			var err error
			if board, err = r.rec.Blackboard(ctx, r.id); err != nil {
				r.recordFailed(fmt.Errorf("reading the blackboard for the conditions of cue %s: %w", c.cue.ID, err))
				return "the blackboard could not be read"
			}
		}
		e, ok := board[cond]
		if !ok {
			return fmt.Sprintf("condition %s does not hold: no such key on the blackboard", cond)
		}
		if !truthy(e.Value) {
			return fmt.Sprintf("condition %s does not hold: %s", cond, strings.TrimSpace(string(e.Value)))
		}
	}
	return ""
}

func (r *run) skip(ctx context.Context, c *cueRun, why string) { r.endCue(ctx, c, CueSkipped, why) }

// askForGo asks a person for GO on a terminal, once per cue at a time.
func (r *run) askForGo(ctx context.Context, c *cueRun) {
	if r.opts.Approve == nil || r.asking[c.cue.ID] || r.declined[c.cue.ID] {
		return
	}
	r.asking[c.cue.ID] = true
	go func() {
		ok := r.opts.Approve(ctx, c.cue.ID, c.cue.Agents)
		r.reports <- report{kind: repApproval, cue: c, ok: ok}
	}()
}

// approve records GO for a manual cue.
func (r *run) approve(c *cueRun, reason string) {
	if c.approved {
		return
	}
	c.approved = true
	if (c.cue.Manual() || c.state == CueInterrupted) && !c.state.Final() {
		r.unapproved--
	}
	r.emit(Event{Type: EvManualGo, Cue: c.cue.ID, Reason: reason})
	r.touch(c)
}

// commands applies what other orch processes sent through the store: a GO
// for a waiting cue (orch go), a stop (orch stop). It returns why to stop, or
// whether a GO moved something.
func (r *run) commands(ctx context.Context) (stop string, moved bool) {
	cmds, err := r.rec.Commands(ctx, r.id)
	if err != nil {
		return "", false // a busy database: look again at the next poll
	}
	for _, cmd := range cmds {
		switch cmd.Kind {
		case "go":
			if c := r.byID[cmd.Cue]; c != nil && !c.approved {
				r.approve(c, "orch go")
				moved = true
			}
		case "stop":
			stop = "orch stop"
			if cmd.Arg != "" {
				stop += ": " + cmd.Arg
			}
		case "answer":
			go r.answerFromPerson(cmd.Cue, cmd.Arg) // it writes to an agent: never on the loop
		}
		_ = r.rec.CommandDone(ctx, cmd.ID)
	}
	return stop, moved
}

// stuck reports whether nothing can move without a person: every running
// attempt is a manual cue's agent standing by for GO.
func (r *run) stuck() bool {
	if !r.wakeAt.IsZero() || len(r.asking) > 0 || r.touched.Len() > 0 {
		return false
	}
	standingBy := 0
	for c := range r.live {
		for _, t := range c.targets {
			if t.att != nil && c.state == CueStandby && c.cue.Manual() && !c.approved && t.phase == tReady {
				standingBy++
			}
		}
	}
	return standingBy == r.running // attempts of ended cues still stopping count as moving
}

// setState records a cue's new state; the cues waiting for it are looked at
// again.
func (r *run) setState(ctx context.Context, c *cueRun, s CueState, reason string) {
	c.state, c.reason = s, reason
	if s == CuePending {
		delete(r.live, c)
	} else {
		r.live[c] = true
	}
	r.emit(Event{Type: EvCueState, Cue: c.cue.ID, State: string(s), Reason: reason})
	r.touchNext(c)
}

// endCue records a final state, stops the cue's attempts still running (a
// cue warned early and then blocked or skipped) and frees the cue's slot.
func (r *run) endCue(ctx context.Context, c *cueRun, s CueState, reason string) {
	for _, t := range c.targets {
		if att := t.att; att != nil {
			why := fmt.Sprintf("cue %s is %s", c.cue.ID, s)
			r.then(func() { att.stop(why) })
		}
	}
	switch c.state {
	case CueWarning, CueStandby:
		r.freePrepared()
	case CueGo:
		r.freeGo()
		r.release(c)
	}
	if (c.cue.Manual() || c.state == CueInterrupted) && !c.approved {
		r.unapproved--
	}
	c.state, c.reason = s, reason
	r.finals++
	delete(r.live, c)
	r.touchNext(c)
	ev := Event{Type: EvCueState, Cue: c.cue.ID, State: string(s), Reason: reason}
	if s == CueCompleted {
		ev.Data = CueStateData{Outputs: c.outputs}
	}
	r.emit(ev)
}

// cooldown returns when the agent's cooldown ends, if it is in the future.
// Only an agent whose contract has a cooldown is ever put on one.
func (r *run) cooldown(ctx context.Context, agent *spec.Agent) time.Time {
	if agent.Cooldown <= 0 {
		return time.Time{}
	}
	until, err := r.rec.CooldownUntil(ctx, agent.ID)
	if err != nil || !until.After(time.Now()) {
		return time.Time{}
	}
	return until
}

// takeFallback replaces the target's agent with the next fallback of the
// agent the cue listed; false when none is left.
func (r *run) takeFallback(ctx context.Context, c *cueRun, t *target, why string) bool {
	listed := r.plan.Agents[t.agentID]
	if listed == nil || t.fallbacks >= len(listed.Fallback) {
		return false
	}
	next := r.plan.Agents[listed.Fallback[t.fallbacks]]
	t.fallbacks++
	if next == nil {
		return false
	}
	r.emit(Event{Type: EvNote, Cue: c.cue.ID, Agent: t.agent.ID, Reason: fmt.Sprintf("%s %s: falling back to %s", t.agent.ID, why, next.ID)})
	t.agent, t.tries, t.retryAt, t.phase = next, 0, time.Time{}, tIdle
	r.touch(c)
	return true
}

// backoff is the delay before retry n (1-based): exponential from the
// agent's backoff, capped, with jitter in [d/2, d].
func backoff(a *spec.Agent, n int) time.Duration {
	base, capAt := time.Second, 30*time.Second
	if a.Retry != nil {
		if a.Retry.Backoff > 0 {
			base = a.Retry.Backoff.D()
		}
		if a.Retry.MaxBackoff > 0 {
			capAt = a.Retry.MaxBackoff.D()
		}
	}
	d := base
	for i := 1; i < n && d < capAt; i++ {
		d *= 2
	}
	d = min(d, capAt)
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// retriable reports whether the agent's retry policy covers the failure class.
func retriable(a *spec.Agent, class string) bool {
	if a.Retry == nil {
		return false
	}
	for _, on := range a.Retry.RetryOn {
		if on == class || on == "exit:any" && strings.HasPrefix(class, "exit:") {
			return true
		}
	}
	return false
}

func maxAttempts(a *spec.Agent) int {
	if a.Retry == nil || a.Retry.MaxAttempts < 1 {
		return 1
	}
	return a.Retry.MaxAttempts
}
