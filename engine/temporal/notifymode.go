package temporal

import (
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// Notification modes, as locally (runner/channels.go): how a child's
// notices (its message.user, discovery.report and messages to its
// siblings) reach its parent agent — at once (immediate), as one
// message.notice of kind summary when the child ends (summary), or not at
// all (silent). A parent agent sets its children's with notify.mode (an
// update, orch.agent-notify-mode), the person a subtree's with orch
// notify-mode RUN [CUE] MODE (a signal, orch.notify-mode): the person's
// wins (sched.NotifyModes).
const (
	UpdateNotifyMode = "orch.agent-notify-mode"
	SignalNotifyMode = "orch.notify-mode"
)

// AgentNotifyMode is a parent agent's notify.mode.
type AgentNotifyMode struct {
	Asker
	Mode string
}

// NotifyModeSignal is orch notify-mode: Cue "" is the whole run.
type NotifyModeSignal struct {
	Cue  string
	Mode string
}

// notifying is what the workflow keeps of the modes and the notices held
// for summaries (by the child's task id).
type notifying struct {
	modes sched.NotifyModes
	held  map[string][]any
}

func (c *collab) notifyModes() {
	c.notify.held = map[string][]any{}
	_ = workflow.SetUpdateHandlerWithOptions(c.w.ctx, UpdateNotifyMode, c.agentNotifyMode, workflow.UpdateHandlerOptions{Validator: func(in AgentNotifyMode) error {
		if !validMode(in.Mode) {
			return fmt.Errorf("notify.mode: unknown mode %q (immediate, summary or silent)", in.Mode)
		}
		return c.running("notify.mode", in.Asker)
	}})
	c.w.sel.AddReceive(workflow.GetSignalChannel(c.w.ctx, SignalNotifyMode), func(ch workflow.ReceiveChannel, _ bool) {
		var s NotifyModeSignal
		ch.Receive(c.w.ctx, &s)
		c.personNotifyMode(s)
	})
}

func validMode(mode string) bool {
	return mode == sched.NotifyImmediate || mode == sched.NotifySummary || mode == sched.NotifySilent
}

// agentNotifyMode sets the mode of the asker's children.
func (c *collab) agentNotifyMode(_ workflow.Context, in AgentNotifyMode) (string, error) {
	c.notify.modes.Set(false, in.Cue, in.Mode)
	body, _ := json.Marshal(map[string]any{"mode": in.Mode, "subtree": in.Cue})
	c.w.emit(record.Event{Type: record.EvUserMessage, Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt,
		Data: record.UserMessageData{Kind: "notify-mode", From: in.Agent, Body: body}})
	return in.Mode, nil
}

// personNotifyMode is orch notify-mode RUN [CUE] MODE.
func (c *collab) personNotifyMode(s NotifyModeSignal) {
	if !validMode(s.Mode) {
		c.w.emit(record.Event{Type: record.EvNote, Cue: s.Cue, Reason: fmt.Sprintf("orch notify-mode: unknown mode %q (immediate, summary or silent): nothing changed", s.Mode)})
		return
	}
	c.notify.modes.Set(true, s.Cue, s.Mode)
	subtree := "the whole run"
	if s.Cue != "" {
		subtree = "cue " + s.Cue + " and everything under it"
	}
	words := map[string]string{sched.NotifySummary: "as a summary when each child ends", sched.NotifySilent: "not at all (silent)"}[s.Mode]
	if words == "" {
		words = "at once (immediate)"
	}
	c.w.emit(record.Event{Type: record.EvNote, Cue: s.Cue, Reason: fmt.Sprintf("orch notify-mode: notices reach parents %s in %s", words, subtree)})
}

// toParent gives a child's notice to its parent's attempt, as the mode of
// the parent's children says; false: the parent is not at work (the
// person's log has it instead).
func (c *collab) toParent(child Asker, parent Asker, n protocols.MessageNotice) bool {
	if !c.asking(parent) {
		return false
	}
	switch c.notify.modes.Mode(parent.Cue) {
	case sched.NotifySilent:
	case sched.NotifySummary:
		c.notify.held[child.Cue] = append(c.notify.held[child.Cue], n)
	default:
		c.inbox[parent] = append(c.inbox[parent], Received{Notice: &n})
	}
	return true
}

// deliverSummary gives a child's held notices to its parent, as one
// message.notice of kind summary, before its result.
func (c *collab) deliverSummary(k *kid) {
	held := c.notify.held[k.task.ID]
	delete(c.notify.held, k.task.ID)
	if len(held) == 0 || !c.asking(k.asker) {
		return
	}
	c.inbox[k.asker] = append(c.inbox[k.asker], Received{Notice: &protocols.MessageNotice{CueID: k.parent, From: k.task.Agent.ID,
		Kind: "summary", Body: map[string]any{"task_id": k.task.ID, "notices": held}}})
}

// setNotifyMode is an agent's notify.mode, through its workflow.
func setNotifyMode(ctx context.Context, hub hubLink, b protocols.NotifyMode) (string, error) {
	var mode string
	err := hub.link.Update(ctx, UpdateNotifyMode, AgentNotifyMode{Asker: hub.asker, Mode: b.Mode}, &mode)
	return mode, err
}
