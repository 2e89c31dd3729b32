package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
)

func init() {
	registerDriver("jsonl", driverKind{new: func() driver { return &jsonlDriver{} }, speaks: true})
}

// jsonlDriver takes one attempt through the cue protocol on the agent's
// long-lived process (agentProcess). Every message either way is recorded
// before it is acted on.
type jsonlDriver struct {
	ap *agentProcess
}

func (d *jsonlDriver) warning(a *attemptRun) *attempt.Failure {
	ap, f := a.r.agentProc(a)
	if f != nil {
		return f
	}
	d.ap, a.proc = ap, ap
	ap.mu.Lock()
	if ap.broken == nil {
		ap.active[a.cue.ID] = a
		ap.last = a
	}
	ap.mu.Unlock()
	reply, f := d.exchange(a, a.warning, a.ackTimeout(), "WARNING")
	a.reply = reply // recorded by the loop with what it decides next
	return f
}

func (d *jsonlDriver) standby(a *attemptRun) *attempt.Failure {
	reply, f := d.exchange(a, a.standbyMsg, a.standbyTimeout(), "STANDBY")
	a.reply = reply
	return f
}

func (d *jsonlDriver) work(a *attemptRun, t *attempt.Task) (map[string]any, *attempt.Failure) {
	m := a.goMsg // recorded with the decision to go
	if m == nil {
		// A child task goes by itself: its coord.go, with the blackboard
		// snapshot read here, is recorded here, before it is sent.
		m = a.r.wire(protocols.New(protocols.CoordGo{RunID: a.r.id, CueID: a.cue.ID, TargetAgents: a.cue.Agents, Task: attempt.ProtocolTask(a.withBlackboard(t))}))
		a.recordMessage("out", m.msg, m.raw)
	}
	a.inGo.Store(true)
	wr, f := d.exchange(a, m, a.goTimeout(), "GO")
	a.reply = wr
	if f != nil {
		return nil, f
	}
	reply := wr.msg
	switch b := reply.Body.(type) {
	case protocols.TaskComplete:
		if b.Outputs == nil {
			b.Outputs = map[string]any{}
		}
		return b.Outputs, nil
	case protocols.TaskFailed:
		f := attempt.Failf("failed", "the agent failed: %s", b.Error)
		f.Retry = b.Retriable
		return nil, f
	}
	return nil, attempt.Failf("malfunction", "unexpected %s in reply to coord.go", reply.Type)
}

func (d *jsonlDriver) close(a *attemptRun) (int, *int) {
	if d.ap == nil {
		return 0, nil
	}
	d.ap.mu.Lock()
	if d.ap.active[a.cue.ID] == a {
		delete(d.ap.active, a.cue.ID)
	}
	d.ap.mu.Unlock()
	return d.ap.p.PID(), nil
}

// exchange sends a recorded message and waits for its reply within timeout,
// serving the agent's requests for this cue meanwhile. The reply comes back
// unrecorded: the caller has it stored before acting on it. A wrong reply
// (recorded here), a broken process or silence is a classified failure;
// silence and protocol errors also stop the process (the next attempt gets
// a fresh one).
func (d *jsonlDriver) exchange(a *attemptRun, out *wireMessage, timeout time.Duration, phase string) (*wireMessage, *attempt.Failure) {
	ap, msg := d.ap, out.msg
	waiter := make(chan *wireMessage, 1)
	if f := ap.expect(msg.ID, func(m *wireMessage) { waiter <- m }); f != nil {
		return nil, f
	}
	defer ap.unexpect(msg.ID)
	if f := ap.write(msg); f != nil {
		return nil, f
	}
	want := protocols.ExpectedReplies(msg.Type)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		if req := a.held; req != nil { // taken out of requests by a batch: served first
			a.held = nil
			if f := a.r.serve(a, ap, req); f != nil {
				return nil, f
			}
			continue
		}
		select {
		case reply := <-waiter:
			// What the agent sent before its reply is queued already (one
			// reader, in order): it is served, and recorded, first.
			if f := a.serveQueued(ap); f != nil {
				return nil, f
			}
			if err := protocols.CheckReply(msg, reply.msg); err != nil {
				a.recordMessage("in", reply.msg, reply.raw)
				f := attempt.Failf("malfunction", "%v", err)
				ap.fail(attempt.Failf("malfunction", "the agent answered %s wrongly: %v", msg.Type, err))
				return nil, f
			}
			return reply, nil
		case req := <-a.requests:
			if f := a.r.serve(a, ap, req); f != nil {
				return nil, f
			}
		case <-ap.done:
			if a.halted() {
				// A cascade stop closes the agents while it halts the
				// attempts: the halt is the reason, and the agent is told
				// it (recorded) as when the halt is seen first.
				return nil, a.tellStopped(ap)
			}
			f := ap.failure()
			return nil, attempt.Failf(f.Class, "%s, during %s", f.Reason, phase)
		case <-a.halt:
			return nil, a.tellStopped(ap)
		case <-a.abort:
			f := a.failure()
			_ = ap.send(a, protocols.New(protocols.CoordStop{RunID: a.r.id, CueID: a.cue.ID, Reason: f.Reason}))
			return nil, f
		case <-timer.C:
			var f *attempt.Failure
			if phase == "GO" {
				f = attempt.Failf("timeout", "no %s within %s (GO timeout)", orList(want), timeout)
			} else {
				f = attempt.Failf("malfunction", "no %s within %s of %s", orList(want), timeout, msg.Type)
			}
			ap.fail(attempt.Failf(f.Class, "the agent did not answer %s of cue %s in time", msg.Type, a.cue.ID))
			return nil, f
		}
	}
}

