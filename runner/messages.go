package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// handoff checks a task.handoff like a handoff spec (docs/design.md#handoff-specs) plus the
// guardrails, and starts the receiver as a child; its handoff.result comes
// when the child ends. A refusal is a handoff.result too: the sender goes on.
func (r *run) handoff(a *attemptRun, peer driver.Peer, msg protocols.Message, b protocols.TaskHandoff) *attempt.Failure {
	to := r.plan.Agents[b.ToAgent]
	var problems []string
	if !a.allows("handoff") {
		problems = append(problems, a.denied("handoff"))
	}
	if b.FromAgent != "" && b.FromAgent != a.Agent.ID {
		problems = append(problems, fmt.Sprintf("from_agent is %q, but the sender is agent %s", b.FromAgent, a.Agent.ID))
	}
	found := spec.HandoffProblems(a.Agent, b.ToAgent, to, b.HandoffContext, r.root)
	notAllowed := slices.ContainsFunc(found, func(p spec.Problem) bool { return p.Code == "handoff-not-allowed" })
	for _, p := range found {
		if p.Code == "unknown-agent" && notAllowed {
			continue // "not in its handoff_to" says it better
		}
		problems = append(problems, p.Message)
	}
	if to != nil {
		problems = append(problems, r.chainProblems(a.node, to, "handoff")...)
	}
	if len(problems) > 0 {
		reason := strings.Join(problems, "; ")
		a.Note("handoff from %s to %s refused: %s", a.Agent.ID, b.ToAgent, reason)
		return peer.Send(protocols.Reply(msg, protocols.HandoffResult{TaskID: b.TaskID, Status: "refused", Reason: reason}))
	}
	c, err := r.newChild(a, "handoff", to, msg, b.TaskID, nil, b.HandoffContext)
	if err != nil {
		return peer.Send(protocols.Reply(msg, protocols.HandoffResult{TaskID: b.TaskID, Status: "refused", Reason: "orch could not record the handoff: " + err.Error()}))
	}
	c.start()
	return nil
}

// spawn starts a child without waiting: spawn.accepted at once, then
// task.announce when the child ends. The receiver must be in the sender's
// handoff_to (the one allowlist of whom an agent may give work to), and the
// guardrails of handoffs apply. A refusal is a protocol.error with the reason.
func (r *run) spawn(a *attemptRun, peer driver.Peer, msg protocols.Message, b protocols.TaskSpawn) *attempt.Failure {
	to := r.plan.Agents[b.Agent]
	var problems []string
	if !a.allows("spawn") {
		problems = append(problems, a.denied("spawn"))
	}
	if !slices.Contains(a.Agent.HandoffTo, b.Agent) {
		allowed := "it lists none"
		if len(a.Agent.HandoffTo) > 0 {
			allowed = "it allows " + strings.Join(a.Agent.HandoffTo, ", ")
		}
		problems = append(problems, fmt.Sprintf("agent %s may not spawn %s: not in its handoff_to (%s)", a.Agent.ID, b.Agent, allowed))
	}
	if to != nil {
		var missing []string
		for _, k := range to.Requires { // the child inherits the sender's inputs
			_, inherited := a.inputs[k]
			if _, given := b.Inputs[k]; !given && !inherited {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("the inputs lack %s, which %s requires", strings.Join(missing, ", "), to.ID))
		}
		problems = append(problems, r.chainProblems(a.node, to, "spawn")...)
	}
	if len(problems) > 0 {
		reason := fmt.Sprintf("task.spawn of %s refused: %s", b.Agent, strings.Join(problems, "; "))
		a.Note("%s", reason)
		return peer.Send(protocols.Reply(msg, protocols.ProtocolError{Reason: reason}))
	}
	c, err := r.newChild(a, "spawn", to, msg, "", b.Inputs, nil)
	if err != nil {
		return peer.Send(protocols.Reply(msg, protocols.ProtocolError{Reason: "orch could not record the spawn: " + err.Error()}))
	}
	// Accepted before the child starts: its announcement can never overtake it.
	f := peer.Send(protocols.Reply(msg, protocols.SpawnAccepted{TaskID: c.node.id}))
	c.start()
	return f
}

// chainProblems applies the guardrails to a child of n for agent to
// (sched.ChainProblems).
func (r *run) chainProblems(n *node, to *spec.Agent, what string) []string {
	return sched.ChainProblems(planner.MaxHandoffDepth(r.plan.Cuelist), n.depth, n.chain, to.ID, what)
}

// sendMessage delivers message.send and answers message.sent, or
// delivery.failed when the recipient cannot take it (it ended, has not
// started, or is unknown: the reason says which). A sibling (a task with the
// same parent) gets it directly and the parent is told (REQ-COM-002); any
// other task gets it through the nearest common ancestor of the two
// (REQ-COM-008), told first that it routed it — an agent in GO by a
// message.notice, the person (above every cue) in the run's log. A private
// message's notices have no body.
func (r *run) sendMessage(a *attemptRun, peer driver.Peer, msg protocols.Message, b protocols.MessageSend) *attempt.Failure {
	failed := func(why string) *attempt.Failure {
		return peer.Send(protocols.Reply(msg, protocols.DeliveryFailed{Reason: why}))
	}
	rt := r.routeOf(a.node, b.To)
	if rt.att == nil {
		return failed(rt.why)
	}
	n, to := rt.target, rt.att
	var shown any = b.Body
	if b.Private {
		shown = nil
	}
	if !rt.sibling && rt.via != a.node && rt.via != n { // someone stands between them
		r.notifyRouter(a, rt.via, n, shown, b.Private)
	}
	in := protocols.New(protocols.MessageReceived{CueID: n.id, From: a.Agent.ID, FromTask: a.node.id, Body: b.Body, Private: b.Private})
	if f := to.peer.Send(in); f != nil {
		return failed(fmt.Sprintf("%s could not take it: %s", n.agent.ID, f.Reason))
	}
	if rt.sibling {
		r.notifyParentOf(a, protocols.TypeMessageSend, n, shown, b.Private)
	}
	return peer.Send(protocols.Reply(msg, protocols.MessageSent{To: b.To}))
}

