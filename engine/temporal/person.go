package temporal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// What an agent shows the person (message.user, discovery.report,
// escalation.error and escalation.conflict: a signal, orch.user, recorded as
// the local engine records them, run/user events the follower mirrors, so
// that orch status and the notify: block see them), a broadcast to every
// other task at work (orch.broadcast) and the list of the tasks at work
// (orch.agents). A child's message.user and discovery.report also go to its
// parent, as a message.notice in its inbox.
const (
	SignalUser      = "orch.user"
	UpdateBroadcast = "orch.broadcast"
	QueryAgents     = "orch.agents"
)

// UserNote is what an agent shows the person: Kind is message, discovery or
// escalation (record.UserMessageData).
type UserNote struct {
	Asker
	Kind string
	Body json.RawMessage
}

// Broadcast is an agent's broadcast.send.
type Broadcast struct {
	Asker
	Body json.RawMessage
}

// person registers the handlers of what agents show the person and send
// to everyone.
func (c *collab) person() {
	w := c.w
	_ = workflow.SetUpdateHandlerWithOptions(w.ctx, UpdateBroadcast, c.broadcast, workflow.UpdateHandlerOptions{Validator: func(in Broadcast) error {
		return c.running("broadcast.send", in.Asker)
	}})
	_ = workflow.SetQueryHandler(w.ctx, QueryAgents, c.agents)
	w.sel.AddReceive(workflow.GetSignalChannel(w.ctx, SignalUser), func(ch workflow.ReceiveChannel, _ bool) {
		var n UserNote
		ch.Receive(w.ctx, &n)
		c.toPerson(n)
	})
}

// toPerson records what an agent shows the person; a child's message or
// discovery reaches its parent at work too.
func (c *collab) toPerson(n UserNote) {
	c.w.emit(record.Event{Type: record.EvUserMessage, Cue: n.Cue, Agent: n.Agent, Attempt: n.Attempt,
		Data: record.UserMessageData{Kind: n.Kind, From: n.Agent, Body: n.Body}})
	k := c.kids.live[n.Cue]
	if k == nil || n.Kind == "escalation" || !c.asking(k.asker) {
		return
	}
	var body any
	_ = json.Unmarshal(n.Body, &body)
	kind := protocols.TypeMessageUser
	if n.Kind == "discovery" {
		kind = protocols.TypeDiscoveryReport
	}
	c.toParent(n.Asker, k.asker, protocols.MessageNotice{CueID: k.parent, From: n.Agent, To: "person", Kind: kind, Body: body}) // as its mode says (notifymode.go)
}

// atWork is a task in GO: its attempt, task id and agent.
type atWork struct {
	Asker
	task  string
	agent string
}

// inGo lists the tasks in GO now, the cues' in plan order, then the
// children in the order they started.
func (c *collab) inGo() []atWork {
	w := c.w
	var out []atWork
	for pos, fs := range w.atts {
		st, _ := w.core.State(pos)
		for _, f := range fs {
			if f != nil && f.stopWhy == "" && st == sched.Go {
				id := w.core.Cue(pos).ID
				out = append(out, atWork{Asker: Asker{Cue: id, Agent: f.agent.ID, Attempt: f.number}, task: id, agent: f.agent.ID})
			}
		}
	}
	for _, id := range c.kids.ids {
		if k := c.kids.live[id]; k != nil && k.going && k.ctx.Err() == nil {
			out = append(out, atWork{Asker: Asker{Cue: id, Agent: k.task.Agent.ID, Attempt: k.number}, task: id, agent: k.task.Agent.ID})
		}
	}
	return out
}

// broadcast delivers a broadcast.notice to every other task in GO whose
// agent speaks the protocol, shows it to the person and answers with the
// task ids it reached.
func (c *collab) broadcast(_ workflow.Context, in Broadcast) ([]string, error) {
	var body any
	_ = json.Unmarshal(in.Body, &body)
	reached := []string{}
	for _, o := range c.inGo() {
		if o.Asker == in.Asker || !driver.Speaks(c.w.plan.Agents[o.agent]) {
			continue
		}
		c.inbox[o.Asker] = append(c.inbox[o.Asker], Received{Broadcast: &protocols.BroadcastNotice{CueID: o.task, From: in.Agent, Body: body}})
		reached = append(reached, o.task)
	}
	c.w.emit(record.Event{Type: record.EvUserMessage, Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt,
		Data: record.UserMessageData{Kind: "broadcast", From: in.Agent, To: strings.Join(reached, ", "), Body: in.Body}})
	return reached, nil
}

// agents answers agents.list: every task in GO, the asker's included, with
// what it last reported.
func (c *collab) agents(asker Asker) ([]protocols.ListedAgent, error) {
	w := c.w
	depth := 0
	if k := c.kids.live[asker.Cue]; k != nil {
		depth = k.task.Depth
	}
	tools := w.plan.ToolsOf(asker.Agent)
	from := w.plan.Agents[asker.Agent]
	canHandOff := from != nil && (tools.Allows("handoff", depth) || tools.Allows("spawn", depth))
	list := []protocols.ListedAgent{}
	for _, o := range c.inGo() {
		ag := w.plan.Agents[o.agent]
		provides := ag.Provides
		if provides == nil {
			provides = []string{}
		}
		st := c.status[o.Asker]
		if st.State == "" {
			st.State = "working"
		}
		cue, _, _ := strings.Cut(o.task, "/")
		list = append(list, protocols.ListedAgent{ID: o.agent, TaskID: o.task, CueID: cue, State: st.State, Progress: st.Progress,
			Provides: provides, AcceptsHandoff: canHandOff && slices.Contains(from.HandoffTo, o.agent)})
	}
	return list, nil
}

// The worker's side.

// showPerson sends what the agent shows the person to the workflow.
func showPerson(hub hubLink, kind string, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("%s: the body cannot be sent: %w", kind, err)
	}
	raw = redactorOf(hub.plan).JSON(raw) // it is only recorded: secrets masked, as locally
	if err := hub.link.Signal(hub.ctx, SignalUser, UserNote{Asker: hub.asker, Kind: kind, Body: raw}); err != nil {
		return fmt.Errorf("%s could not reach the run's workflow: %w", kind, err)
	}
	return nil
}

// broadcastAll has the workflow deliver a broadcast.send.
func broadcastAll(hub hubLink, b protocols.BroadcastSend) (protocols.BroadcastSent, error) {
	raw, err := json.Marshal(b.Body)
	if err != nil {
		return protocols.BroadcastSent{}, fmt.Errorf("broadcast.send: the body cannot be sent: %w", err)
	}
	var reached []string
	if err := hub.link.Update(hub.ctx, UpdateBroadcast, Broadcast{Asker: hub.asker, Body: raw}, &reached); err != nil {
		return protocols.BroadcastSent{}, fmt.Errorf("broadcast.send could not reach the run's workflow: %w", err)
	}
	if reached == nil {
		reached = []string{}
	}
	return protocols.BroadcastSent{Recipients: reached}, nil
}

// listAgents asks the workflow for the tasks in GO.
func listAgents(hub hubLink) (protocols.AgentsListed, error) {
	var list []protocols.ListedAgent
	if err := hub.link.Query(hub.ctx, QueryAgents, hub.asker, &list); err != nil {
		return protocols.AgentsListed{}, fmt.Errorf("agents.list could not reach the run's workflow: %w", err)
	}
	if list == nil {
		list = []protocols.ListedAgent{}
	}
	return protocols.AgentsListed{Agents: list}, nil
}
