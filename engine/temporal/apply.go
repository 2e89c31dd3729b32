package temporal

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// apply records the core's decisions as events and carries them out with
// activities, in order (the workflow's history is the commit: an event and
// the activity it orders are decided in the same workflow task).
func (w *wf) apply() {
	for {
		ds := append([]sched.Decision(nil), w.core.Decisions()...)
		ends := w.idleStops
		w.idleStops = nil
		if len(ds) == 0 && len(ends) == 0 {
			return
		}
		for _, d := range ds {
			w.applyOne(d)
		}
		for _, f := range ends { // stopped while no activity of theirs ran
			w.ended(f, AttemptResult{Failed: true, Class: "stopped", Reason: f.stopWhy})
		}
	}
}

func (w *wf) applyOne(d sched.Decision) {
	r := w.lastEnd // the attempt end the core's AttemptEnded decision records
	for _, ev := range record.EventFor(w.plan, w.core, d, record.AttemptEnd{PID: r.PID, ExitCode: r.ExitCode, Outputs: r.Outputs}) {
		w.emit(ev)
	}
	switch d.Kind {
	case sched.StartAttempt:
		f := w.newFlight(d)
		if !trivial(d.Agent) {
			w.phase(f, ActivityWarning, nil, func() { w.core.Warned(f.pos, f.slot, f.number) })
		}
	case sched.SendStandby:
		if f := w.atts[d.Cue][d.Target]; f != nil {
			w.phase(f, ActivityStandby, nil, func() { w.core.Ready(f.pos, f.slot, f.number) })
		}
	case sched.SendGo:
		if f := w.atts[d.Cue][d.Target]; f != nil {
			w.phase(f, ActivityGo, w.task(d.Cue, f), nil)
		}
	case sched.StopAttempt:
		if f := w.atts[d.Cue][d.Target]; f != nil {
			w.stop(f, d.Reason)
		}
	case sched.Export:
		b, err := json.Marshal(d.Value)
		if err != nil {
			b = []byte("null")
		}
		w.writeBoard(d.Key, b, d.Agent.ID, w.core.Cue(d.Cue).ID)
	case sched.Expand:
		w.expand(d)
	case sched.StartMerge:
		w.startMerge(d)
	case sched.MergeEnded:
		w.mergeEnded(d)
	case sched.StopMerge:
		w.stopMerge(d)
	case sched.AskMerge:
		w.askMerge(d)
	case sched.ContinueMerge:
		w.continueMerge(d)
	case sched.ResolveMerge:
		w.resolveMerge(d)
	}
}

// writeBoard writes a blackboard key and records it.
func (w *wf) writeBoard(key string, value json.RawMessage, author, cue string) {
	e := w.board[key]
	e.value, e.author = value, author
	e.version++
	w.board[key] = e
	seq := w.emit(record.Event{Type: record.EvBlackboard, Cue: cue, Agent: author, Data: record.BlackboardData{Key: key, Version: e.version}})
	if w.log.values == nil {
		w.log.values = map[int64]json.RawMessage{}
	}
	w.log.values[seq] = value
}

// newFlight registers the attempt the core started.
func (w *wf) newFlight(d sched.Decision) *flight {
	actx, cancel := workflow.WithCancel(w.ctx)
	f := &flight{pos: d.Cue, slot: d.Target, number: d.Attempt, agent: d.Agent, actx: actx, cancel: cancel}
	w.atts[d.Cue][d.Target] = f
	w.running++
	return f
}

// stop cancels the attempt's activity; it ends as stopped, saying why. An
// attempt between activities (standing by for GO) ends at once.
func (w *wf) stop(f *flight, why string) {
	if f.stopWhy != "" {
		return
	}
	f.stopWhy = why
	f.cancel()
	if !f.busy {
		w.idleStops = append(w.idleStops, f)
	}
}

// task is the GO task of attempt f: the run's inputs, the outputs of the
// cues it depends on (in plan order, later ones winning), the cue's inputs,
// the blackboard and the agent's tools (as the local runner builds it).
func (w *wf) task(pos int, f *flight) *attempt.Task {
	t := attempt.PlanTask(w.plan, w.core, pos, w.in.Inputs, f.agent.ID)
	t.RunID, t.Attempt = w.in.RunID, f.number
	entries := map[string]record.BlackboardEntry{}
	for k, e := range w.board {
		entries[k] = record.BlackboardEntry{Key: k, Value: e.value, Version: e.version, Author: e.author}
	}
	return attempt.WithBoard(t, entries)
}

