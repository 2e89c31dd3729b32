package temporal

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/record"
)

// Who is told of a message between tasks, as locally (runner/messages.go,
// sched.Tasks.Route): a message between siblings (tasks with the same
// parent; every cue's task is a child of the person) is told to their
// parent — a message.notice in its agent's inbox, or the person's log when
// the parent is the person or not at work; a message between tasks further
// apart is told to their nearest common ancestor (routed), unless that is
// the sender or the recipient. A private message's notices have no body.
// Before changeNotices the person was told of every message.
const changeNotices = "orch-message-notices"

// lineage is the attempt a request comes from, then the attempts above it
// in the task tree, up to its cue's (a child's parent attempt is the one
// that started it, at work while the child is).
func (c *collab) lineage(a Asker) []Asker {
	out := []Asker{a}
	for k := c.kids.live[a.Cue]; k != nil; k = c.kids.live[k.asker.Cue] {
		out = append(out, k.asker)
	}
	return out
}

// parentOf is the attempt above a in the tree; false: the person.
func (c *collab) parentOf(a Asker) (Asker, bool) {
	if k := c.kids.live[a.Cue]; k != nil {
		return k.asker, true
	}
	return Asker{}, false
}

// noticeMessage tells those who oversee a message from `from` to `to` (a
// task at work, its task id task) that it was sent; false: the run
// started before changeNotices (the caller tells the person, as then).
func (c *collab) noticeMessage(ctx workflow.Context, in Send, to Asker, task string) bool {
	if workflow.GetVersion(ctx, changeNotices, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false
	}
	var body any
	if !in.Private {
		_ = json.Unmarshal(in.Body, &body)
	}
	from := in.Asker
	fp, fok := c.parentOf(from)
	tp, tok := c.parentOf(to)
	if fok == tok && fp == tp { // siblings: their parent looks on
		if in.Private {
			n := protocols.MessageNotice{CueID: fp.Cue, From: from.Agent, To: to.Agent, Kind: protocols.TypeMessageSend, FromTask: from.Cue, ToTask: task, Private: true}
			if !fok || !c.toParent(from, fp, n) {
				c.toLog(from, record.UserMessageData{Kind: "notice", To: to.Agent, FromTask: from.Cue, ToTask: task, Private: true}, nil)
			}
			return true
		}
		if !fok { // cues' tasks: the person is their parent
			c.toLog(from, record.UserMessageData{Kind: "notice", To: to.Agent}, in.Body)
			return true
		}
		if !c.toParent(from, fp, protocols.MessageNotice{CueID: fp.Cue, From: from.Agent, To: to.Agent, Kind: protocols.TypeMessageSend, Body: body}) {
			shown, _ := json.Marshal(map[string]any{"kind": protocols.TypeMessageSend, "body": body})
			c.toLog(from, record.UserMessageData{Kind: "notice", To: to.Agent}, shown)
		}
		return true
	}
	mine := c.lineage(from)
	via, found := Asker{}, false
	for _, t := range c.lineage(to) {
		for _, m := range mine {
			if m == t {
				via, found = t, true
				break
			}
		}
		if found {
			break
		}
	}
	if found && (via == from || via == to) { // nobody stands between them
		return true
	}
	if found && c.asking(via) {
		c.inbox[via] = append(c.inbox[via], Received{Notice: &protocols.MessageNotice{CueID: via.Cue, From: from.Agent, To: to.Agent,
			Kind: protocols.TypeMessageSend, Body: body, FromTask: from.Cue, ToTask: task, Routed: true, Private: in.Private}})
		return true
	}
	c.toLog(from, record.UserMessageData{Kind: "notice", To: to.Agent, FromTask: from.Cue, ToTask: task, Routed: true, Private: in.Private}, in.Body)
	return true
}

// toLog records a notice for the person (its body unless private).
func (c *collab) toLog(from Asker, data record.UserMessageData, body json.RawMessage) {
	data.From = from.Agent
	if !data.Private {
		data.Body = body
	}
	c.w.emit(record.Event{Type: record.EvUserMessage, Cue: from.Cue, Agent: from.Agent, Attempt: from.Attempt, Data: data})
}
