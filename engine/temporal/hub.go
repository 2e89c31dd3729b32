package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
)

// WorkflowLink is how an attempt on a worker reaches its run's workflow:
// the hub of the temporal engine (collab.go) answers its agent's requests.
type WorkflowLink interface {
	Update(ctx context.Context, name string, arg, result any) error
	Query(ctx context.Context, name string, arg, result any) error
	Signal(ctx context.Context, name string, arg any) error
}

// clientLink reaches the workflow through the worker's Temporal client.
// It names the workflow only, not its run: the latest run of it is the
// one going on.
type clientLink struct {
	c  client.Client
	id string
}

func (l clientLink) Update(ctx context.Context, name string, arg, result any) error {
	h, err := l.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: l.id, UpdateName: name, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return err
	}
	return h.Get(ctx, result)
}

func (l clientLink) Query(ctx context.Context, name string, arg, result any) error {
	v, err := l.c.QueryWorkflow(ctx, l.id, "", name, arg)
	if err != nil {
		return err
	}
	return v.Get(result)
}

func (l clientLink) Signal(ctx context.Context, name string, arg any) error {
	return l.c.SignalWorkflow(ctx, l.id, "", name, arg)
}

// link is the workflow of the activity running in ctx (nil outside an
// activity: tests calling a step directly).
func (a *Activities) link(ctx context.Context) (l WorkflowLink) {
	if a.Link != nil {
		return a.Link(ctx)
	}
	defer func() {
		if recover() != nil {
			l = nil
		}
	}()
	info := activity.GetInfo(ctx)
	c := activity.GetClient(ctx)
	if c == nil {
		return nil
	}
	return clientLink{c: c, id: info.WorkflowExecution.ID}
}

// hubLink is what a step's requests need: the phase's context, the
// workflow, the asker, and its agent's tools.
type hubLink struct {
	ctx    context.Context
	link   WorkflowLink
	asker  Asker
	tools  planner.AgentTools
	depth  int            // its task's depth in the run's tree (0: a cue's own agent)
	plan   *planner.Plan  // the run's, for the checks of its handoffs and spawns
	root   string         // the worker's --root
	ended  chan struct{}  // closed when the phase ends (End)
	search MemorySearcher // the worker's (memory.go)
	loans  *loans         // the worker's slot the phase lends while it has children (slots.go)
}

// Bind makes the phase running now the one the host serves requests for.
func (h *stepHost) Bind(ctx context.Context, a *Activities, in AttemptInput, p *planner.Plan) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hub = hubLink{ctx: ctx, link: maskLink(a.link(ctx), redactorOf(p)), // secrets masked (secrets.go)
		asker: Asker{Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt}, tools: p.ToolsOf(in.Agent),
		plan: p, root: a.Root, ended: make(chan struct{}), search: a.SearchMemory, loans: newLoans(a.Slots)}
	if in.Child != nil {
		h.hub.depth = in.Child.Depth
	}
}

// End says the phase Bind began is over: what serves it stops.
func (h *stepHost) End() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hub.ended != nil {
		close(h.hub.ended)
		h.hub.ended = nil
	}
	h.hub.loans.end()
}

func (h *stepHost) bound() hubLink {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hub
}

