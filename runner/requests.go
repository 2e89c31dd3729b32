package runner

import (
	"context"
	"errors"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// A request is an input from the hub (an attempt's goroutine, a prompt, a
// parent's answer) to the loop, which owns the task tree and the questions
// (sched.Tasks) and the run's credits (sched.Core). The loop decides,
// records what it decided, then replies on the request's channel: the hub
// acts only on a recorded decision (commit-before-act).
type request interface {
	serveOn(ctx context.Context, r *run)
}

// call hands req to the loop and waits for its reply. ok is false when
// the loop is over (a prompt or a parent answering after the run ended):
// nothing is decided any more.
func call[T any](r *run, req request, reply chan T) (T, bool) {
	r.loopCalls.Add(1)
	select {
	case r.hub <- req:
		return <-reply, true
	case <-r.loopDone:
		var zero T
		return zero, false
	}
}

// serveRequests serves the hub while wait is open (the loop waiting for
// its attempts to finish, which may still ask it something).
func (r *run) serveRequests(ctx context.Context, wait <-chan struct{}) {
	for {
		select {
		case <-wait:
			return
		case req := <-r.hub:
			req.serveOn(ctx, r)
		}
	}
}

// waitActive waits for every attempt goroutine, serving their requests.
func (r *run) waitActive(ctx context.Context) {
	done := make(chan struct{})
	go func() { r.active.Wait(); close(done) }()
	r.serveRequests(ctx, done)
}

// childRequest creates a child task of an attempt's task and records it.
type childRequest struct {
	parent *attemptRun
	agent  *spec.Agent
	kind   string
	data   record.TaskStartedData // what the record says besides the tree's facts
	reply  chan childReply
}

type childReply struct {
	node *node
	err  error
}

func (q childRequest) serveOn(ctx context.Context, r *run) {
	p := q.parent.node
	n := r.nodeOf(r.tasks.Child(p.ref, q.agent, q.kind), p)
	d := q.data
	d.Parent, d.Kind, d.Depth, d.Chain = p.id, n.kind, n.depth, n.chain
	r.emit(record.Event{Type: record.EvTaskStarted, Cue: n.id, Agent: q.agent.ID, Data: d})
	q.reply <- childReply{node: n, err: r.flush(ctx)}
}

// serveRequest says which attempt serves a task now (a child's); endRequest
// how the task ended.
type serveRequest struct {
	node  *node
	att   *attemptRun
	reply chan struct{}
}

func (q serveRequest) serveOn(_ context.Context, r *run) {
	r.tasks.Serve(q.node.ref, q.att)
	q.reply <- struct{}{}
}

type endRequest struct {
	node  *node
	how   string
	reply chan struct{}
}

func (q endRequest) serveOn(_ context.Context, r *run) {
	r.tasks.End(q.node.ref, q.how)
	q.reply <- struct{}{}
}

// workingRequest asks for the attempt of a task in GO.
type workingRequest struct {
	node  *node
	reply chan workingReply
}

type workingReply struct {
	att *attemptRun
	why string
}

func (q workingRequest) serveOn(_ context.Context, r *run) {
	a, why := r.tasks.Working(q.node.ref)
	q.reply <- workingReply{att: a, why: why}
}

// usageRequest counts what an attempt reported it used (its totals, and
// what they add since its last report) toward the run's.
type usageRequest struct {
	att          *attemptRun
	totals, more record.Usage
	reply        chan struct{}
}

func (q usageRequest) serveOn(ctx context.Context, r *run) {
	a, u := q.att, q.totals
	r.used = r.used.Plus(q.more)
	r.core.AddUsage(q.more.Credits, q.more.CostUSD)
	total := r.used
	r.emit(record.Event{Type: record.EvUsage, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number, Data: record.UsageDataOf(u, total)})
	_ = r.flush(ctx)
	q.reply <- struct{}{}
}

// childEndedRequest asks what a child task does after one of its attempts
// ended: the core decides the retry and its backoff, or the task's end
// (sched.Core.ChildEnded); the child records it, then acts on it.
type childEndedRequest struct {
	node  *node
	tries int
	end   sched.End
	reply chan sched.ChildStep
}

func (q childEndedRequest) serveOn(_ context.Context, r *run) {
	q.reply <- r.core.ChildEnded(time.Now(), q.node.agent, q.tries, q.end)
}

// The hub's side: what an attempt's goroutine calls.

func (r *run) newTask(parent *attemptRun, agent *spec.Agent, kind string, data record.TaskStartedData) (*node, error) {
	reply := make(chan childReply, 1)
	rep, ok := call(r, childRequest{parent: parent, agent: agent, kind: kind, data: data, reply: reply}, reply)
	if !ok {
		return nil, errRunOver
	}
	return rep.node, rep.err
}

// addUsage counts what an attempt reported (its totals so far: jsonl's
// status.usage, or a driver's) toward the run's; the core decides when the
// run is out of max_credits or max_cost_usd. It runs on the attempt's
// goroutine, which alone touches a.usage.
func (r *run) addUsage(a *attemptRun, u record.Usage) {
	u = u.Over(a.usage)
	more := u.Minus(a.usage)
	a.usage = u
	reply := make(chan struct{}, 1)
	call(r, usageRequest{att: a, totals: u, more: more, reply: reply}, reply)
}

func (r *run) serveTask(n *node, a *attemptRun) {
	reply := make(chan struct{}, 1)
	call(r, serveRequest{node: n, att: a, reply: reply}, reply)
}

func (r *run) endTask(n *node, how string) {
	reply := make(chan struct{}, 1)
	call(r, endRequest{node: n, how: how, reply: reply}, reply)
}

// workingAttempt returns the attempt of n in GO, or nil with why not.
func (r *run) workingAttempt(n *node) (*attemptRun, string) {
	reply := make(chan workingReply, 1)
	rep, ok := call(r, workingRequest{node: n, reply: reply}, reply)
	if !ok {
		return nil, "the run is over"
	}
	return rep.att, rep.why
}

// childEnded asks the loop what child task n does after its attempt
// number tries ended as end. After the loop (which waits for every child,
// so only in theory) nothing decides any more: the task stops.
func (r *run) childEnded(n *node, tries int, end sched.End) sched.ChildStep {
	reply := make(chan sched.ChildStep, 1)
	step, ok := call(r, childEndedRequest{node: n, tries: tries, end: end, reply: reply}, reply)
	if !ok {
		return sched.ChildStep{Attempt: sched.AttemptStopped, End: sched.Stopped, Reason: errRunOver.Error()}
	}
	return step
}

// errRunOver answers a request that came after the loop ended.
var errRunOver = errors.New("the run is over")