// phase runs one of the attempt's activities on its agent's queue; ok runs
// when it succeeded (nil for GO: its success ends the attempt).
func (w *wf) phase(f *flight, name string, task *attempt.Task, ok func()) {
	c := w.core.Cue(f.pos)
	in := AttemptInput{RunID: w.in.RunID, Path: w.in.Path, SpecHash: w.in.SpecHash, Cue: c.ID, Agent: f.agent.ID, Attempt: f.number, Task: task, Try: f.lost + 1}
	in.Worktree = w.worktreeFor(f, name)
	f.busy = true
	fut := workflow.ExecuteActivity(workflow.WithActivityOptions(f.actx, w.activityOptions(f, name)), name, in)
	w.sel.AddFuture(fut, func(fut workflow.Future) {
		f.busy = false
		var res AttemptResult
		err := fut.Get(w.ctx, &res)
		w.recordMessages(w.core.Cue(f.pos).ID, f.agent.ID, f.number, &res)
		if f.interrupt != "" && f.stopWhy == "" && (err != nil || res.Failed) { // a child's GO lost its worker (children_lost.go)
			w.interruptLost(f)
			w.apply()
			return
		}
		if err != nil {
			if w.workerLost(f, name, task, ok, err) {
				w.apply()
				return
			}
			res = w.activityFailure(f, name, err)
		}
		if !res.Failed && ok != nil {
			if w.atts[f.pos][f.slot] == f && f.stopWhy == "" {
				ok()
				w.apply()
				return
			}
			res = AttemptResult{Failed: true, Class: "stopped", Reason: f.stopWhy}
		}
		w.ended(f, res)
		w.apply()
	})
}

// workerLost handles an activity whose worker was lost (its heartbeat or
// time ran out, or a draining worker handed it back), in runs started since
// the workflow dispatches again itself (versionLostWorker): a GO of a cue
// that is not idempotent is never run again by itself (the cue is
// interrupted, waiting for orch go); any other phase is dispatched again, up
// to workerLostTries workers in all. Each loss is a note on the attempt.
// false: not a lost worker, or no tries left (the attempt fails).
func (w *wf) workerLost(f *flight, name string, task *attempt.Task, ok func(), err error) bool {
	why := lostWhy(err)
	if w.version < versionLostWorker || why == "" || f.stopWhy != "" || w.atts[f.pos][f.slot] != f {
		return false
	}
	c := w.core.Cue(f.pos)
	step := phaseNames[name]
	if name == ActivityGo && !c.IsIdempotent() {
		reason := fmt.Sprintf("its worker was lost during GO (%s) and cue %s is not idempotent: it is not run again by itself", why, c.ID)
		if w.core.Interrupt(f.pos, f.slot, f.number, reason) {
			w.running--
			w.atts[f.pos][f.slot] = nil
			f.cancel()
			return true
		}
		return false // a fan-out's item: it fails as worker-lost, not run again
	}
	if f.lost+1 >= workerLostTries {
		return false
	}
	f.lost++
	w.emit(lostNote(c.ID, f.agent.ID, f.number, step, why, f.lost+1))
	w.phase(f, name, task, ok)
	return true
}

// activityFailure turns an activity that did not return (stopped, its
// worker lost, timed out) into the attempt's failure.
func (w *wf) activityFailure(f *flight, name string, err error) AttemptResult {
	var canceled *temporal.CanceledError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &canceled) || f.stopWhy != "":
		return AttemptResult{Failed: true, Class: "stopped", Reason: f.stopWhy}
	case errors.As(err, &timeout):
		return AttemptResult{Failed: true, Class: "worker-lost", Reason: fmt.Sprintf("%s: no worker finished it in time (%s timeout, %d workers tried): its workers may be gone", name, timeout.TimeoutType(), workerLostTries)}
	case lostWhy(err) != "":
		return AttemptResult{Failed: true, Class: "worker-lost", Reason: fmt.Sprintf("%s: %s", name, lostWhy(err))}
	}
	return AttemptResult{Failed: true, Class: "malfunction", Reason: fmt.Sprintf("%s: %v", name, err)}
}

