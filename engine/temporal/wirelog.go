package temporal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
)

// The protocol messages of an attempt on a worker (what orch sent its agent
// and what the agent sent), as the local engine records each one (message
// events: direction, type, id, in_reply_to, the whole message): the worker
// keeps a phase's messages, redacted, and returns them with the phase's
// result, which is in the workflow's history anyway; the workflow records
// them in the run's log (not in its history), before the attempt's end. A
// phase returns at most maxPhaseMessages, bodies over maxMessageBody
// shortened: the history stays small, and a note says what was left out.
const (
	maxPhaseMessages = 500
	maxMessageBody   = 16 << 10
)

// wireLog keeps a phase's messages.
type wireLog struct {
	mu      sync.Mutex
	msgs    []record.MessageData
	dropped int
}

func (l *wireLog) add(dir string, w *driver.Wire) {
	if w == nil {
		return
	}
	body := bytes.TrimRight(w.Raw, "\r\n")
	if len(body) > maxMessageBody {
		body, _ = json.Marshal(map[string]any{"message_type": w.Msg.Type, "id": w.Msg.ID,
			"orch_note": fmt.Sprintf("%d bytes, more than the %d a message recorded on --engine temporal keeps", len(body), maxMessageBody)})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.msgs) >= maxPhaseMessages {
		l.dropped++
		return
	}
	l.msgs = append(l.msgs, record.MessageData{Direction: dir, Type: w.Msg.Type, ID: w.Msg.ID, InReplyTo: w.Msg.InReplyTo,
		Body: json.RawMessage(append([]byte(nil), body...))})
}

// take returns the phase's messages, redacted with the plan's secrets and
// the worker's environment (as the local engine redacts its records), and
// how many were left out; the log starts over.
func (l *wireLog) take(p *planner.Plan) ([]record.MessageData, int) {
	l.mu.Lock()
	msgs, dropped := l.msgs, l.dropped
	l.msgs, l.dropped = nil, 0
	l.mu.Unlock()
	if len(msgs) == 0 {
		return nil, dropped
	}
	evs := make([]record.Event, len(msgs))
	for i, m := range msgs {
		evs[i] = record.Event{Type: record.EvMessage, Data: m}
	}
	record.Redact(redactorOf(p), evs)
	for i, e := range evs {
		if m, ok := e.Data.(record.MessageData); ok {
			msgs[i] = m
		}
	}
	return msgs, dropped
}

// redactors: a worker's redactor of each plan it runs (its environment and
// the plan's secrets do not change).
var redactors sync.Map // *planner.Plan -> *redact.Redactor

func redactorOf(p *planner.Plan) *redact.Redactor {
	if d, ok := redactors.Load(p); ok {
		return d.(*redact.Redactor)
	}
	d, _ := redactors.LoadOrStore(p, redact.ForPlan(p))
	return d.(*redact.Redactor)
}

// redactLines masks the secrets in a phase's output lines (the local
// engine redacts every line it records).
func redactLines(p *planner.Plan, lines []LogLine) []LogLine {
	if len(lines) == 0 {
		return lines
	}
	d := redactorOf(p)
	if d.None() {
		return lines
	}
	out := make([]LogLine, len(lines))
	for i, l := range lines {
		l.Text = d.Text(l.Text)
		out[i] = l
	}
	return out
}

// recordMessages records the protocol messages a phase of the attempt
// (cue, agent, number) returned, before what its end records.
func (w *wf) recordMessages(cue, agent string, number int, res *AttemptResult) {
	for _, m := range res.Messages {
		w.emit(record.Event{Type: record.EvMessage, Cue: cue, Agent: agent, Attempt: number, Data: m})
	}
	if res.MessagesLeftOut > 0 {
		w.emit(record.Event{Type: record.EvNote, Cue: cue, Agent: agent, Attempt: number,
			Reason: fmt.Sprintf("%d more protocol messages of this phase are not recorded (a phase on --engine temporal records at most %d)", res.MessagesLeftOut, maxPhaseMessages)})
	}
	res.Messages = nil
}
