package runner

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// order is what the loop tells an attempt to do next.
type order int

const (
	orderStandby order = iota + 1
	orderGo
)

type orderMsg struct {
	kind order
	task *attempt.Task
	msg  *wireMessage // the protocol message to send, already recorded
	// base and from (GO, workspace: worktree): the commit the attempt's
	// worktree moves to and the dependency cue whose branch it is ("": HEAD).
	base, from string
}

// wireMessage is a protocol message with its encoded line.
type wireMessage struct {
	msg protocols.Message
	raw []byte
}

// attempt is one agent's attempt at one cue, driven by its own goroutine
// through WARNING, STANDBY and GO on the loop's orders.
type attemptRun struct {
	r      *host        // what it sees of its run
	cue    *planner.Cue // a child task's own cue (never scheduled)
	pos    int          // the cue's plan position (-1: a child task)
	slot   int          // which of the cue's agents it serves
	agent  *spec.Agent
	number int
	token  string
	orders chan orderMsg
	// requests are the agent's requests during this attempt (jsonl agents)
	requests chan *wireMessage
	halt     chan struct{} // closed to stop the attempt
	ended    chan struct{} // closed when its phases are over: nothing more is taken from requests
	once     sync.Once
	why      string
	// trivial: a plain agent with neither prepare nor ready_check has nothing
	// to do at WARNING and STANDBY, so the loop takes it through them itself.
	trivial bool
	// warning is the coord.warning to send (jsonl), recorded at launch.
	warning *wireMessage
	// standbyMsg and goMsg are the coord.standby and coord.go to send,
	// recorded with the decisions (a child task records its own coord.go).
	standbyMsg, goMsg *wireMessage
	// reply is the agent's answer of the phase just done, for the loop to record.
	reply *wireMessage

	node    *node         // the task it serves in the run's tree
	proc    *agentProcess // a protocol agent's process, from WARNING on
	child   *child        // set for a child task's attempt: it drives itself through the phases
	reports chan report   // where it reports: the loop's channel, or its child's
	inGo    atomic.Bool   // GO was sent: it may receive messages and questions
	held    *wireMessage  // a request taken out of requests but not yet served (see serveWrites)
	guard   loopGuard     // repeated messages (its own goroutine only)
	// ws is a worktree agent's attempt's worktree, from before WARNING on
	// (its own goroutine); a resolver's is its merge's.
	ws *workspace
	// resolving is the merge a resolver's attempt works for, and
	// resolveTask its GO task (merge_resolver.go).
	resolving   *merge
	resolveTask *attempt.Task
	usage       record.Usage // what it reported it used so far (its own goroutine only)
	// inputs are its GO task's inputs, set before GO (its own goroutine):
	// what its children inherit.
	inputs map[string]any

	procs []*proc.Process // the processes it started (plain agents): their output is read to the end before it ends
	logs  *logCap         // its output's budget in the store (defaults.max_log)

	mu   sync.Mutex
	kids map[*child]bool // children still running: they end with it
	// exports are the outputs of the children that completed under it, for
	// a cue's own attempt when the cue accepts child exports (exports.go).
	exports []childExport
	abort   chan struct{} // closed by fail: another goroutine ended it (a question unanswered in time)
	failed  *attempt.Failure
	status  AgentStatus // what the agent last reported of its state (under mu)
}

// requestBuffer is how many of an agent's requests may wait for the
// attempt serving them: enough to batch a burst of blackboard writes into
// one transaction; beyond it the agent's pipe fills and it waits.
const requestBuffer = 256

func newAttempt(r *host, c *planner.Cue, pos, slot int, agent *spec.Agent, n *node, number int, reports chan report) *attemptRun {
	return &attemptRun{r: r, cue: c, pos: pos, slot: slot, agent: agent, number: number, node: n, reports: reports,
		token:  fmt.Sprintf("%s/cue/%s/%d/%s", r.id, attempt.SafeName(c.ID), number, record.NewRunID()),
		orders: make(chan orderMsg, 2), halt: make(chan struct{}), ended: make(chan struct{}), requests: make(chan *wireMessage, requestBuffer),
		abort: make(chan struct{}), kids: map[*child]bool{},
		trivial: trivial(agent),
		logs:    r.newLogCap()}
}

// fail ends the attempt from another goroutine, with f, as soon as it is
// waiting for its agent. The first failure wins.
func (a *attemptRun) fail(f *attempt.Failure) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failed == nil {
		a.failed = f
		close(a.abort)
	}
}

func (a *attemptRun) failure() *attempt.Failure {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
}

// halted reports whether the attempt has been told to stop.
func (a *attemptRun) halted() bool {
	select {
	case <-a.halt:
		return true
	default:
		return false
	}
}

func (a *attemptRun) stop(why string) {
	a.once.Do(func() {
		a.why = why
		close(a.halt)
	})
}

func (a *attemptRun) stopped() *attempt.Failure {
	return attempt.Failf("stopped", "%s", a.why)
}