// serveQueued serves the requests waiting in the attempt's queue now.
func (a *attemptRun) serveQueued(ap *agentProcess) *attempt.Failure {
	for {
		req := a.held
		a.held = nil
		if req == nil {
			select {
			case req = <-a.requests:
			default:
				return nil
			}
		}
		if f := a.r.serve(a, ap, req); f != nil {
			return f
		}
	}
}

// isReplyType reports whether t is an answer type: one that points at no
// outstanding request is a malfunction.
func isReplyType(t string) bool {
	switch t {
	case protocols.TypeAckWarning, protocols.TypeAckStandby, protocols.TypeTaskComplete, protocols.TypeTaskFailed:
		return true
	}
	return false
}

// recordMessage stores a message of this attempt now. A failure
// ends the run (publish); the caller does not act on the message.
func (a *attemptRun) recordMessage(dir string, msg protocols.Message, raw []byte) error {
	return a.r.publish(context.Background(), a.messageEvent(dir, &wireMessage{msg: msg, raw: raw}))
}

// messageEvent is the record of a message of this attempt.
func (a *attemptRun) messageEvent(dir string, m *wireMessage) record.Event {
	data := record.MessageData{Direction: dir, Type: m.msg.Type, ID: m.msg.ID, InReplyTo: m.msg.InReplyTo, Body: json.RawMessage(trimNewline(m.raw))}
	return record.Event{RunID: a.r.id, At: time.Now().UTC(), Type: record.EvMessage, Cue: a.cue.ID, Agent: a.agent.ID, Attempt: a.number, Data: data}
}

// tellStopped tells a halted attempt's agent to stop (coord.stop, recorded)
// and returns the attempt's failure.
func (a *attemptRun) tellStopped(ap *agentProcess) *attempt.Failure {
	_ = ap.send(a, protocols.New(protocols.CoordStop{RunID: a.r.id, CueID: a.cue.ID, Reason: a.why}))
	return a.stopped()
}

// wire encodes a message orch sends.
func (r *run) wire(msg protocols.Message) *wireMessage {
	raw, err := protocols.Encode(msg)
	if err != nil {
		panic(fmt.Sprintf("runner: cannot encode %s: %v", msg.Type, err)) // orch's own messages always encode
	}
	return &wireMessage{msg: msg, raw: raw}
}

// exitFailure classifies a process that ended when it should not have.
func exitFailure(e proc.ExitInfo, when string) *attempt.Failure {
	if e.Signaled {
		return attempt.Failf("signal", "the agent was %s %s", e, when)
	}
	return attempt.Failf(fmt.Sprintf("exit:%d", e.Code), "the agent %s %s", e, when)
}

func orList(types []string) string {
	switch len(types) {
	case 0:
		return "reply"
	case 1:
		return types[0]
	}
	return types[0] + " or " + types[1]
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