// Serve serves one of the agent's requests through the run's workflow:
// blackboard writes (versions and conflicts as locally) and reads,
// questions for the person (answered with orch answer; the agent goes on
// meanwhile and gets question.answer), status reports. What this engine
// does not do yet gets a protocol.error saying so, and the agent goes on.
func (h *stepHost) Serve(peer driver.Peer, req *driver.Wire, more func() *driver.Wire) *attempt.Failure {
	msg := req.Msg
	h.wire.add("in", driver.Withheld(req))
	hub := h.bound()
	refuse := func(format string, args ...any) *attempt.Failure {
		return peer.Send(protocols.Reply(msg, protocols.ProtocolError{Reason: fmt.Sprintf(format, args...)}))
	}
	if hub.link == nil {
		return refuse("%s: this attempt cannot reach its run's workflow", msg.Type)
	}
	if ok, f := h.serveMemory(hub, peer, msg); ok { // memory.go
		return f
	}
	switch b := msg.Body.(type) {
	case protocols.BlackboardWrite, protocols.BlackboardRead:
		if why := hub.denied("blackboard"); why != "" {
			return refuse("%s: %s", msg.Type, why)
		}
		if w, ok := b.(protocols.BlackboardWrite); ok {
			return h.write(hub, peer, msg, w)
		}
		return h.read(hub, peer, msg, b.(protocols.BlackboardRead))
	case protocols.QuestionAsk:
		h.ask(hub, b, record.NamedOptions(b.Options), func(a Asked) {
			_ = peer.Send(protocols.Reply(msg, protocols.QuestionAnswer{QuestionID: a.ID, Answer: a.Answer}))
		})
		return nil
	case protocols.QuestionAnswer: // to a question that closed meanwhile
		return nil
	case protocols.MessageSend:
		if why := sendMessage(hub, b); why != "" {
			return peer.Send(protocols.Reply(msg, protocols.DeliveryFailed{Reason: why}))
		}
		return peer.Send(protocols.Reply(msg, protocols.MessageSent{To: b.To}))
	case protocols.StatusReport:
		return h.report(hub, refuse, msg, Report{Asker: hub.asker, State: b.State, Progress: b.Progress, Detail: b.Detail})
	case protocols.StatusUpdate:
		return h.report(hub, refuse, msg, Report{Asker: hub.asker, State: b.State, Detail: b.Detail})
	case protocols.TaskHandoff:
		h.handoff(hub, peer, msg, b)
		return nil
	case protocols.TaskSpawn:
		res := spawnChild(hub, b)
		if e, ok := res.(protocols.ProtocolError); ok {
			h.Note("%s", e.Reason)
		}
		return peer.Send(protocols.Reply(msg, res))
	case protocols.MessageUser:
		return h.shown(hub, refuse, "message", b.Body)
	case protocols.DiscoveryReport:
		return h.shown(hub, refuse, "discovery", b.Shown())
	case protocols.EscalationError:
		return h.shown(hub, refuse, "escalation", protocols.EscalationShown(b.Severity, b.Error, b.Detail))
	case protocols.EscalationConflict:
		return h.shown(hub, refuse, "escalation", protocols.EscalationShown(b.Severity, b.What(), nil))
	case protocols.BroadcastSend:
		sent, err := broadcastAll(hub, b)
		if err != nil {
			return refuse("%v", err)
		}
		return peer.Send(protocols.Reply(msg, sent))
	case protocols.AgentsList:
		if why := hub.denied("agents"); why != "" {
			return refuse("agents.list: %s", why)
		}
		list, err := listAgents(hub)
		if err != nil {
			return refuse("%v", err)
		}
		return peer.Send(protocols.Reply(msg, list))
	case protocols.NotifyMode:
		mode, err := setNotifyMode(hub.ctx, hub, b) // notifymode.go
		if err != nil {
			return refuse("notify.mode: %v", err)
		}
		return peer.Send(protocols.Reply(msg, protocols.NotifyAck{Mode: mode}))
	case protocols.StatusUsage:
		h.Usage(record.Usage{Credits: b.Credits, CostUSD: b.CostUSD, InputTokens: b.InputTokens, OutputTokens: b.OutputTokens})
		return nil
	}
	ch, err := protocols.Route(msg.Type)
	switch {
	case err != nil:
		return refuse("%v", err)
	case ch == protocols.ChannelStatus || ch == protocols.ChannelEscalation:
		return nil
	case !protocols.FromAgent(msg.Type):
		return refuse("%s is sent by orch, not by agents", msg.Type)
	}
	return refuse("%s is not supported by --engine temporal in this version (run the cuelist with --engine local)", msg.Type)
}

func (h *stepHost) write(hub hubLink, peer driver.Peer, msg protocols.Message, b protocols.BlackboardWrite) *attempt.Failure {
	return peer.Send(protocols.Reply(msg, writeBoard(hub, b, msg.ID)))
}

