package runner

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
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
	msg  *driver.Wire // the protocol message to send, already recorded
	// base and from (GO, workspace: worktree): the commit the attempt's
	// worktree moves to and the dependency cue whose branch it is ("": HEAD).
	base, from string
}

// attemptRun is one agent's attempt at one cue, driven by its own
// goroutine through WARNING, STANDBY and GO on the loop's orders. Its
// driver sees the value it embeds (driver.Attempt) and the services it
// gives as the driver's Host (attempt_host.go), nothing else.
type attemptRun struct {
	*driver.Attempt       // Cue (a child task's own, never scheduled), Agent, Number, Token...
	r               *host // what it sees of its run
	pos             int   // the cue's plan position (-1: a child task)
	slot            int   // which of the cue's agents it serves
	orders          chan orderMsg
	stopping
	// trivial: a plain agent with neither prepare nor ready_check has nothing
	// to do at WARNING and STANDBY, so the loop takes it through them itself.
	trivial bool
	// again: the attempt was paused for a manual GO (sched.AttemptPaused)
	// and is prepared again under its number: its worktree branch, made by
	// the first preparation and never committed to, is made again.
	again bool

	node    *node       // the task it serves in the run's tree
	peer    driver.Peer // how the hub reaches its agent in GO (nil: it takes no message)
	child   *child      // set for a child task's attempt: it drives itself through the phases
	reports chan report // where it reports: the loop's channel, or its child's
	inGo    atomic.Bool // GO was sent: it may receive messages and questions
	guard   loopGuard   // repeated messages (under calls.serving)
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
	exports []attempt.ChildExport
	status  AgentStatus               // what the agent last reported of its state (under mu)
	calls                             // its typed requests (call.go)
	inbox   atomic.Pointer[inboxPeer] // its peer when it takes no jsonl messages but has orch's MCP tools; set in GO, read by MCP tool calls
}

// stopping is how an attempt ends early: told to stop (halt, why), or
// failed by another goroutine (abort, failed, under the attempt's mu).
type stopping struct {
	halt   chan struct{} // closed to stop the attempt
	ended  chan struct{} // closed when its phases are over: nothing more is taken from its agent
	abort  chan struct{} // closed by fail: another goroutine ended it (a question unanswered in time)
	once   sync.Once
	why    string
	failed *attempt.Failure
}