// notifyRouter tells the nearest common ancestor of a message's sender and
// recipient that the message went through it: a message.notice to its agent
// in GO; the person's log when it is the person, or not at work.
func (r *run) notifyRouter(a *attemptRun, via, to *node, body any, private bool) {
	if via != nil {
		if p, _ := r.workingAttempt(via); p != nil {
			_ = p.peer.Send(protocols.New(protocols.MessageNotice{CueID: via.id, From: a.Agent.ID, To: to.agent.ID,
				Kind: protocols.TypeMessageSend, Body: body, FromTask: a.node.id, ToTask: to.id, Routed: true, Private: private}))
			return
		}
	}
	r.publishUser(a, record.UserMessageData{Kind: "notice", To: to.agent.ID, FromTask: a.node.id, ToTask: to.id, Routed: true, Private: private}, body)
}

// notifyParentOf is notifyParent for a message to a sibling, which may be
// private (the notice has no body).
func (r *run) notifyParentOf(a *attemptRun, kind string, to *node, body any, private bool) {
	if !private {
		r.notifyParent(a, kind, to.agent.ID, body)
		return
	}
	parent := a.node.parent
	if parent != nil {
		if p, _ := r.workingAttempt(parent); p != nil {
			_ = p.peer.Send(protocols.New(protocols.MessageNotice{CueID: parent.id, From: a.Agent.ID, To: to.agent.ID, Kind: kind,
				FromTask: a.node.id, ToTask: to.id, Private: true}))
			return
		}
	}
	r.publishUser(a, record.UserMessageData{Kind: "notice", To: to.agent.ID, FromTask: a.node.id, ToTask: to.id, Private: true}, nil)
}

// notifyParent tells a task's parent what it sent (visible, not a relay): a
// message.notice to a parent agent at work; for a root task, whose parent is
// the person, the person sees messages between tasks (what it sends the
// person it already sees).
func (r *run) notifyParent(a *attemptRun, kind, to string, body any) {
	parent := a.node.parent
	if parent == nil {
		if kind == protocols.TypeMessageSend {
			r.toUser(a, "notice", to, body)
		}
		return
	}
	if p, _ := r.workingAttempt(parent); p != nil {
		r.toParent(a, p, protocols.MessageNotice{CueID: parent.id, From: a.Agent.ID, To: to, Kind: kind, Body: body})
		return
	}
	r.toUser(a, "notice", to, map[string]any{"kind": kind, "body": body})
}

// forPerson is the record of what a request shows the person: a
// message.user, or the discovery.report of a task whose parent is the person
// (or is not at work to take it).
func (r *run) forPerson(a *attemptRun, msg protocols.Message) (record.Event, bool) {
	switch b := msg.Body.(type) {
	case protocols.MessageUser:
		return r.userEvent(a, "message", "", b.Body), true
	case protocols.DiscoveryReport:
		if parent := a.node.parent; parent != nil {
			if p, _ := r.workingAttempt(parent); p != nil {
				return record.Event{}, false
			}
		}
		return r.userEvent(a, "discovery", "", discoveryBody(b)), true
	case protocols.EscalationError:
		return r.escalate(a, b.Severity, b.Error, b.Detail), true
	case protocols.EscalationConflict:
		return r.escalate(a, b.Severity, b.What(), nil), true
	}
	return record.Event{}, false
}

// discovery goes to the parent at work without interrupting it: a notice.
func (r *run) discovery(a *attemptRun, b protocols.DiscoveryReport) {
	parent := a.node.parent
	if p, _ := r.workingAttempt(parent); p != nil {
		r.toParent(a, p, protocols.MessageNotice{CueID: parent.id, From: a.Agent.ID, Kind: protocols.TypeDiscoveryReport, Body: discoveryBody(b)})
		return
	}
	r.toUser(a, "discovery", "", discoveryBody(b)) // the parent ended meanwhile
}

func discoveryBody(b protocols.DiscoveryReport) map[string]any { return b.Shown() }

// toUser records something for the person running orch.
func (r *run) toUser(a *attemptRun, kind, to string, body any) {
	_ = r.publish(context.Background(), r.userEvent(a, kind, to, body))
}

func (r *run) userEvent(a *attemptRun, kind, to string, body any) record.Event {
	return r.userEventOf(a, record.UserMessageData{Kind: kind, To: to}, body)
}

// publishUser records data, with body, for the person.
func (r *run) publishUser(a *attemptRun, data record.UserMessageData, body any) {
	_ = r.publish(context.Background(), r.userEventOf(a, data, body))
}

func (r *run) userEventOf(a *attemptRun, data record.UserMessageData, body any) record.Event {
	data.From = a.Agent.ID
	if body != nil {
		if raw, err := json.Marshal(body); err == nil {
			data.Body = json.RawMessage(raw)
		}
	}
	return record.Event{RunID: r.id, At: time.Now().UTC(), Type: record.EvUserMessage, Cue: a.Cue.ID,
		Agent: a.Agent.ID, Attempt: a.Number, Data: data}
}