// writeBoard has the workflow store a blackboard.write: its answer is a
// blackboard.ack, a blackboard.conflict or a protocol.error.
func writeBoard(hub hubLink, b protocols.BlackboardWrite, msgID string) protocols.Body {
	raw, err := json.Marshal(b.Value)
	if err != nil || b.Key == "" {
		return protocols.ProtocolError{Reason: "blackboard.write: a key and a JSON value are needed"}
	}
	var res BBWritten
	if err := hub.link.Update(hub.ctx, UpdateBBWrite, BBWrite{Asker: hub.asker, Key: b.Key, Value: raw, IfVersion: b.ExpectedVersion, MessageID: msgID}, &res); err != nil {
		return protocols.ProtocolError{Reason: "blackboard.write failed: " + err.Error()}
	}
	if res.Conflict {
		return protocols.BlackboardConflict{Key: b.Key, CurrentVersion: res.Version, Author: res.Author}
	}
	return protocols.BlackboardAck{Key: b.Key, Version: res.Version}
}

func (h *stepHost) read(hub hubLink, peer driver.Peer, msg protocols.Message, b protocols.BlackboardRead) *attempt.Failure {
	v, err := readBoard(hub, b.Key)
	if err != nil {
		return peer.Send(protocols.Reply(msg, protocols.ProtocolError{Reason: err.Error()}))
	}
	return peer.Send(protocols.Reply(msg, v))
}

// readBoard reads a key of the workflow's blackboard.
func readBoard(hub hubLink, key string) (protocols.BlackboardValue, error) {
	var v BBValue
	if err := hub.link.Query(hub.ctx, QueryBBRead, key, &v); err != nil {
		return protocols.BlackboardValue{}, fmt.Errorf("blackboard.read failed: %w", err)
	}
	val := protocols.BlackboardValue{Key: key, Found: v.Found}
	if v.Found {
		var x any
		_ = json.Unmarshal(v.Value, &x)
		val.Value, val.Version, val.Author = x, v.Version, v.Author
	}
	return val, nil
}

func (h *stepHost) report(hub hubLink, refuse func(string, ...any) *attempt.Failure, msg protocols.Message, r Report) *attempt.Failure {
	if err := report(hub, msg.Type, r); err != nil {
		return refuse("%v", err)
	}
	return nil
}

// report sends a status report to the workflow (progress 0..1, or a
// percent), as it is shown in orch status.
func report(hub hubLink, what string, r Report) error {
	if r.Progress > 1 {
		if r.Progress > 100 {
			return fmt.Errorf("%s: progress %g is more than 100 percent (give 0..1, or a percent)", what, r.Progress)
		}
		r.Progress /= 100
	}
	if err := hub.link.Signal(hub.ctx, SignalReport, r); err != nil {
		return fmt.Errorf("%s could not reach the run's workflow: %w", what, err)
	}
	return nil
}

// Usage sends the workflow what the agent reported it used (its totals so
// far) and what that adds: the run's limits count it (driver.Host).
func (h *stepHost) Usage(u record.Usage) {
	hub := h.bound()
	h.mu.Lock()
	u = u.Over(h.usage)
	more := u.Minus(h.usage)
	h.usage = u
	h.mu.Unlock()
	if hub.link == nil || more == (record.Usage{}) {
		return
	}
	if err := hub.link.Signal(hub.ctx, SignalUsage, UsageReport{Asker: hub.asker, Totals: u, More: more}); err != nil {
		h.Note("usage could not reach the run's workflow: %v", err)
	}
}

// sendMessage has the workflow deliver a message.send: "" delivered, else
// why not.
func sendMessage(hub hubLink, b protocols.MessageSend) string {
	body, err := json.Marshal(b.Body)
	if err != nil {
		return "the body cannot be sent: " + err.Error()
	}
	var sent Sent
	if err := hub.link.Update(hub.ctx, UpdateSend, Send{Asker: hub.asker, To: b.To, Body: body, Private: b.Private}, &sent); err != nil {
		return "the run's workflow could not be reached: " + err.Error()
	}
	return sent.Failed
}

// takeInbox takes what was delivered to the attempt, waiting up to wait.
func takeInbox(ctx context.Context, hub hubLink, wait time.Duration) ([]Received, error) {
	var got []Received
	err := hub.link.Update(ctx, UpdateInbox, InboxWait{Asker: hub.asker, Wait: wait}, &got)
	for _, r := range got {
		if r.Announce != nil { // a spawned child ended: one child fewer to lend for
			hub.loans.announced(r.Announce.TaskID)
		}
	}
	return got, err
}

