package temporal

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/record"
)

// Messages between running siblings: an agent's message.send is an update
// (orch.send) that the workflow delivers into the recipient attempt's inbox;
// the recipient's worker takes it with another (orch.inbox), which waits for
// a message (a long poll): a jsonl agent gets message.received on its stdin,
// an agent with orch's MCP tools reads its inbox tool. Every cue is a root
// task, whose parent is the person: the person sees each message (a notice,
// without the body of a private one), as locally.
const (
	UpdateSend  = "orch.send"
	UpdateInbox = "orch.inbox"
)

// Send is an agent's message.send: To names another cue's task at work, by
// cue id or agent id.
type Send struct {
	Asker
	To      string
	Body    json.RawMessage
	Private bool
}

// Sent answers a Send: "" delivered, else why not (delivery.failed).
type Sent struct {
	Failed string
}

// InboxWait takes what was delivered to an attempt, waiting up to Wait for
// something when there is nothing yet.
type InboxWait struct {
	Asker
	Wait time.Duration
}

// Received is a message in an attempt's inbox.
type Received struct {
	From     string
	FromTask string
	Body     json.RawMessage
	Private  bool
	// Announce, instead of a message: a child the attempt spawned ended
	// (children.go).
	Announce *protocols.TaskAnnounce `json:",omitempty"`
	// Broadcast: another task's broadcast.send; Notice: a child's
	// message.user or discovery.report (person.go).
	Broadcast *protocols.BroadcastNotice `json:",omitempty"`
	Notice    *protocols.MessageNotice   `json:",omitempty"`
	// Question: a child's question.ask, forwarded to this agent (bubbling.go).
	Question *protocols.QuestionAsk `json:",omitempty"`
}

// Message is what the recipient's agent is sent.
func (r Received) Message(cue string) protocols.Message {
	switch {
	case r.Announce != nil:
		return protocols.New(*r.Announce)
	case r.Broadcast != nil:
		return protocols.New(*r.Broadcast)
	case r.Notice != nil:
		return protocols.New(*r.Notice)
	case r.Question != nil:
		return protocols.New(*r.Question)
	}
	var body any
	_ = json.Unmarshal(r.Body, &body)
	return protocols.New(protocols.MessageReceived{CueID: cue, From: r.From, FromTask: r.FromTask, Body: body, Private: r.Private})
}

// MaxInboxWait bounds one orch.inbox wait: a worker asks again.
const MaxInboxWait = 5 * time.Minute

func (c *collab) messages() {
	c.inbox = map[Asker][]Received{}
	_ = workflow.SetUpdateHandlerWithOptions(c.w.ctx, UpdateSend, c.send, workflow.UpdateHandlerOptions{Validator: c.validSend})
	_ = workflow.SetUpdateHandlerWithOptions(c.w.ctx, UpdateInbox, c.takeInbox, workflow.UpdateHandlerOptions{Validator: func(in InboxWait) error { return c.running("inbox", in.Asker) }})
}

func (c *collab) validSend(in Send) error {
	if in.To == "" || len(in.Body) == 0 {
		return fmt.Errorf("message.send: a recipient and a body are needed")
	}
	return c.running("message.send", in.Asker)
}

// send delivers a message to the one task at work that To names (its task
// id: a cue's, or a child's CUE/1; or its agent), and tells the person.
func (c *collab) send(ctx workflow.Context, in Send) (Sent, error) {
	w := c.w
	var to []atWork
	for _, o := range c.inGo() { // cues' tasks and children (person.go)
		if o.Cue == in.Cue && o.Agent == in.Agent {
			continue
		}
		if o.task == in.To || o.agent == in.To {
			to = append(to, o)
		}
	}
	switch {
	case len(to) == 0:
		return Sent{Failed: fmt.Sprintf("no task %s is at work (it ended, has not started, or is unknown)", in.To)}, nil
	case len(to) > 1:
		return Sent{Failed: fmt.Sprintf("%d tasks of %s are at work: name the one by its task id", len(to), in.To)}, nil
	}
	r := to[0].Asker
	c.inbox[r] = append(c.inbox[r], Received{From: in.Agent, FromTask: in.Cue, Body: in.Body, Private: in.Private})
	if c.noticeMessage(ctx, in, r, to[0].task) { // notices.go
		return Sent{}, nil
	}
	data := record.UserMessageData{Kind: "notice", From: in.Agent, To: r.Agent, Body: in.Body}
	if in.Private { // the person sees that it was sent, not what
		data = record.UserMessageData{Kind: "notice", From: in.Agent, To: r.Agent, FromTask: in.Cue, ToTask: r.Cue, Private: true}
	}
	w.emit(record.Event{Type: record.EvUserMessage, Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt, Data: data})
	return Sent{}, nil
}

// takeInbox returns what waits in the attempt's inbox, waiting up to
// in.Wait (MaxInboxWait at most) for a message, or the attempt's end.
func (c *collab) takeInbox(ctx workflow.Context, in InboxWait) ([]Received, error) {
	if len(c.inbox[in.Asker]) == 0 && in.Wait > 0 {
		_, err := workflow.AwaitWithTimeout(ctx, min(in.Wait, MaxInboxWait), func() bool {
			return len(c.inbox[in.Asker]) > 0 || !c.asking(in.Asker)
		})
		if err != nil {
			return nil, err
		}
	}
	got := c.inbox[in.Asker]
	delete(c.inbox, in.Asker)
	return got, nil
}
