package driver

import (
	"fmt"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/proc"
)

func init() {
	Register("jsonl", Kind{New: func() Driver { return &jsonlDriver{} }, Speaks: true})
}

// RequestQueue is how many of an agent's requests may wait for the attempt
// serving them: enough to batch a burst of blackboard writes into one
// transaction; beyond it the agent's pipe fills and it waits.
const RequestQueue = 256

// jsonlDriver takes one attempt through the cue protocol on the agent's
// long-lived process (agentProcess). Every message either way is recorded
// before it is acted on. It is the attempt's Peer: the hub reaches the
// agent through it.
type jsonlDriver struct {
	a  *Attempt
	ap *agentProcess
	// requests are the agent's requests during this attempt, in order.
	requests chan *Wire
}

func (d *jsonlDriver) Warning(a *Attempt) *attempt.Failure {
	ap, f := a.Agents.process(a)
	if f != nil {
		return f
	}
	d.a, d.ap, d.requests = a, ap, make(chan *Wire, RequestQueue)
	ap.mu.Lock()
	if ap.broken == nil {
		ap.active[a.Cue.ID] = d
		ap.last = d
	}
	ap.mu.Unlock()
	reply, f := d.exchange(a.Msgs.Warning, a.Timeouts.Ack, "WARNING")
	a.Msgs.Reply = reply // recorded by the engine with what it decides next
	return f
}

func (d *jsonlDriver) Standby(a *Attempt) *attempt.Failure {
	reply, f := d.exchange(a.Msgs.Standby, a.Timeouts.Standby, "STANDBY")
	a.Msgs.Reply = reply
	return f
}

func (d *jsonlDriver) Work(a *Attempt, t *attempt.Task) (map[string]any, *attempt.Failure) {
	m := a.Msgs.Go // recorded with the decision to go
	if m == nil {
		// A child task goes by itself: its coord.go, with the blackboard
		// snapshot read here, is recorded here, before it is sent.
		m = Encode(protocols.New(protocols.CoordGo{RunID: a.RunID, CueID: a.Cue.ID, TargetAgents: a.Cue.Agents, Task: attempt.ProtocolTask(a.Host.Board(t))}))
		_ = a.Host.Record("out", m)
	}
	a.Host.Going(d)
	wr, f := d.exchange(m, a.Timeouts.Go, "GO")
	a.Msgs.Reply = wr
	if f != nil {
		return nil, f
	}
	reply := wr.Msg
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

func (d *jsonlDriver) Close(a *Attempt) (int, *int) {
	if d.ap == nil {
		return 0, nil
	}
	d.ap.mu.Lock()
	if d.ap.active[a.Cue.ID] == d {
		delete(d.ap.active, a.Cue.ID)
	}
	d.ap.mu.Unlock()
	return d.ap.p.PID(), nil
}

// Send records a message to the agent, as its attempt's, and writes it
// (Peer).
func (d *jsonlDriver) Send(msg protocols.Message) *attempt.Failure { return d.ap.send(d, msg) }

// Write writes a recorded message to the agent (Peer).
func (d *jsonlDriver) Write(msg protocols.Message) *attempt.Failure { return d.ap.write(msg) }

// Expect and Unexpect register and forget what to do with the agent's
// answer to a message (Peer).
func (d *jsonlDriver) Expect(id string, answer func(*Wire)) *attempt.Failure {
	return d.ap.expect(id, answer)
}

func (d *jsonlDriver) Unexpect(id string) { d.ap.unexpect(id) }

// exchange sends a recorded message and waits for its reply within timeout,
// serving the agent's requests for this cue meanwhile. The reply comes back
// unrecorded: the caller has it stored before acting on it. A wrong reply
// (recorded here), a broken process or silence is a classified failure;
// silence and protocol errors also stop the process (the next attempt gets
// a fresh one).
func (d *jsonlDriver) exchange(out *Wire, timeout time.Duration, phase string) (*Wire, *attempt.Failure) {
	a, ap, msg := d.a, d.ap, out.Msg
	waiter := make(chan *Wire, 1)
	if f := ap.expect(msg.ID, func(m *Wire) { waiter <- m }); f != nil {
		return nil, f
	}
	told := false // the agent was told to stop the cue: its answer may still come
	defer func() {
		if told {
			ap.abandon(msg.ID)
		} else {
			ap.unexpect(msg.ID)
		}
	}()
	if f := ap.write(msg); f != nil {
		return nil, f
	}
	want := protocols.ExpectedReplies(msg.Type)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case reply := <-waiter:
			// What the agent sent before its reply is queued already (one
			// reader, in order): it is served, and recorded, first.
			if f := d.serveQueued(); f != nil {
				return nil, f
			}
			if err := protocols.CheckReply(msg, reply.Msg); err != nil {
				_ = a.Host.Record("in", reply)
				f := attempt.Failf("malfunction", "%v", err)
				ap.fail(attempt.Failf("malfunction", "the agent answered %s wrongly: %v", msg.Type, err))
				return nil, f
			}
			return reply, nil
		case req := <-d.requests:
			if f := d.serve(req); f != nil {
				return nil, f
			}
		case <-ap.done:
			if halted(a) {
				// A cascade stop closes the agents while it halts the
				// attempts: the halt is the reason, and the agent is told
				// it (recorded) as when the halt is seen first.
				return nil, d.tellStopped()
			}
			f := ap.failure()
			return nil, attempt.Failf(f.Class, "%s, during %s", f.Reason, phase)
		case <-a.Halt:
			told = true
			return nil, d.tellStopped()
		case <-a.Abort:
			told = true
			f := a.Host.Failure()
			_ = ap.send(d, protocols.New(protocols.CoordStop{RunID: a.RunID, CueID: a.Cue.ID, Reason: f.Reason}))
			return nil, f
		case <-timer.C:
			var f *attempt.Failure
			if phase == "GO" {
				f = attempt.Failf("timeout", "no %s within %s (GO timeout)", orList(want), timeout)
			} else {
				f = attempt.Failf("malfunction", "no %s within %s of %s", orList(want), timeout, msg.Type)
			}
			ap.fail(attempt.Failf(f.Class, "the agent did not answer %s of cue %s in time", msg.Type, a.Cue.ID))
			return nil, f
		}
	}
}

// serve has the engine serve one of the agent's requests, with those
// queued behind it that it takes (next).
func (d *jsonlDriver) serve(req *Wire) *attempt.Failure { return d.a.Host.Serve(d, req, d.next) }

// next takes the next queued request, without waiting (nil: none).
func (d *jsonlDriver) next() *Wire {
	select {
	case m := <-d.requests:
		return m
	default:
		return nil
	}
}

// serveQueued serves the requests waiting in the attempt's queue now.
func (d *jsonlDriver) serveQueued() *attempt.Failure {
	for req := d.next(); req != nil; req = d.next() {
		if f := d.serve(req); f != nil {
			return f
		}
	}
	return nil
}

// tellStopped tells a halted attempt's agent to stop (coord.stop, recorded)
// and returns the attempt's failure.
func (d *jsonlDriver) tellStopped() *attempt.Failure {
	f := d.a.Host.Stopped()
	_ = d.ap.send(d, protocols.New(protocols.CoordStop{RunID: d.a.RunID, CueID: d.a.Cue.ID, Reason: f.Reason}))
	return f
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
