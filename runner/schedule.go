package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// The scheduling itself is runner/sched's: the loop feeds the core what
// happened and carries out what it decided, recording each decision before
// it acts on it (emit, then an action run once the commit succeeds).

// advance steps every touched cue as far as it can go now.
func (r *run) advance(ctx context.Context) {
	if r.broken.get() != nil {
		return
	}
	r.core.Advance(time.Now())
	r.apply(ctx, nil)
}

// apply records and carries out the core's decisions, in order. rep is the
// attempt's end the decisions answer, when they answer one.
func (r *run) apply(ctx context.Context, rep *report) {
	for _, d := range r.core.Decisions() {
		if !r.applyOne(ctx, d, rep) {
			return // the board could not be written: the run ends (writeBoard)
		}
	}
}

func (r *run) applyOne(ctx context.Context, d sched.Decision, rep *report) bool {
	var end record.AttemptEnd
	if rep != nil && rep.att != nil && rep.att.pos == d.Cue && rep.att.slot == d.Target && rep.att.Number == d.Attempt {
		// The report's process is this attempt's: not that of an attempt
		// ended without one (paused for a GO that will not come).
		end = record.AttemptEnd{PID: rep.pid, ExitCode: rep.exit, Outputs: rep.outputs}
	}
	events := record.EventFor(r.plan, r.core, d, end)
	r.emit(events...)
	switch d.Kind {
	case sched.StartAttempt:
		r.launch(ctx, d)
	case sched.SendStandby:
		r.orderStandby(r.atts[d.Cue][d.Target])
	case sched.SendGo:
		a := r.atts[d.Cue][d.Target]
		r.orderGo(a, r.task(d.Cue, a))
	case sched.StopAttempt:
		if att := r.atts[d.Cue][d.Target]; att != nil {
			why := d.Reason
			r.then(func() { att.stop(why) })
		}
	case sched.Export:
		put := record.BlackboardPut{Key: d.Key, Value: mustJSON(d.Value), Author: d.Agent.ID}
		written, err := r.writeBoard(ctx, []record.BlackboardPut{put})
		if err != nil {
			r.core.Broken()
			return false
		}
		r.boardChanged(nil, []record.BlackboardPut{put}, written)
	case sched.Conflict:
		r.tellConflict(d, events[0].Data.(record.ConflictData))
	case sched.AskForGo:
		r.askForGo(ctx, d.Cue)
	case sched.Expand:
		r.expand(d)
	case sched.StartMerge, sched.ResolveMerge, sched.AskMerge, sched.ContinueMerge, sched.MergeEnded, sched.StopMerge:
		r.applyMerge(ctx, d)
	}
	return true
}

// launch records the attempt, then starts it: the number is committed first
// so a crash never loses or reuses it.
func (r *run) launch(ctx context.Context, d sched.Decision) {
	c := r.core.Cue(d.Cue)
	n := r.nodeOf(r.tasks.Root(c.ID, d.Agent), nil)
	a := newAttempt(r.host, c, d.Cue, d.Target, d.Agent, n, d.Attempt, r.reports)
	a.again = d.Again
	r.tasks.Serve(n.ref, a)
	if driver.Speaks(a.Agent) { // WARNING is recorded with the decision to send it
		a.Msgs.Warning = r.outbound(a, protocols.CoordWarning{RunID: r.id, CueID: c.ID, CueGroup: c.Group, TargetAgents: c.Agents,
			EstimatedGoTime: d.Until.Format(time.RFC3339), PreparationRequired: c.PreparationRequired, Attempt: a.Number})
	}
	r.atts[d.Cue][d.Target] = a
	// The attempt is counted once its goroutine starts, with the commit:
	// an attempt whose start could not be recorded never runs, and the
	// stop path must not wait for its report.
	r.then(func() {
		r.running++
		r.active.Add(1)
		go a.run(ctx)
	})
}

// orderStandby records coord.standby for a protocol agent's attempt and
// orders the attempt to send it once recorded.
func (r *run) orderStandby(a *attemptRun) {
	var m *driver.Wire
	if driver.Speaks(a.Agent) {
		m = r.outbound(a, protocols.CoordStandby{RunID: r.id, CueID: a.Cue.ID, TargetAgents: a.Cue.Agents, ReadyCheck: a.Cue.ReadyCheck})
	}
	r.then(func() { a.orders <- orderMsg{kind: orderStandby, msg: m} })
}

