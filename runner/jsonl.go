package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/orch-cli/orch/protocols"
)

// jsonlDriver speaks the cue protocol to a protocol: jsonl agent over its
// stdin and stdout (stderr is its log). The process starts at WARNING and
// serves this one attempt; every message either way is recorded before it
// is acted on.
type jsonlDriver struct {
	p      *proc
	w      *protocols.Writer
	in     chan inbound
	stdout *io.PipeWriter
	lines  int // lines received, for messages that point at one
}

// inbound is one line from the agent: a message, or why it is not one.
type inbound struct {
	msg protocols.Message
	raw []byte
	err error // a *protocols.DecodeError, or io.EOF when stdout closed
}

func (d *jsonlDriver) warning(a *attempt) *failure {
	pr, pw := io.Pipe()
	d.stdout = pw
	errw := a.logWriter("stderr")
	p, err := startProc(procSpec{argv: a.agent.Command, shell: a.agent.Run, dir: a.dir(), env: a.env(nil),
		token: a.token, stdout: pw, stderr: errw}, a.r.grace)
	if err != nil {
		return failf("start", "%v", err)
	}
	d.p = p
	d.w = protocols.NewWriter(p.stdin)
	d.in = make(chan inbound, 16)
	go d.read(pr)
	go func() { <-p.done; errw.flush(); pw.Close() }() // EOF for the reader once the process is gone
	msg := protocols.New(protocols.CoordWarning{RunID: a.r.id, CueID: a.cue.cue.ID, TargetAgents: a.cue.cue.Agents, Attempt: a.number})
	_, f := d.exchange(a, msg, a.ackTimeout(), "WARNING")
	return f
}

func (d *jsonlDriver) standby(a *attempt) *failure {
	msg := protocols.New(protocols.CoordStandby{RunID: a.r.id, CueID: a.cue.cue.ID, TargetAgents: a.cue.cue.Agents})
	_, f := d.exchange(a, msg, a.standbyTimeout(), "STANDBY")
	return f
}

func (d *jsonlDriver) work(a *attempt, t *Task) (map[string]any, *failure) {
	msg := protocols.New(protocols.CoordGo{RunID: a.r.id, CueID: a.cue.cue.ID, TargetAgents: a.cue.cue.Agents, Task: protocolTask(t)})
	reply, f := d.exchange(a, msg, a.goTimeout(), "GO")
	if f != nil {
		return nil, f
	}
	switch b := body(reply).(type) {
	case protocols.TaskComplete:
		if b.Outputs == nil {
			b.Outputs = map[string]any{}
		}
		return b.Outputs, nil
	case protocols.TaskFailed:
		f := failf("failed", "the agent failed: %s", b.Error)
		f.retry = b.Retriable
		return nil, f
	}
	return nil, failf("malfunction", "unexpected %s in reply to coord.go", reply.Type)
}

// read turns the agent's stdout into messages for the driver.
func (d *jsonlDriver) read(r io.Reader) {
	rd := protocols.NewReader(r, MaxLine)
	for {
		msg, raw, err := rd.Next()
		var de *protocols.DecodeError
		if err != nil && !errors.As(err, &de) {
			d.in <- inbound{err: io.EOF}
			_, _ = io.Copy(io.Discard, r) // never block the agent on a full pipe
			return
		}
		d.in <- inbound{msg: msg, raw: append([]byte(nil), raw...), err: err}
	}
}

// exchange sends msg and waits for its reply within timeout, serving the
// agent's requests meanwhile. A wrong reply, a line that is not a message,
// an early exit or silence is a classified failure.
func (d *jsonlDriver) exchange(a *attempt, msg protocols.Message, timeout time.Duration, phase string) (protocols.Message, *failure) {
	if f := d.send(a, msg); f != nil {
		return protocols.Message{}, f
	}
	want := protocols.ExpectedReplies(msg.Type)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case <-a.halt:
			d.stopAgent(a)
			return protocols.Message{}, a.stopped()
		case <-timer.C:
			class := "malfunction"
			if phase == "GO" {
				class = "timeout"
				return protocols.Message{}, failf(class, "no %s within %s (GO timeout)", orList(want), timeout)
			}
			return protocols.Message{}, failf(class, "no %s within %s of %s", orList(want), timeout, msg.Type)
		case in := <-d.in:
			d.lines++
			if in.err == io.EOF {
				<-d.p.done
				return protocols.Message{}, exitFailure(d.p.exit(), fmt.Sprintf("during %s, before answering %s", phase, msg.Type))
			}
			if in.err != nil {
				a.note("line %d from the agent is not a protocol message: %v", d.lines, in.err)
				return protocols.Message{}, failf("malfunction", "line %d is not a protocol message: %v", d.lines, in.err)
			}
			d.record(a, "in", in.msg, in.raw)
			if in.msg.InReplyTo == msg.ID || isReplyType(in.msg.Type, want) {
				if err := protocols.CheckReply(msg, in.msg); err != nil {
					return protocols.Message{}, failf("malfunction", "%v", err)
				}
				return in.msg, nil
			}
			if f := a.r.serve(a, d, in.msg, phase); f != nil {
				return protocols.Message{}, f
			}
		}
	}
}