// run takes the attempt through its phases and reports its end.
func (a *attemptRun) run(ctx context.Context) {
	defer a.r.active.Done()
	a.r.sweeper.Begin(a.token)
	defer a.r.sweeper.End(a.token)
	d := kindOf(a.agent).new()
	outputs, fail := a.phases(d)
	close(a.ended)
	a.inGo.Store(false)
	why := "their parent's attempt ended"
	if a.halted() { // stopped: its children stop for the same reason
		why = a.why
	}
	a.endChildren(why)
	a.r.withdrawQuestions(a)
	a.r.endWatch(a)
	pid, exit := d.close(a)
	if fail == nil && a.ws != nil && a.resolving == nil { // its processes are gone: its work is done (a resolver's is the merge's to check)
		outputs, fail = a.commitWorkspace(outputs)
	}
	if fail == nil && a.resolving == nil { // a resolver's outputs are no cue's
		fail = attempt.CheckContract(a.agent, outputs)
	}
	if fail == nil && a.child == nil {
		outputs = a.withChildExports(outputs)
	}
	how := "completed"
	if fail != nil {
		how = "failed"
		if fail.Class == "stopped" {
			how = "stopped"
		}
	}
	a.r.endTask(a.node, how)
	logged := func() {
		for _, p := range a.procs {
			p.WaitOutput()
		}
		a.logs.close(a.logLine("stderr", ""))
	}
	if how == "failed" {
		// A failure is shown with the last lines its attempt printed, read
		// from the store: they are logged before the failure is recorded.
		logged()
		a.reports <- report{kind: repEnded, att: a, fail: fail, outputs: outputs, pid: pid, exit: exit, reply: a.takeReply()}
		return
	}
	a.reports <- report{kind: repEnded, att: a, fail: fail, outputs: outputs, pid: pid, exit: exit, reply: a.takeReply()}
	// Otherwise the end is reported as soon as the process is gone; the
	// run ends only once what it printed is logged.
	logged()
}

// takeReply hands the last recorded-later reply to a report.
func (a *attemptRun) takeReply() *wireMessage {
	m := a.reply
	a.reply = nil
	return m
}

func (a *attemptRun) phases(d driver) (map[string]any, *attempt.Failure) {
	if a.resolving != nil {
		return a.resolverPhases(d)
	}
	if f := a.openWorkspace(); f != nil {
		return nil, f
	}
	if a.child != nil {
		return a.childPhases(d)
	}
	if a.trivial {
		prepareGo(d, a)
		task, f := a.await(orderGo)
		if f != nil {
			return nil, f
		}
		return a.work(d, task)
	}
	if f := d.warning(a); f != nil {
		return nil, f
	}
	a.reports <- report{kind: repWarned, att: a, reply: a.takeReply()}
	o, f := a.awaitOrder(orderStandby)
	if f != nil {
		return nil, f
	}
	a.standbyMsg = o.msg
	if f := d.standby(a); f != nil {
		return nil, f
	}
	a.reports <- report{kind: repReady, att: a, reply: a.takeReply()}
	prepareGo(d, a)
	o, f = a.awaitOrder(orderGo)
	if f != nil {
		return nil, f
	}
	a.goMsg = o.msg
	return a.work(d, o.task)
}

// work runs the GO task, keeping its inputs: the attempt's children inherit
// them (child.task). Its children start from its own goroutine, after this.
func (a *attemptRun) work(d driver, t *attempt.Task) (map[string]any, *attempt.Failure) {
	a.inputs = t.Inputs
	return d.work(a, t)
}

// await waits for the loop's next order, or for the attempt to be stopped.
func (a *attemptRun) await(want order) (*attempt.Task, *attempt.Failure) {
	o, f := a.awaitOrder(want)
	return o.task, f
}

func (a *attemptRun) awaitOrder(want order) (orderMsg, *attempt.Failure) {
	select {
	case o := <-a.orders:
		if o.kind != want {
			return orderMsg{}, attempt.Failf("internal", "expected order %d, got %d", want, o.kind)
		}
		if o.kind == orderGo && o.base != "" {
			return o, a.moveWorkspace(o.base, o.from)
		}
		return o, nil
	case <-a.halt:
		return orderMsg{}, a.stopped()
	}
}

// dir is the attempt's working directory: where its agent's processes start
// (a protocol agent's process, which serves several attempts, starts in
// agentDir) and the session's directory for drivers that have one. It is
// the agent's workdir, in the attempt's worktree when it has one.
func (a *attemptRun) dir() string {
	dir := a.agentDir()
	if a.ws == nil {
		return dir
	}
	return a.ws.dirFor(a.r.worktrees.repo, dir)
}

// agentDir is the agent's workdir (agentWorkdir).
func (a *attemptRun) agentDir() string { return attempt.Workdir(a.agent) }

// timeouts for this attempt's phases.
func (a *attemptRun) ackTimeout() time.Duration { return attempt.AckTimeout(a.r.plan.Cuelist, a.agent) }

func (a *attemptRun) standbyTimeout() time.Duration { return attempt.StandbyTimeout(a.r.plan.Cuelist) }

func (a *attemptRun) goTimeout() time.Duration {
	return attempt.GoTimeout(a.r.plan.Cuelist, a.cue, a.agent)
}

// log records one line of the agent's output, within its budget.
func (a *attemptRun) log(stream, text string) { a.logs.add(a.logLine(stream, text)) }

func (a *attemptRun) logLine(stream, text string) record.LogLine {
	return record.LogLine{RunID: a.r.id, Cue: a.cue.ID, Agent: a.agent.ID, Attempt: a.number,
		Stream: stream, At: time.Now().UTC(), Text: text}
}

// note records something worth seeing about this attempt (not a decision:
// a failure to record it does not stop the run).
func (a *attemptRun) note(format string, args ...any) {
	a.r.publish(context.Background(), record.Event{RunID: a.r.id, At: time.Now().UTC(), Type: record.EvNote,
		Cue: a.cue.ID, Agent: a.agent.ID, Attempt: a.number, Reason: fmt.Sprintf(format, args...)})
}