// inboxDelay is how long a jsonl agent's GO runs before its worker asks the
// workflow for its messages: a short GO costs the workflow nothing; a
// message sent meanwhile waits in its inbox.
var inboxDelay = time.Second

// Going starts delivering the messages sent to a jsonl agent in GO
// (message.received on its stdin) until the phase ends; an agent that takes
// no messages (p nil) reads them through its MCP inbox tool.
func (h *stepHost) Going(p driver.Peer) {
	hub := h.bound()
	if p == nil || hub.link == nil || hub.ended == nil {
		return
	}
	go func() {
		select {
		case <-time.After(inboxDelay):
		case <-hub.ended:
			return
		}
		ctx, cancel := context.WithCancel(hub.ctx)
		defer cancel()
		go func() {
			select {
			case <-hub.ended:
				cancel()
			case <-ctx.Done():
			}
		}()
		for ctx.Err() == nil {
			got, err := takeInbox(ctx, hub, MaxInboxWait)
			if err != nil {
				select { // the attempt ended, or the workflow is away: ask again shortly
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
			for _, r := range got {
				h.deliver(hub, p, r) // bubbling.go
			}
		}
	}()
}

// ask asks the person through the workflow, off the attempt's goroutine
// (the agent goes on; the answer comes when orch answer gives it), and
// hands the answer to answered. A question that closes unanswered ends the
// attempt (Abort), as locally.
func (h *stepHost) ask(hub hubLink, q protocols.QuestionAsk, options []record.QuestionOption, answered func(Asked)) {
	go func() {
		a, err := askPerson(hub.ctx, hub, q, options)
		switch {
		case err != nil && a.Class != "":
			if a.Class != "stopped" {
				h.abort(attemptFailure(a))
			}
		case err != nil:
			if hub.ctx.Err() == nil {
				h.abort(attempt.Failf("internal", "%v", err))
			}
		default:
			answered(a)
		}
	}()
}

// askPerson asks the person through the workflow and waits for the answer
// (the name of the option it names, when there are options). A question
// that closed unanswered is an error, with Class and Closed saying why.
func askPerson(ctx context.Context, hub hubLink, q protocols.QuestionAsk, options []record.QuestionOption) (Asked, error) {
	var a Asked
	if err := hub.link.Update(ctx, UpdateAsk, Ask{Asker: hub.asker, Question: q.Question, Complexity: q.Complexity, Options: options}, &a); err != nil {
		return Asked{}, fmt.Errorf("question.ask could not reach the run's workflow: %w", err)
	}
	if a.Closed != "" {
		return a, errors.New(a.Closed)
	}
	a.Answer = record.Picked(options, a.Answer)
	return a, nil
}

// attemptFailure is how an attempt ends for a question that closed
// unanswered.
func attemptFailure(a Asked) *attempt.Failure { return attempt.Failf(a.Class, "%s", a.Closed) }

// AskPerson asks the person for an agent that cannot ask itself (an ACP
// permission request), through the workflow as a question.ask.
func (h *stepHost) AskPerson(q protocols.QuestionAsk, options []record.QuestionOption, deliver func(string)) *attempt.Failure {
	hub := h.bound()
	if hub.link == nil {
		return attempt.Failf("internal", "this attempt cannot reach its run's workflow: no one to ask")
	}
	h.ask(hub, q, options, func(a Asked) { deliver(a.Answer) })
	return nil
}

// aborter ends an attempt from another goroutine (driver.Attempt.Abort,
// Host.Failure): a question nobody answered.
type aborter struct {
	once sync.Once
	ch   chan struct{}
	f    *attempt.Failure
}

func (h *stepHost) abort(f *attempt.Failure) {
	h.aborts.once.Do(func() {
		h.aborts.f = f
		close(h.aborts.ch)
	})
}

// Failure is the failure another goroutine ended the attempt with.
func (h *stepHost) Failure() *attempt.Failure { return h.aborts.f }

// shown sends the workflow what the agent shows the person (person.go).
func (h *stepHost) shown(hub hubLink, refuse func(string, ...any) *attempt.Failure, kind string, body any) *attempt.Failure {
	if err := showPerson(hub, kind, body); err != nil {
		return refuse("%v", err)
	}
	return nil
}