// lostNote notes on an attempt that its phase step lost its worker and is
// given to worker try of workerLostTries.
func lostNote(cue, agent string, number int, step, why string, try int) record.Event {
	return record.Event{Type: record.EvNote, Cue: cue, Agent: agent, Attempt: number,
		Reason: fmt.Sprintf("attempt %d: its worker was lost during %s (%s): %s dispatched again, worker %d of %d", number, step, why, step, try, workerLostTries)}
}

// phaseNames name the activities' phases in notes.
var phaseNames = map[string]string{ActivityWarning: "WARNING", ActivityStandby: "STANDBY", ActivityGo: "GO"}

// lostWhy says how an activity's worker was lost, or "" when err is not
// such a loss (a cancellation, or the activity's own error).
func lostWhy(err error) string {
	var timeout *temporal.TimeoutError
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &timeout):
		return fmt.Sprintf("no worker finished it in time: %s timeout", strings.ToLower(strings.TrimPrefix(timeout.TimeoutType().String(), "TimeoutType")))
	case errors.As(err, &app) && app.Type() == HandedBack:
		return "its worker stopped and handed it back"
	}
	return ""
}

// activityOptions: a heartbeat to notice a lost worker, and the agent's
// queue. An activity whose worker was lost (its heartbeat or its time ran
// out) is tried again, on another worker, up to workerLostTries times, as
// the same attempt: as a local run resumed after a crash runs the GO again.
// An agent's own failure is the activity's result, not an error, so it is
// never retried here: orch's retry policy decides what happens next.
func (w *wf) activityOptions(f *flight, name string) workflow.ActivityOptions {
	cl := w.plan.Cuelist
	timeout := attempt.StandbyTimeout(cl)
	if name == ActivityGo {
		timeout = attempt.GoTimeout(cl, w.core.Cue(f.pos), f.agent)
	}
	grace := attempt.KillGrace(cl, 0)
	return workflow.ActivityOptions{TaskQueue: queueOf(f.agent, w.queue),
		ScheduleToStartTimeout: 24 * time.Hour, StartToCloseTimeout: timeout + 2*grace + time.Minute,
		HeartbeatTimeout: HeartbeatTimeout, WaitForCancellation: true, Summary: w.activitySummary(f, name),
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: w.activityTries(), InitialInterval: time.Second}}
}

// activityTries: Temporal tries an activity again on another worker in runs
// started before versionLostWorker; since, the workflow does (workerLost).
func (w *wf) activityTries() int32 {
	if w.version >= versionLostWorker {
		return 1
	}
	return workerLostTries
}

// workerLostTries is how many workers an activity may be given in all
// before its attempt fails as worker-lost.
const workerLostTries = 3

// HeartbeatTimeout is how long an activity may go without a heartbeat
// before Temporal gives it up (its worker is gone).
const HeartbeatTimeout = 30 * time.Second

func queueOf(a *spec.Agent, def string) string {
	if a.Placement != nil && a.Placement.Queue != "" {
		return a.Placement.Queue
	}
	return def
}

// ended records the attempt's end and tells the core.
func (w *wf) ended(f *flight, res AttemptResult) {
	c := w.core.Cue(f.pos)
	// All of the attempt's lines, once, here: the follower skips an
	// attempt whose lines the store has already (written before a crash).
	w.log.addLogs(SeqLogs{Cue: c.ID, Agent: f.agent.ID, Attempt: f.number, Lines: res.Log})
	w.running--
	if w.atts[f.pos][f.slot] == f {
		w.atts[f.pos][f.slot] = nil
	}
	w.recordWorktree(f, res)
	if c := w.chain.collab; c != nil {
		c.withExports(f, &res) // its children's, when its cue accepts them (children.go)
	}
	w.lastEnd = res // recorded with the core's AttemptEnded decision
	end := sched.End{Outputs: res.Outputs}
	if res.Failed {
		end.Failed, end.Class, end.Reason = true, res.Class, res.Reason
		end.Retriable = sched.Retriable(f.agent, res.Class)
	}
	f.cancel()
	w.core.Ended(workflow.Now(w.ctx), f.pos, f.slot, f.number, end)
}