func newAttempt(r *host, c *planner.Cue, pos, slot int, agent *spec.Agent, n *node, number int, reports chan report) *attemptRun {
	a := &attemptRun{r: r, pos: pos, slot: slot, node: n, reports: reports,
		orders:   make(chan orderMsg, 2),
		stopping: stopping{halt: make(chan struct{}), ended: make(chan struct{}), abort: make(chan struct{})},
		kids:     map[*child]bool{},
		trivial:  driver.Trivial(agent),
		logs:     r.newLogCap()}
	a.Attempt = &driver.Attempt{RunID: r.id, Cue: c, Agent: agent, Number: number,
		Token:  r.id + "/cue/" + attempt.SafeName(c.ID) + "/" + strconv.Itoa(number) + "/" + record.NewRunID(),
		OutDir: r.workDir, Cgroup: r.sweeper.Cgroup(), Timeouts: attempt.TimeoutsOf(r.plan.Cuelist, c, agent, r.grace),
		Host: a, Agents: r.agents, Halt: a.halt, Abort: a.abort, Ended: a.ended}
	return a
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

// Failure is the failure another goroutine ended the attempt with (see
// fail; driver.Host).
func (a *attemptRun) Failure() *attempt.Failure {
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

// Stopped is the failure of an attempt told to stop (driver.Host).
func (a *attemptRun) Stopped() *attempt.Failure {
	return attempt.Failf("stopped", "%s", a.why)
}

// run takes the attempt through its phases and reports its end.
func (a *attemptRun) run(ctx context.Context) {
	defer a.r.active.Done()
	a.r.sweeper.Begin(a.Token)
	defer a.r.sweeper.End(a.Token)
	d := driver.Of(a.Agent).New()
	detach := a.attachMCP()
	outputs, fail := a.phases(d)
	detach()
	close(a.ended)
	a.inGo.Store(false)
	why := "their parent's attempt ended"
	if a.halted() { // stopped: its children stop for the same reason
		why = a.why
	}
	a.endChildren(why)
	a.r.withdrawQuestions(a)
	a.r.endWatch(a)
	pid, exit := d.Close(a.Attempt)
	if fail == nil && a.ws != nil && a.resolving == nil { // its processes are gone: its work is done (a resolver's is the merge's to check)
		outputs, fail = a.commitWorkspace(outputs)
	}
	if fail == nil && a.resolving == nil { // a resolver's outputs are no cue's
		fail = attempt.CheckContract(a.Agent, outputs)
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
	ended := report{kind: repEnded, att: a, fail: fail, outputs: outputs, pid: pid, exit: exit, reply: a.Msgs.TakeReply()}
	if a.child == nil {
		// Its report goes to the loop, which keeps the task tree: the task
		// is ended there as the report is taken (taskEnded), not through a
		// request to the loop first, a round trip of two goroutine switches
		// between the process's exit and the next cue's GO.
		ended.taskEnded = how
	} else {
		a.r.endTask(a.node, how)
	}
	// What the attempt printed is logged before its end is reported: a
	// failure is shown with its last lines, read from the store, and a cue
	// that starts after this one ended logs after it (orch logs and orch
	// events keep a chain's lines in the order they were written). Its
	// processes are gone and swept, so nothing can hold the output open.
	for _, p := range a.procs {
		p.WaitOutput()
	}
	a.CloseLog()
	a.reports <- ended
}

func (a *attemptRun) phases(d driver.Driver) (map[string]any, *attempt.Failure) {
	if a.resolving == nil { // a resolver works in its merge's worktree
		if f := a.openWorkspace(); f != nil {
			return nil, f
		}
	}
	a.Dir = a.dir()
	if a.resolving != nil {
		return a.resolverPhases(d)
	}
	if a.child != nil {
		return a.childPhases(d)
	}
	if a.trivial {
		driver.PrepareGo(d, a.Attempt)
		task, f := a.await(orderGo)
		if f != nil {
			return nil, f
		}
		return a.work(d, task)
	}
	if f := d.Warning(a.Attempt); f != nil {
		return nil, f
	}
	a.reports <- report{kind: repWarned, att: a, reply: a.Msgs.TakeReply()}
	o, f := a.awaitOrder(orderStandby)
	if f != nil {
		return nil, f
	}
	a.Msgs.Standby = o.msg
	if f := d.Standby(a.Attempt); f != nil {
		return nil, f
	}
	a.reports <- report{kind: repReady, att: a, reply: a.Msgs.TakeReply()}
	driver.PrepareGo(d, a.Attempt)
	o, f = a.awaitOrder(orderGo)
	if f != nil {
		return nil, f
	}
	a.Msgs.Go = o.msg
	return a.work(d, o.task)
}

// work runs the GO task, keeping its inputs: the attempt's children inherit
// them (child.task). Its children start from its own goroutine, after this.
func (a *attemptRun) work(d driver.Driver, t *attempt.Task) (map[string]any, *attempt.Failure) {
	a.inputs = t.Inputs
	return d.Work(a.Attempt, t)
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
		return orderMsg{}, a.Stopped()
	}
}

// dir is the attempt's working directory: where its agent's processes start
// (a protocol agent's process, which serves several attempts, starts in
// the agent's workdir) and the session's directory for drivers that have
// one. It is the agent's workdir, in the attempt's worktree when it has one.
func (a *attemptRun) dir() string {
	dir := attempt.Workdir(a.Agent)
	if a.ws == nil {
		return dir
	}
	return a.ws.dirFor(a.r.worktrees.repo, dir)
}

func (a *attemptRun) logLine(stream, text string) record.LogLine {
	return record.LogLine{RunID: a.r.id, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number,
		Stream: stream, At: time.Now().UTC(), Text: text}
}
