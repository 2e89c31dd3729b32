package runner

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
)

// serve handles a message an agent sent during its attempt that is not the
// reply being waited for: the hub side of hub and spoke (docs/design.md#hub-and-spoke). It runs
// on the attempt's goroutine. Requests get their answer (some later: a
// handoff's result, a question's answer); reports are recorded (they already
// are, as messages); anything else gets a protocol.error with the reason,
// and the agent goes on. A failure returned ends the attempt.
//
// Every request is stored before it is acted on: most are recorded here
// first; a blackboard.write by the event of its write, a blackboard.read
// together with its answer (one commit each, as the store's figures need).
func (r *run) serve(a *attemptRun, peer driver.Peer, wm *driver.Wire, more func() *driver.Wire) *attempt.Failure {
	msg := wm.Msg
	if a.allows("blackboard") {
		switch b := msg.Body.(type) {
		case protocols.BlackboardWrite:
			return r.serveWrites(a, peer, wm, more)
		case protocols.BlackboardRead:
			return r.read(a, peer, wm, b)
		case protocols.BlackboardWatch:
			return r.watchBoard(a, peer, wm, b)
		}
	}
	in := a.messageEvent("in", driver.Withheld(wm))
	repeats := a.guard.add(msg) // counted first: a blocked message does not reach the person
	ev, forPerson := r.forPerson(a, msg)
	events := []record.Event{in}
	if forPerson && !r.loopGuard().blocks(repeats) {
		events = append(events, ev) // one commit for the message and what the person sees
	}
	if err := r.publish(context0, events...); err != nil {
		return notRecorded(msg, err)
	}
	if blocked, f := a.loopVerdict(peer, msg, repeats); blocked || f != nil {
		return f
	}
	if forPerson {
		if b, ok := msg.Body.(protocols.MessageUser); ok {
			r.notifyParent(a, "message.user", "person", b.Body)
		}
		return nil
	}
	refuse := func(format string, args ...any) *attempt.Failure {
		return peer.Send(protocols.Reply(msg, protocols.ProtocolError{Reason: fmt.Sprintf(format, args...)}))
	}
	switch b := msg.Body.(type) {
	case protocols.BlackboardWrite, protocols.BlackboardRead, protocols.BlackboardWatch:
		return refuse("%s: %s", msg.Type, a.denied("blackboard"))
	case protocols.TaskHandoff:
		return r.handoff(a, peer, msg, b)
	case protocols.TaskSpawn:
		return r.spawn(a, peer, msg, b)
	case protocols.QuestionAsk:
		return r.ask(a, msg, b)
	case protocols.QuestionAnswer: // an answer to a question that closed meanwhile
		a.Note("%s answered question %s after it closed; the answer is not used", a.Agent.ID, b.QuestionID)
		return nil
	case protocols.MessageSend:
		return r.sendMessage(a, peer, msg, b)
	case protocols.DiscoveryReport: // for a parent agent at work (forPerson took the rest)
		r.discovery(a, b)
		return nil
	case protocols.MemoryWrite:
		if !a.allows("memory") {
			return refuse("memory.write: %s", a.denied("memory"))
		}
		item := record.MemoryItem{Key: b.Key, Text: b.Text, Tags: b.Tags, Agent: a.Agent.ID, RunID: r.id, At: time.Now().UTC()}
		if err := r.rec.MemoryWrite(context0, item); err != nil {
			return refuse("memory.write failed: %v", err)
		}
		return peer.Send(protocols.Reply(msg, protocols.MemoryAck{Key: b.Key}))
	case protocols.MemoryDelete:
		if !a.allows("memory") {
			return refuse("memory.delete: %s", a.denied("memory"))
		}
		if _, err := r.rec.MemoryDelete(context0, r.id, b.Key); err != nil {
			return refuse("memory.delete failed: %v", err)
		}
		return peer.Send(protocols.Reply(msg, protocols.MemoryAck{Key: b.Key}))
	case protocols.MemorySearch:
		if !a.allows("memory") {
			return refuse("memory.search: %s", a.denied("memory"))
		}
		return r.searchMemory(a, peer, msg, b)
	case protocols.StatusUsage:
		a.r.addUsage(a, record.Usage{Credits: b.Credits, CostUSD: b.CostUSD, InputTokens: b.InputTokens, OutputTokens: b.OutputTokens})
		return nil
	case protocols.StatusReport:
		return r.report(a, peer, msg, AgentStatus{State: b.State, Progress: b.Progress, Detail: b.Detail})
	case protocols.StatusUpdate:
		return r.report(a, peer, msg, AgentStatus{State: b.State, Detail: b.Detail})
	case protocols.AgentsList:
		return r.listAgents(a, peer, msg)
	case protocols.BroadcastSend:
		return r.broadcast(a, peer, msg, b)
	case protocols.NotifyMode:
		return r.setNotifyMode(a, peer, msg, b)
	}
	ch, err := protocols.Route(msg.Type)
	switch {
	case err != nil:
		return refuse("%v", err)
	case ch == protocols.ChannelStatus || ch == protocols.ChannelEscalation:
		return nil // recorded; exception-based reporting needs no answer
	case !protocols.FromAgent(msg.Type):
		return refuse("%s is sent by orch, not by agents", msg.Type)
	}
	return refuse("%s is not supported by this version of orch", msg.Type)
}

