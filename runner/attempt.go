package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
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
	task *Task
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
type attempt struct {
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
	resolveTask *Task
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
	failed  *failure
	status  AgentStatus // what the agent last reported of its state (under mu)
}

// requestBuffer is how many of an agent's requests may wait for the
// attempt serving them: enough to batch a burst of blackboard writes into
// one transaction; beyond it the agent's pipe fills and it waits.
const requestBuffer = 256

func newAttempt(r *host, c *planner.Cue, pos, slot int, agent *spec.Agent, n *node, number int, reports chan report) *attempt {
	return &attempt{r: r, cue: c, pos: pos, slot: slot, agent: agent, number: number, node: n, reports: reports,
		token:  fmt.Sprintf("%s/cue/%s/%d/%s", r.id, safeName(c.ID), number, NewRunID()),
		orders: make(chan orderMsg, 2), halt: make(chan struct{}), ended: make(chan struct{}), requests: make(chan *wireMessage, requestBuffer),
		abort: make(chan struct{}), kids: map[*child]bool{},
		trivial: trivial(agent),
		logs:    r.newLogCap()}
}

// fail ends the attempt from another goroutine, with f, as soon as it is
// waiting for its agent. The first failure wins.
func (a *attempt) fail(f *failure) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failed == nil {
		a.failed = f
		close(a.abort)
	}
}

func (a *attempt) failure() *failure {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
}

// halted reports whether the attempt has been told to stop.
func (a *attempt) halted() bool {
	select {
	case <-a.halt:
		return true
	default:
		return false
	}
}

func (a *attempt) stop(why string) {
	a.once.Do(func() {
		a.why = why
		close(a.halt)
	})
}

func (a *attempt) stopped() *failure {
	return failf("stopped", "%s", a.why)
}

// run takes the attempt through its phases and reports its end.
func (a *attempt) run(ctx context.Context) {
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
		fail = a.checkContract(outputs)
	}
	if fail == nil && a.child == nil {
		outputs = a.withChildExports(outputs)
	}
	how := "completed"
	if fail != nil {
		how = "failed"
		if fail.class == "stopped" {
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
func (a *attempt) takeReply() *wireMessage {
	m := a.reply
	a.reply = nil
	return m
}

func (a *attempt) phases(d driver) (map[string]any, *failure) {
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
func (a *attempt) work(d driver, t *Task) (map[string]any, *failure) {
	a.inputs = t.Inputs
	return d.work(a, t)
}

// await waits for the loop's next order, or for the attempt to be stopped.
func (a *attempt) await(want order) (*Task, *failure) {
	o, f := a.awaitOrder(want)
	return o.task, f
}

func (a *attempt) awaitOrder(want order) (orderMsg, *failure) {
	select {
	case o := <-a.orders:
		if o.kind != want {
			return orderMsg{}, failf("internal", "expected order %d, got %d", want, o.kind)
		}
		if o.kind == orderGo && o.base != "" {
			return o, a.moveWorkspace(o.base, o.from)
		}
		return o, nil
	case <-a.halt:
		return orderMsg{}, a.stopped()
	}
}

// checkContract fails a successful attempt that did not deliver every key
// its agent provides.
func (a *attempt) checkContract(outputs map[string]any) *failure {
	var missing []string
	for _, k := range a.agent.Provides {
		if _, ok := outputs[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return failf("contract", "contract violation: did not provide %s", joinQuoted(missing))
}

func joinQuoted(keys []string) string {
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += ", "
		}
		out += k
	}
	return out
}

// dir is the attempt's working directory: where its agent's processes start
// (a protocol agent's process, which serves several attempts, starts in
// agentDir) and the session's directory for drivers that have one. It is
// the agent's workdir, in the attempt's worktree when it has one.
func (a *attempt) dir() string {
	dir := a.agentDir()
	if a.ws == nil {
		return dir
	}
	return a.ws.dirFor(a.r.worktrees.repo, dir)
}

// agentDir is the agent's workdir, relative to the file that defines it.
func (a *attempt) agentDir() string {
	base := a.agent.Dir()
	if a.agent.Workdir == "" {
		return base
	}
	if filepath.IsAbs(a.agent.Workdir) {
		return a.agent.Workdir
	}
	return filepath.Join(base, a.agent.Workdir)
}

// timeouts for this attempt's phases.
func (a *attempt) ackTimeout() time.Duration {
	return ackTimeout(a.r.plan.Cuelist, a.agent)
}

// ackTimeout is how long an agent has to acknowledge WARNING: the cuelist's
// defaults.ack_timeout, else DefaultAckTimeout, or for an ACP agent, whose
// WARNING starts a coding CLI that takes seconds to answer initialize,
// DefaultACPStartTimeout.
func ackTimeout(cl *spec.Cuelist, agent *spec.Agent) time.Duration {
	def := DefaultAckTimeout
	if agent.Protocol == "acp" {
		def = DefaultACPStartTimeout
	}
	return firstPositive(cl.Defaults.AckTimeout.D(), def)
}

func (a *attempt) standbyTimeout() time.Duration {
	return firstPositive(a.r.plan.Cuelist.Defaults.StandbyTimeout.D(), DefaultStandbyTimeout)
}

func (a *attempt) goTimeout() time.Duration {
	return firstPositive(a.cue.Timeout.D(), a.agent.Timeout.D(), a.r.plan.Cuelist.Defaults.Timeout.D(), DefaultTimeout)
}

func firstPositive(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

// log records one line of the agent's output, within its budget.
func (a *attempt) log(stream, text string) { a.logs.add(a.logLine(stream, text)) }

func (a *attempt) logLine(stream, text string) record.LogLine {
	return record.LogLine{RunID: a.r.id, Cue: a.cue.ID, Agent: a.agent.ID, Attempt: a.number,
		Stream: stream, At: time.Now().UTC(), Text: text}
}

// note records something worth seeing about this attempt (not a decision:
// a failure to record it does not stop the run).
func (a *attempt) note(format string, args ...any) {
	a.r.publish(context.Background(), record.Event{RunID: a.r.id, At: time.Now().UTC(), Type: record.EvNote,
		Cue: a.cue.ID, Agent: a.agent.ID, Attempt: a.number, Reason: fmt.Sprintf(format, args...)})
}
