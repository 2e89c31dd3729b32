package runner

import (
	"context"
	"sync"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// child is a task started during a parent's GO: the receiver of a handoff
// (the parent waits for its handoff.result) or a spawned agent (the parent
// goes on and gets task.announce). It runs its agent through WARNING,
// STANDBY and GO at once — it is part of its parent's work, so it takes no
// GO slot and no lock — with the agent's retries, and ends with its parent.
type child struct {
	r       *run
	node    *node
	parent  *attemptRun       // the attempt that started it
	req     protocols.Message // the task.handoff or task.spawn it answers
	taskRef string            // a handoff's task_id, as the sender gave it
	inputs  map[string]any    // a spawn's inputs
	hctx    map[string]any    // a handoff's handoff_context
	cue     *planner.Cue      // its own cue, for its attempts (never scheduled)
	reports chan report

	halt chan struct{}
	once sync.Once
	why  string
	done chan struct{}
}

// childResult is how a child ended.
type childResult struct {
	status  record.CueState // completed, failed or stopped
	outputs map[string]any
	reason  string
}

// newChild records a child task of parent; start starts it. The caller has
// checked that it may start.
func (r *run) newChild(parent *attemptRun, kind string, agent *spec.Agent, req protocols.Message, taskRef string, inputs, hctx map[string]any) (*child, error) {
	given := hctx
	if kind == "spawn" {
		given = inputs
	}
	n, err := r.newTask(parent, agent, kind, record.TaskStartedData{TaskRef: taskRef, Context: given})
	if err != nil {
		return nil, err
	}
	c := &child{r: r, node: n, parent: parent, req: req, taskRef: taskRef, inputs: inputs, hctx: hctx,
		reports: make(chan report, 4), halt: make(chan struct{}), done: make(chan struct{}),
		cue: &planner.Cue{Cue: &spec.Cue{ID: n.id, Agents: []string{agent.ID}}}}
	return c, nil
}

// start runs the child; its parent's end stops it.
func (c *child) start() {
	p := c.parent
	p.mu.Lock()
	p.kids[c] = true
	p.mu.Unlock()
	c.r.active.Add(1)
	go c.run()
}

// context0 is for records that must be written whatever happens to the run.
var context0 = context.Background()

// stop ends the child (and so its own children) with why.
func (c *child) stop(why string) {
	c.once.Do(func() {
		c.why = why
		close(c.halt)
	})
}

func (c *child) halted() bool {
	select {
	case <-c.halt:
		return true
	default:
		return false
	}
}

// run takes the child through its attempts, records how it ended and tells
// its parent, unless the parent is the reason it ended.
func (c *child) run() {
	defer c.r.active.Done()
	defer close(c.done)
	res := c.attempts()
	r, n := c.r, c.node
	ev := record.Event{RunID: r.id, At: time.Now().UTC(), Type: record.EvCueState, Cue: n.id, State: string(res.status), Reason: res.reason}
	if res.status == record.CueCompleted {
		ev.Data = record.CueStateData{Outputs: res.outputs}
	}
	_ = r.publish(context0, ev)
	r.endTask(n, string(res.status))
	if res.status == record.CueCompleted {
		c.exportToCue(res.outputs)
	}
	c.parent.mu.Lock()
	delete(c.parent.kids, c)
	c.parent.mu.Unlock()
	if c.halted() {
		return // its parent stopped it: nobody waits for the result
	}
	c.tellParent(res)
}

// attempts runs attempt after attempt: after each, the core decides
// (sched.Core.ChildEnded, asked through the loop) whether the agent tries
// again, and when, or how the task ended.
func (c *child) attempts() childResult {
	agent := c.node.agent
	for tries := 1; ; tries++ {
		if c.halted() {
			return childResult{status: record.CueStopped, reason: c.why}
		}
		rep := c.attempt(tries)
		r := c.r
		end := sched.End{Outputs: rep.outputs}
		if f := rep.fail; f != nil {
			end.Failed, end.Class, end.Reason = true, f.Class, f.Reason
			end.Retriable = sched.Retriable(agent, f.Class) || f.Retry
		}
		step := r.childEnded(c.node, tries, end)
		a := rep.att
		events := []record.Event{{RunID: r.id, At: time.Now().UTC(), Type: record.EvAttemptEnded, Cue: c.node.id, Agent: agent.ID, Attempt: a.Number,
			State: string(step.Attempt), Reason: end.Reason,
			Data: record.AttemptEndedData{Class: end.Class, ExitCode: rep.exit, PID: rep.pid, Outputs: rep.outputs}}}
		if rep.reply != nil {
			events = append([]record.Event{a.messageEvent("in", rep.reply)}, events...)
		}
		_ = r.publish(context0, events...)
		if !step.Retry {
			res := childResult{status: record.CueState(step.End), reason: step.Reason}
			if step.End == sched.Completed {
				res.outputs = end.Outputs
			}
			return res
		}
		select {
		case <-time.After(time.Until(step.At)):
		case <-c.halt:
		}
	}
}

// attempt runs one attempt of the child and returns its end.
func (c *child) attempt(number int) report {
	r, n := c.r, c.node
	a := newAttempt(r.host, c.cue, -1, 0, n.agent, n, number, c.reports)
	a.child = c
	events := []record.Event{
		{RunID: r.id, At: time.Now().UTC(), Type: record.EvAttemptStarted, Cue: n.id, Agent: n.agent.ID, Attempt: number, Data: record.AttemptStartedData{}},
		{RunID: r.id, At: time.Now().UTC(), Type: record.EvCueState, Cue: n.id, State: string(record.CueWarning)},
	}
	if driver.Speaks(n.agent) {
		a.Msgs.Warning = driver.Encode(protocols.New(protocols.CoordWarning{RunID: r.id, CueID: n.id, TargetAgents: []string{n.agent.ID}, Attempt: number}))
		events = append(events, a.messageEvent("out", a.Msgs.Warning))
	}
	if err := r.publish(context0, events...); err != nil {
		return report{kind: repEnded, att: a, fail: attempt.Failf("internal", "recording the attempt: %v", err)}
	}
	r.serveTask(n, a)
	r.active.Add(1)
	go a.run(context0)
	select {
	case rep := <-c.reports:
		return rep
	case <-c.halt:
		a.stop(c.why)
		return <-c.reports
	}
}

// task is the child's GO task, a full task like a cue's own agent's: its
// place in the tree (task id, parent, depth), and inputs inherited from the
// attempt that started it — the run's inputs, the outputs of the cue's
// dependencies, the cue's inputs, and whatever the ancestors in between
// were given — with its own spawn inputs or handoff_context on top: on a
// clash, what it was given itself wins. The handoff_context is also kept
// apart, as it was sent.
func (c *child) task(a *attemptRun) *attempt.Task {
	inputs := map[string]any{}
	for k, v := range c.parent.inputs {
		inputs[k] = v
	}
	for k, v := range c.inputs {
		inputs[k] = v
	}
	for k, v := range c.hctx {
		inputs[k] = v
	}
	tools := toolsOf(c.r.plan, a.Agent.ID).At(c.node.depth)
	if tools == nil {
		tools = []string{}
	}
	n := c.node
	return &attempt.Task{RunID: c.r.id, CueID: n.id, AgentID: a.Agent.ID, Attempt: a.Number, Inputs: inputs, Tools: tools, HandoffContext: c.hctx,
		TaskID: n.id, ParentTaskID: n.parent.id, Depth: n.depth, Workspace: a.worktreePath()}
}

// tellParent sends the outcome to the parent: handoff.result in answer to
// its task.handoff, or task.announce for a spawn.
func (c *child) tellParent(res childResult) {
	c.deliverSummary()
	p := c.parent
	var msg protocols.Message
	if c.node.kind == "handoff" {
		msg = protocols.Reply(c.req, protocols.HandoffResult{TaskID: c.taskRef, Status: string(res.status), Outputs: res.outputs, Reason: res.reason})
	} else {
		msg = protocols.New(protocols.TaskAnnounce{TaskID: c.node.id, Agent: c.node.agent.ID, Status: string(res.status), Outputs: res.outputs, Reason: res.reason})
	}
	if f := p.answer(msg); f != nil {
		p.Note("could not tell %s that task %s ended (%s): %s", p.Agent.ID, c.node.id, res.status, f.Reason)
	}
}

// endChildren stops the attempt's children still running and waits for them:
// no child outlives its parent.
func (a *attemptRun) endChildren(why string) {
	a.mu.Lock()
	kids := make([]*child, 0, len(a.kids))
	for c := range a.kids {
		kids = append(kids, c)
	}
	a.mu.Unlock()
	for _, c := range kids {
		c.stop(why)
	}
	for _, c := range kids {
		<-c.done
	}
}

// childPhases takes a child's attempt through WARNING and STANDBY and into
// GO at once, recording each step itself (no loop decides them).
func (a *attemptRun) childPhases(d driver.Driver) (map[string]any, *attempt.Failure) {
	r, id := a.r, a.node.id
	if !a.trivial {
		if f := d.Warning(a.Attempt); f != nil {
			return nil, f
		}
		events := a.replyEvents(record.Event{RunID: r.id, At: time.Now().UTC(), Type: record.EvCueState, Cue: id, State: string(record.CueStandby)})
		if driver.Speaks(a.Agent) {
			a.Msgs.Standby = driver.Encode(protocols.New(protocols.CoordStandby{RunID: r.id, CueID: id, TargetAgents: []string{a.Agent.ID}}))
			events = append(events, a.messageEvent("out", a.Msgs.Standby))
		}
		_ = r.publish(context0, events...)
		if f := d.Standby(a.Attempt); f != nil {
			return nil, f
		}
	}
	_ = r.publish(context0, a.replyEvents(record.Event{RunID: r.id, At: time.Now().UTC(), Type: record.EvCueState, Cue: id, State: string(record.CueGo)})...)
	return a.work(d, a.child.task(a))
}

// replyEvents is ev preceded by the record of the agent's last answer, if any.
func (a *attemptRun) replyEvents(ev record.Event) []record.Event {
	if m := a.Msgs.TakeReply(); m != nil {
		return []record.Event{a.messageEvent("in", m), ev}
	}
	return []record.Event{ev}
}