// orderGo orders the attempt to go once the decision is committed. A
// protocol agent's coord.go, which carries the blackboard as it is now, is
// recorded with the decision: one commit, not a second one before sending.
func (r *run) orderGo(a *attemptRun, task *attempt.Task) {
	var m *driver.Wire
	if driver.Speaks(a.Agent) {
		m = r.outbound(a, protocols.CoordGo{RunID: r.id, CueID: a.Cue.ID, TargetAgents: a.Cue.Agents,
			Task: attempt.ProtocolTask(a.Board(task))})
	}
	o := orderMsg{kind: orderGo, task: task, msg: m}
	if a.Agent.Workspace == WorkspaceWorktree { // the dependencies are done: their branches are known
		o.base, o.from = r.worktreeBase(a.Cue)
	}
	r.thenGo(func() { a.orders <- o })
}

// outbound creates a message to an agent and emits its record, so that it is
// stored with the decision that sends it.
func (r *run) outbound(a *attemptRun, b protocols.Body) *driver.Wire {
	msg := protocols.New(b)
	raw, err := protocols.Encode(msg)
	if err != nil {
		panic(fmt.Sprintf("runner: cannot encode %s: %v", msg.Type, err)) // orch's own messages always encode
	}
	m := &driver.Wire{Msg: msg, Raw: raw}
	r.emit(a.messageEvent("out", m))
	return m
}

// lookup is what the core reads, over the recorder.
type lookup struct {
	r   *run
	ctx context.Context
}

// Conditions reads the blackboard for a cue's conditions; a failure ends
// the run.
func (l lookup) Conditions(cue string, keys []string) (map[string]json.RawMessage, error) {
	board, err := l.r.rec.Blackboard(l.ctx, l.r.id)
	if err != nil {
		return nil, l.r.recordFailed(fmt.Errorf("reading the blackboard for the conditions of cue %s: %w", cue, err))
	}
	values := make(map[string]json.RawMessage, len(keys))
	for _, k := range keys {
		if e, ok := board[k]; ok {
			values[k] = e.Value
		}
	}
	return values, nil
}

// CooldownUntil returns when the agent's cooldown ends (zero when the store
// cannot say).
func (l lookup) CooldownUntil(agent string) time.Time {
	until, err := l.r.rec.CooldownUntil(l.ctx, agent)
	if err != nil {
		return time.Time{}
	}
	return until
}

// askForGo asks a person for GO on a terminal, once the cue's standby is
// recorded and shown; the answer comes back as a report.
func (r *run) askForGo(ctx context.Context, pos int) {
	c := r.core.Cue(pos)
	r.then(func() {
		go func() {
			r.shown()
			ok := r.opts.Approve(ctx, c.ID, c.Agents)
			r.reports <- report{kind: repApproval, pos: pos, ok: ok}
		}()
	})
}

// commands applies what other orch processes sent through the store: a GO
// for a waiting cue (orch go), a stop of the run or of one cue (orch stop). It returns why to stop, or
// whether a GO moved something.
func (r *run) commands(ctx context.Context) (stop string, moved bool) {
	cmds, err := r.rec.Commands(ctx, r.id)
	if err != nil {
		return "", false // a busy database: look again at the next poll
	}
	for _, cmd := range cmds {
		switch cmd.Kind {
		case "go":
			if r.core.Approve(cmd.Cue, "orch go") {
				moved = true
			}
		case "stop":
			if cmd.Cue != "" { // one cue and its subtree; the rest goes on
				r.stopCue(cmd.Cue, cmd.Arg)
				break
			}
			stop = "orch stop"
			if cmd.Arg != "" {
				stop += ": " + cmd.Arg
			}
		case "answer":
			// orch answer stored it masked: its agent gets the secrets back
			r.answerFromPerson(cmd.Cue, r.redact.RestoreText(cmd.Arg)) // written to its agent off the loop
		case "status-request":
			r.askStatus(cmd.Cue) // the requests are written off the loop
		case "notify-mode":
			r.notifyModeFromPerson(cmd.Cue, cmd.Arg)
		}
		_ = r.rec.CommandDone(ctx, cmd.ID)
	}
	r.apply(ctx, nil)
	return stop, moved
}

// stopCue stops one cue and its subtree (orch stop RUN CUE): the core ends
// it stopped and stops its attempts, whose children stop with them; a cue
// that cannot be stopped gets a note saying why.
func (r *run) stopCue(cue, by string) {
	reason := "orch stop"
	if by != "" {
		reason = by
	}
	if ok, why := r.core.StopCue(cue, reason); !ok {
		r.emit(record.Event{Type: record.EvNote, Cue: cue, Reason: "orch stop " + cue + ": " + why})
	}
}