// isReplyType reports whether t answers something: a reply that does not
// point at our message is still a reply, and a malfunction.
func isReplyType(t string, want []string) bool {
	for _, w := range want {
		if t == w {
			return true
		}
	}
	switch t {
	case protocols.TypeAckWarning, protocols.TypeAckStandby, protocols.TypeTaskComplete, protocols.TypeTaskFailed:
		return true
	}
	return false
}

// send records a message to the agent, then writes it.
func (d *jsonlDriver) send(a *attempt, msg protocols.Message) *failure {
	raw, err := protocols.Encode(msg)
	if err != nil {
		return failf("internal", "encoding %s: %v", msg.Type, err)
	}
	d.record(a, "out", msg, raw)
	if err := d.w.Send(msg); err != nil {
		select {
		case <-d.p.done:
			return exitFailure(d.p.exit(), "before it could be sent "+msg.Type)
		case <-time.After(a.r.grace):
			return failf("malfunction", "cannot write %s to the agent: %v", msg.Type, err)
		}
	}
	return nil
}

func (d *jsonlDriver) record(a *attempt, dir string, msg protocols.Message, raw []byte) {
	data := MessageData{Direction: dir, Type: msg.Type, ID: msg.ID, InReplyTo: msg.InReplyTo, Body: json.RawMessage(a.r.redact.text(string(trimNewline(raw))))}
	a.r.publish(context.Background(), Event{RunID: a.r.id, At: time.Now().UTC(), Type: EvMessage, Cue: a.cue.cue.ID,
		Agent: a.agent.ID, Attempt: a.number, Data: mustJSON(data)})
}

// stopAgent tells the agent to stop (coord.stop) and gives it the grace
// period before its process group is killed by close.
func (d *jsonlDriver) stopAgent(a *attempt) {
	if d.p == nil {
		return
	}
	msg := protocols.New(protocols.CoordStop{RunID: a.r.id, CueID: a.cue.cue.ID, Reason: a.why})
	_ = d.send(a, msg)
}

func (d *jsonlDriver) close(a *attempt) (int, *int) {
	if d.p == nil {
		return 0, nil
	}
	_ = d.p.stdin.Close() // EOF: a well-behaved agent exits
	select {
	case <-d.p.done:
	case <-time.After(a.r.grace):
		d.p.terminate(a.r.grace)
	}
	go func() { // drain what is left so the reader ends
		for range d.in {
		}
	}()
	a.sweep(d.p, "the agent")
	e := d.p.exit()
	if e.signaled {
		return d.p.pid, nil
	}
	return d.p.pid, &e.code
}

// exitFailure classifies a process that ended when it should not have.
func exitFailure(e exitInfo, when string) *failure {
	if e.signaled {
		return failf("signal", "the agent was %s %s", e, when)
	}
	return failf(fmt.Sprintf("exit:%d", e.code), "the agent %s %s", e, when)
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

// body returns a message's body as a value (Decode may hold a pointer).
func body(m protocols.Message) protocols.Body {
	switch b := m.Body.(type) {
	case *protocols.TaskComplete:
		return *b
	case *protocols.TaskFailed:
		return *b
	case *protocols.BlackboardWrite:
		return *b
	case *protocols.BlackboardRead:
		return *b
	}
	return m.Body
}

func protocolTask(t *Task) protocols.Task {
	return protocols.Task{RunID: t.RunID, CueID: t.CueID, AgentID: t.AgentID, Attempt: t.Attempt, Inputs: t.Inputs,
		Blackboard: t.Blackboard, Tools: t.Tools, HandoffContext: t.HandoffContext}
}
