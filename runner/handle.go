package runner

import (
	"context"
	"fmt"
	"time"
)

// reportKind says what an attempt (or a prompt) reports to the loop.
type reportKind int

const (
	repWarned   reportKind = iota + 1 // acknowledged WARNING
	repReady                          // acknowledged STANDBY
	repEnded                          // the attempt is over: completed, failed or stopped
	repApproval                       // a person answered the GO prompt
)

type report struct {
	kind    reportKind
	att     *attempt
	cue     *cueRun
	ok      bool
	reply   *wireMessage // the agent's answer this report is about, recorded by the loop
	fail    *failure     // repEnded: nil on success
	outputs map[string]any
	pid     int
	exit    *int
}

// failure is a classified reason an attempt did not complete.
type failure struct {
	class  string // exit:N, timeout, malfunction, signal, contract, failed, stopped, start
	reason string
	retry  bool // the agent said the failure is retriable (task.failed retriable)
}

func (f *failure) Error() string { return f.reason }

func failf(class, format string, args ...any) *failure {
	return &failure{class: class, reason: fmt.Sprintf(format, args...)}
}

// handle applies one report to the run's state.
func (r *run) handle(ctx context.Context, rep report) {
	if rep.kind == repApproval {
		delete(r.asking, rep.cue.cue.ID)
		if rep.ok {
			r.approve(rep.cue, "approved at the terminal")
		} else {
			r.declined[rep.cue.cue.ID] = true
		}
		return
	}
	a := rep.att
	c, t := a.cue, a.tgt
	if rep.reply != nil { // stored before anything is decided on it
		r.emit(a.messageEvent("in", rep.reply))
	}
	if t.att != a { // a stale report from an attempt already replaced
		return
	}
	r.touch(c)
	switch rep.kind {
	case repWarned:
		t.phase = tWarned
		if c.state == CueStandby || c.state == CueGo { // a retry joins a cue already further on
			t.phase = tStandby
			r.orderStandby(a)
		}
	case repReady:
		t.phase = tReady
		if c.state == CueGo && r.exhausted.Load() == nil { // out of a limit: no new GO
			t.phase = tGoing
			r.orderGo(a, r.task(c, a))
		}
	case repEnded:
		r.running--
		t.att = nil
		r.attemptEnded(ctx, c, t, rep)
	}
}

// attemptEnded records the attempt's end and decides what follows: the
// cue completes, the agent retries, a fallback takes over, or the cue fails.
func (r *run) attemptEnded(ctx context.Context, c *cueRun, t *target, rep report) {
	a := rep.att
	state, reason, class := AttemptCompleted, "", ""
	if rep.fail != nil {
		state, reason, class = AttemptFailed, rep.fail.reason, rep.fail.class
		if r.stopping || c.state.Final() || rep.fail.class == "stopped" {
			state = AttemptStopped
		}
	}
	r.emit(Event{Type: EvAttemptEnded, Cue: c.cue.ID, Agent: a.agent.ID, Attempt: a.number,
		State: string(state), Reason: reason,
		Data: AttemptEndedData{Class: class, ExitCode: rep.exit, PID: rep.pid, Outputs: rep.outputs}})
	if state == AttemptStopped {
		if !c.state.Final() && !r.stopping {
			t.phase = tIdle // stood down (a skipped or paused cue); nothing more to do
		}
		return
	}
	if state == AttemptCompleted {
		t.phase, t.outputs = tDone, rep.outputs
		if r.allAt(c, tDone) {
			r.completeCue(ctx, c)
		}
		return
	}
	ag := a.agent
	canRetry := retriable(ag, class) || rep.fail.retry
	if ag.Cooldown > 0 && canRetry {
		until := time.Now().Add(ag.Cooldown.D()).UTC()
		r.emit(Event{Type: EvCooldown, Cue: c.cue.ID, Agent: ag.ID, Reason: reason, Data: CooldownData{Until: until}})
	}
	switch {
	case canRetry && t.tries < maxAttempts(ag):
		delay := backoff(ag, t.tries)
		t.phase, t.retryAt = tIdle, time.Now().Add(delay)
		r.wakeNoLaterThan(t.retryAt, c)
		r.emit(Event{Type: EvNote, Cue: c.cue.ID, Agent: ag.ID, Attempt: a.number,
			Reason: fmt.Sprintf("%s (%s): retry %d of %d in %s", reason, class, t.tries+1, maxAttempts(ag), delay.Round(time.Millisecond))})
	case r.takeFallback(ctx, c, t, "failed ("+class+")"):
	default:
		t.phase = tFailed
		r.endCue(ctx, c, CueFailed, fmt.Sprintf("%s: %s", ag.ID, reason))
	}
}

// completeCue merges the targets' outputs, exports the cue's exports to the
// blackboard and records the cue completed.
func (r *run) completeCue(ctx context.Context, c *cueRun) {
	c.outputs = map[string]any{}
	for _, t := range c.targets {
		for k, v := range t.outputs {
			c.outputs[k] = v
		}
	}
	if len(c.outputs) > 0 {
		r.withOutputs.Add(c.cue)
	}
	for _, key := range c.cue.Exports {
		v, ok := c.outputs[key]
		if !ok {
			continue
		}
		author := c.targets[0].agent.ID
		put := BlackboardPut{Key: key, Value: mustJSON(v), Author: author}
		if _, err := r.writeBoard(ctx, []BlackboardPut{put}); err != nil {
			return // the run ends with the error (writeBoard)
		}
	}
	r.endCue(ctx, c, CueCompleted, "")
}
