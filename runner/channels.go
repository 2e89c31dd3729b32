package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// The hub's channels beyond requests and answers (docs/design.md#hub-and-spoke): who is at
// work (agents.list), broadcasts to every agent in GO, the agents' reported
// states (status.report, asked for with status.request), escalations shown
// to the person, and how children's notices reach their parent
// (notify.mode, docs/design.md#notification-mode).

// Notification modes of a subtree (sched.NotifyModes).
const (
	NotifyImmediate = sched.NotifyImmediate
	NotifySummary   = sched.NotifySummary
	NotifySilent    = sched.NotifySilent
)

// channels is what the hub keeps for them, shared by the attempts'
// goroutines under mu.
type channels struct {
	chMu  sync.Mutex
	modes sched.NotifyModes
	// held are the notices held for a summary, by the child's task id.
	held map[string][]any
}

// notifyMode is the mode for the children of task parent (NotifyModes.Mode).
func (c *channels) notifyMode(parent string) string {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	return c.modes.Mode(parent)
}

func (c *channels) setMode(person bool, task, mode string) {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	c.modes.Set(person, task, mode)
}

// hold keeps a notice of child for its parent's summary.
func (c *channels) hold(child string, notice any) {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	if c.held == nil {
		c.held = map[string][]any{}
	}
	c.held[child] = append(c.held[child], notice)
}

func (c *channels) takeHeld(child string) []any {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	h := c.held[child]
	delete(c.held, child)
	return h
}

// toParent delivers a child's notice to its parent agent at work, as the
// subtree's notification mode says.
func (r *run) toParent(a *attemptRun, p *attemptRun, notice protocols.MessageNotice) {
	switch r.notifyMode(p.node.id) {
	case NotifySilent:
		return
	case NotifySummary:
		r.hold(a.node.id, notice)
		return
	}
	_ = p.peer.Send(protocols.New(notice))
}

// deliverSummary sends a child's held notices to its parent, as one
// message.notice of kind "summary", just before the child's result.
func (c *child) deliverSummary() {
	held := c.r.takeHeld(c.node.id)
	if len(held) == 0 {
		return
	}
	p := c.parent
	n := protocols.MessageNotice{CueID: p.node.id, From: c.node.agent.ID, Kind: "summary", Body: map[string]any{"task_id": c.node.id, "notices": held}}
	_ = p.peer.Send(protocols.New(n))
}

// setNotifyMode is a parent agent's notify.mode: the mode of its children.
func (r *run) setNotifyMode(a *attemptRun, peer driver.Peer, msg protocols.Message, b protocols.NotifyMode) *attempt.Failure {
	r.setMode(false, a.node.id, b.Mode)
	r.toUser(a, "notify-mode", "", map[string]any{"mode": b.Mode, "subtree": a.node.id})
	return peer.Send(protocols.Reply(msg, protocols.NotifyAck{Mode: b.Mode}))
}

// notifyModeFromPerson is orch notify-mode RUN [CUE] MODE, through the store.
func (r *run) notifyModeFromPerson(cue, mode string) {
	switch mode {
	case NotifyImmediate, NotifySummary, NotifySilent:
	default:
		r.emit(record.Event{Type: record.EvNote, Cue: cue, Reason: fmt.Sprintf("orch notify-mode: unknown mode %q (immediate, summary or silent): nothing changed", mode)})
		return
	}
	r.setMode(true, cue, mode)
	subtree := "the whole run"
	if cue != "" {
		subtree = "cue " + cue + " and everything under it"
	}
	r.emit(record.Event{Type: record.EvNote, Cue: cue, Reason: fmt.Sprintf("orch notify-mode: notices reach parents %s in %s", modeWords(mode), subtree)})
}

func modeWords(mode string) string {
	switch mode {
	case NotifySummary:
		return "as a summary when each child ends"
	case NotifySilent:
		return "not at all (silent)"
	}
	return "at once (immediate)"
}

// inGoRequest asks the loop for the attempts of the tasks in GO.
type inGoRequest struct{ reply chan []*attemptRun }

func (q inGoRequest) serveOn(_ context.Context, r *run) { q.reply <- r.tasks.InGo() }

func (r *run) inGo() []*attemptRun {
	reply := make(chan []*attemptRun, 1)
	atts, _ := call(r, inGoRequest{reply: reply}, reply)
	return atts
}