// notRecorded ends an attempt whose agent's message could not be stored:
// it is not acted on, and the run ends with the recorder's error.
func notRecorded(msg protocols.Message, err error) *attempt.Failure {
	return attempt.Failf("internal", "%s could not be recorded: %v", msg.Type, err)
}

// allows reports whether the agent's effective tools at its depth include tool.
func (a *attemptRun) allows(tool string) bool {
	return toolsOf(a.r.plan, a.Agent.ID).Allows(tool, a.node.depth)
}

func (a *attemptRun) denied(tool string) string {
	if why, ok := planner.NotOffered(a.r.plan, a.Agent)[tool]; ok {
		return fmt.Sprintf("%q is not offered to agent %s: %s", tool, a.Agent.ID, why)
	}
	return fmt.Sprintf("agent %s may not use %q at handoff depth %d (its effective tools: %v)",
		a.Agent.ID, tool, a.node.depth, toolsOf(a.r.plan, a.Agent.ID).At(a.node.depth))
}

// serveWrites stores a blackboard.write together with the writes queued
// right behind it (more), in as few transactions as the store can (an
// agent may send thousands a second), then acknowledges each in order. A
// request of another kind found behind them is served next.
func (r *run) serveWrites(a *attemptRun, peer driver.Peer, first *driver.Wire, more func() *driver.Wire) *attempt.Failure {
	if n := a.guard.add(first.Msg); r.loopGuard().speaks(n) {
		return r.serveRepeat(a, peer, first, n)
	}
	batch := []protocols.Message{first.Msg}
	var held *driver.Wire   // a request of another kind, taken out of the queue: served after the batch
	var repeat *driver.Wire // a write the loop guard has a word about: after the batch, in order
	var repeats int
	for more != nil && len(batch) < driver.RequestQueue {
		m := more()
		if m == nil {
			break
		}
		if m.Msg.Type != protocols.TypeBlackboardWrite {
			held = m
			break
		}
		if n := a.guard.add(m.Msg); r.loopGuard().speaks(n) {
			repeat, repeats = m, n
			break
		}
		batch = append(batch, m.Msg)
	}
	if f := r.writeBatch(a, peer, batch); f != nil {
		return f
	}
	if held != nil {
		return r.serve(a, peer, held, more)
	}
	if repeat == nil || a.halted() {
		return nil
	}
	return r.serveRepeat(a, peer, repeat, repeats)
}

// serveRepeat serves a blackboard.write the loop guard speaks about: its
// verdict first, then, unless it blocks the write, the write alone.
func (r *run) serveRepeat(a *attemptRun, peer driver.Peer, wm *driver.Wire, n int) *attempt.Failure {
	if r.loopGuard().blocks(n) { // not written: recorded here, with the guard's answer
		if f := a.Record("in", wm); f != nil {
			return f
		}
	}
	if blocked, f := a.loopVerdict(peer, wm.Msg, n); blocked || f != nil {
		return f
	}
	return r.writeBatch(a, peer, []protocols.Message{wm.Msg})
}

