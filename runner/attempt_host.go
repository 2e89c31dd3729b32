package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
)

// An attempt is its driver's Host: the run's services to one attempt,
// which a driver reaches through driver.Host and nothing else.
var _ driver.Host = (*attemptRun)(nil)

// Env is the agent's environment: orch's own, the agent's env, and ORCH_*
// variables, extra last. Values never reach a command line.
func (a *attemptRun) Env(extra ...string) []string {
	env := a.r.agentEnv(a)
	// A jsonl or ACP agent's process serves attempt after attempt: a
	// token in its environment would be its first attempt's. A jsonl agent
	// has the protocol; an ACP one gets the server in each session/new.
	if a.MCP != nil && a.Agent.Protocol != "jsonl" && a.Agent.Protocol != "acp" {
		env = append(env, a.MCP.Env()...)
	}
	return append(env, extra...)
}

// Log records one line of the agent's output, within its budget.
func (a *attemptRun) Log(stream, text string) { a.logs.Add(a.logLine(stream, text)) }

// CloseLog logs what the attempt's budget held back (see logCap.close).
func (a *attemptRun) CloseLog() { a.logs.Close(a.logLine("stderr", "")) }

// Note records something worth seeing about this attempt (not a decision:
// a failure to record it does not stop the run).
func (a *attemptRun) Note(format string, args ...any) {
	_ = a.r.publish(context.Background(), record.Event{RunID: a.r.id, At: time.Now().UTC(), Type: record.EvNote,
		Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number, Reason: fmt.Sprintf(format, args...)})
}

// Usage counts what the agent reported it used so far.
func (a *attemptRun) Usage(u record.Usage) { a.r.addUsage(a, u) }

// Board fills the task's blackboard snapshot with the board as it is now.
func (a *attemptRun) Board(t *attempt.Task) *attempt.Task {
	entries, err := a.r.blackboard()
	if err != nil {
		entries = nil // the task goes with an empty board
	}
	return attempt.WithBoard(t, entries)
}

// AskPerson asks the person a question for an agent that cannot ask it
// itself (an ACP permission request).
func (a *attemptRun) AskPerson(q protocols.QuestionAsk, options []record.QuestionOption, deliver func(string)) *attempt.Failure {
	return a.r.askPerson(a, q, options, deliver)
}

// Record stores a message of this attempt now. A failure ends the run
// (publish); the caller does not act on the message.
func (a *attemptRun) Record(dir string, m *driver.Wire) *attempt.Failure {
	if err := a.r.publish(context.Background(), a.messageEvent(dir, m)); err != nil {
		return notRecorded(m.Msg, err)
	}
	return nil
}

// Serve serves one of the agent's requests (the hub).
func (a *attemptRun) Serve(p driver.Peer, req *driver.Wire, more func() *driver.Wire) *attempt.Failure {
	a.calls.serving.Lock()
	defer a.calls.serving.Unlock()
	return a.r.serve(a, p, req, more)
}

// Started keeps a process the attempt started, whose output is read to its
// end before the attempt ends (run).
func (a *attemptRun) Started(p *proc.Process) { a.procs = append(a.procs, p) }

// Going marks the attempt in GO: from now on it may receive messages and
// questions, through p.
func (a *attemptRun) Going(p driver.Peer) {
	if p == nil && a.MCP != nil { // it reads what it is sent through its inbox
		inbox := newInboxPeer(a)
		a.inbox.Store(inbox)
		p = inbox
	}
	a.peer = p
	a.inGo.Store(true)
	if testHookGoing != nil {
		testHookGoing(a)
	}
}

// testHookGoing, set by tests, sees an attempt as it enters GO.
var testHookGoing func(a *attemptRun)

// messageEvent is the record of a message of this attempt.
func (a *attemptRun) messageEvent(dir string, m *driver.Wire) record.Event {
	data := record.MessageData{Direction: dir, Type: m.Msg.Type, ID: m.Msg.ID, InReplyTo: m.Msg.InReplyTo,
		Body: json.RawMessage(bytes.TrimRight(m.Raw, "\r\n"))}
	return record.Event{RunID: a.r.id, At: time.Now().UTC(), Type: record.EvMessage, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number, Data: data}
}