// listAgents answers agents.list: every task in GO, the asker's included.
func (r *run) listAgents(a *attemptRun, peer driver.Peer, msg protocols.Message) *attempt.Failure {
	if !a.allows("agents") {
		return peer.Send(protocols.Reply(msg, protocols.ProtocolError{Reason: "agents.list: " + a.denied("agents")}))
	}
	canHandOff := a.allows("handoff") || a.allows("spawn")
	list := []protocols.ListedAgent{}
	for _, o := range r.inGo() {
		st := o.reported()
		provides := o.Agent.Provides
		if provides == nil {
			provides = []string{}
		}
		cue, _, _ := strings.Cut(o.node.id, "/")
		list = append(list, protocols.ListedAgent{ID: o.Agent.ID, TaskID: o.node.id, CueID: cue, State: st.State,
			Progress: st.Progress, Provides: provides, AcceptsHandoff: canHandOff && slices.Contains(a.Agent.HandoffTo, o.Agent.ID)})
	}
	return peer.Send(protocols.Reply(msg, protocols.AgentsListed{Agents: list}))
}

// broadcast sends a broadcast.send to every other task in GO that speaks
// the protocol, shows it to the person, and answers broadcast.sent with
// the task ids it reached.
func (r *run) broadcast(a *attemptRun, peer driver.Peer, msg protocols.Message, b protocols.BroadcastSend) *attempt.Failure {
	reached := []string{}
	for _, o := range r.inGo() {
		if o == a || o.peer == nil {
			continue
		}
		n := protocols.New(protocols.BroadcastNotice{CueID: o.node.id, From: a.Agent.ID, Body: b.Body})
		if o.peer.Send(n) == nil {
			reached = append(reached, o.node.id)
		}
	}
	r.toUser(a, "broadcast", strings.Join(reached, ", "), b.Body)
	return peer.Send(protocols.Reply(msg, protocols.BroadcastSent{Recipients: reached}))
}

// AgentStatus is what an agent last reported of its state.
type AgentStatus struct {
	State    string
	Progress float64 // 0..1; 0 when not reported
	Detail   string
}

// reported is the attempt's last reported state ("working" if none).
func (a *attemptRun) reported() AgentStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.status.State == "" {
		return AgentStatus{State: "working"}
	}
	return a.status
}

// report records an agent's state (status.report, status.update) and keeps
// it for agents.list. A progress above 1 is a percent.
func (r *run) report(a *attemptRun, peer driver.Peer, msg protocols.Message, st AgentStatus) *attempt.Failure {
	if st.Progress > 1 {
		if st.Progress > 100 {
			return peer.Send(protocols.Reply(msg, protocols.ProtocolError{
				Reason: fmt.Sprintf("%s: progress %g is more than 100 percent (give 0..1, or a percent)", msg.Type, st.Progress)}))
		}
		st.Progress /= 100
	}
	a.mu.Lock()
	a.status = st
	a.mu.Unlock()
	_ = r.publish(context0, record.Event{RunID: r.id, At: time.Now().UTC(), Type: record.EvAgentStatus, Cue: a.Cue.ID, Agent: a.Agent.ID,
		Attempt: a.Number, State: st.State, Data: record.StatusData{Progress: st.Progress, Detail: st.Detail, Asked: msg.InReplyTo != ""}})
	return nil
}

// askStatus is orch status RUN --ask: a status.request to every task in GO
// that speaks the protocol (of cue and its subtree when cue is set). The
// answers come as status.report, served as any request.
func (r *run) askStatus(cue string) {
	for _, o := range r.tasks.InGo() {
		if o.peer == nil || !driver.Speaks(o.Agent) || cue != "" && o.node.id != cue && !strings.HasPrefix(o.node.id, cue+"/") {
			continue
		}
		req := protocols.New(protocols.StatusRequest{CueID: o.node.id})
		r.then(func() { go func() { _ = o.peer.Send(req) }() })
	}
}

// escalate shows an escalation to the person at once: a line in the run's
// output; high and critical ones also as a notice of kind needed (the
// bell, the notify: block), and they stay in orch status's attention list.
func (r *run) escalate(a *attemptRun, severity, what string, detail any) record.Event {
	return r.userEvent(a, "escalation", "", protocols.EscalationShown(severity, what, detail))
}