// writeBatch stores the writes of batch and acknowledges each in order.
func (r *run) writeBatch(a *attemptRun, peer driver.Peer, batch []protocols.Message) *attempt.Failure {
	first := batch[0]
	puts := make([]record.BlackboardPut, 0, len(batch))
	replies := make([]protocols.Message, len(batch))
	for i, m := range batch {
		b := m.Body.(protocols.BlackboardWrite)
		raw, err := json.Marshal(b.Value)
		if err != nil { // a decoded value always encodes; kept for safety
			replies[i] = protocols.Reply(m, protocols.ProtocolError{Reason: "blackboard.write: the value cannot be stored: " + err.Error()})
			continue
		}
		if b.Key == "" { // the only write the store refuses: any other failure is the store's
			replies[i] = protocols.Reply(m, protocols.ProtocolError{Reason: "blackboard.write: the key is empty"})
			continue
		}
		puts = append(puts, record.BlackboardPut{Key: b.Key, Value: json.RawMessage(raw), Author: a.Agent.ID,
			Cue: a.Cue.ID, Attempt: a.Number, MessageID: m.ID, IfVersion: b.ExpectedVersion})
	}
	written, err := r.writeBoard(context0, puts)
	if err != nil { // the run ends with the error: nothing more is answered
		return notRecorded(first, err)
	}
	j := 0
	for i, m := range batch {
		if replies[i].Type != "" {
			continue
		}
		switch {
		case j < len(written) && written[j].Conflict:
			replies[i] = protocols.Reply(m, protocols.BlackboardConflict{Key: puts[j].Key,
				CurrentVersion: written[j].Version, Author: written[j].Author})
		case j < len(written):
			replies[i] = protocols.Reply(m, protocols.BlackboardAck{Key: puts[j].Key, Version: written[j].Version})
		default:
			replies[i] = protocols.Reply(m, protocols.ProtocolError{Reason: fmt.Sprintf("blackboard.write failed: %v", err)})
		}
		j++
	}
	r.boardChanged(a, puts, written)
	// The acknowledgements are recorded by the blackboard/updated events
	// (and the refusals by blackboard/conflict ones), with the message ids
	// they answer, not once more each.
	for _, m := range replies {
		if a.halted() { // the exchange tells the agent why; the rest is moot
			return nil
		}
		if f := peer.Write(m); f != nil {
			return f
		}
	}
	return nil
}

// read answers a blackboard.read; the request and its answer are stored in
// one commit before the answer goes out.
func (r *run) read(a *attemptRun, peer driver.Peer, wm *driver.Wire, b protocols.BlackboardRead) *attempt.Failure {
	if stop, f := r.guardRequest(a, peer, wm); stop {
		return f
	}
	var reply protocols.Message
	e, ok, err := r.rec.BlackboardRead(context0, r.id, b.Key)
	if err != nil {
		reply = protocols.Reply(wm.Msg, protocols.ProtocolError{Reason: "blackboard.read failed: " + err.Error()})
	} else {
		val := protocols.BlackboardValue{Key: b.Key, Found: ok}
		if ok {
			var v any
			_ = json.Unmarshal(e.Value, &v)
			val.Value, val.Version, val.Author = v, e.Version, e.Author
		}
		reply = protocols.Reply(wm.Msg, val)
	}
	out := driver.Encode(reply)
	if err := r.publish(context0, a.messageEvent("in", wm), a.messageEvent("out", out)); err != nil {
		return notRecorded(wm.Msg, err)
	}
	return peer.Write(reply)
}

func (r *run) searchMemory(a *attemptRun, peer driver.Peer, msg protocols.Message, b protocols.MemorySearch) *attempt.Failure {
	items, err := r.rec.MemorySearch(context0, b.Query, b.Limit)
	if err != nil {
		return peer.Send(protocols.Reply(msg, protocols.ProtocolError{Reason: "memory.search failed: " + err.Error()}))
	}
	return peer.Send(protocols.Reply(msg, protocols.MemoryResults{Items: record.MemoryResults(items)}))
}
