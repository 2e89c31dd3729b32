package runner

import (
	"context"
	"errors"
	"sync"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
)

// calls are the typed requests of an attempt's agent that reach the hub
// without a jsonl message (Call: an MCP tool, issue 29), and the lock that
// serves one request at a time, whichever way it came.
type calls struct {
	serving sync.Mutex // held while the hub serves a request of the attempt (Serve, Call)
	mu      sync.Mutex
	waiting map[string]*caller // by request id: the calls whose answer comes later
}

// Call serves one typed request of the attempt's agent — the body of the
// message a jsonl agent would send (blackboard.read, blackboard.write,
// question.ask, message.send, task.handoff, task.spawn, memory.search,
// status.report...) — through the hub exactly as that message: the tool
// policy, the guards, loop detection and the events all apply, and the
// request and the answer are recorded as the attempt's messages. It returns
// the hub's answer (the message in reply to the request; a guard's warning
// is not one: it waits on), waiting for one that comes later (a question's
// answer, a handoff's result) until ctx ends or the attempt does. A request
// that takes no answer (a report, usage) returns a zero Message once served.
//
// A failure to serve the request (the recorder's) ends the attempt, as it
// does for a jsonl agent's; Call then returns it as an error.
func (a *attemptRun) Call(ctx context.Context, body protocols.Body) (protocols.Message, error) {
	msg := protocols.New(body)
	c := &caller{a: a, id: msg.ID, answers: make(chan protocols.Message, 4)}
	answered := protocols.ExpectedReplies(msg.Type) != nil
	if answered {
		a.calls.mu.Lock()
		if a.calls.waiting == nil {
			a.calls.waiting = map[string]*caller{}
		}
		a.calls.waiting[c.id] = c
		a.calls.mu.Unlock()
		defer func() {
			a.calls.mu.Lock()
			delete(a.calls.waiting, c.id)
			a.calls.mu.Unlock()
		}()
	}
	a.calls.serving.Lock()
	f := a.r.serve(a, c, driver.Encode(msg), nil)
	a.calls.serving.Unlock()
	if f != nil {
		a.fail(f)
		return protocols.Message{}, errors.New(f.Reason)
	}
	if !answered {
		return protocols.Message{}, nil
	}
	for {
		select {
		case m := <-c.answers:
			if _, warned := m.Body.(protocols.GuardWarning); warned {
				continue // said, and the request goes on
			}
			return m, nil
		case <-ctx.Done():
			return protocols.Message{}, ctx.Err()
		case <-a.ended:
			return protocols.Message{}, errors.New("the attempt ended before the request was answered")
		}
	}
}

// answer delivers a message orch sends the attempt's agent later, in reply
// to one of its requests (a question's answer, a handoff's result): to the
// Call waiting for it, or through the agent's peer.
func (a *attemptRun) answer(m protocols.Message) *attempt.Failure {
	a.calls.mu.Lock()
	c := a.calls.waiting[m.InReplyTo]
	a.calls.mu.Unlock()
	if c != nil {
		return c.Send(m)
	}
	if a.peer == nil {
		return attempt.Failf("internal", "%s takes no messages", a.Agent.ID)
	}
	return a.peer.Send(m)
}

// caller is the peer of a Call: the hub's answers to its request go back
// to the caller, recorded as the attempt's messages.
type caller struct {
	a       *attemptRun
	id      string
	answers chan protocols.Message
}

var _ driver.Peer = (*caller)(nil)

// Send records a message to the agent and hands it to the call.
func (c *caller) Send(m protocols.Message) *attempt.Failure {
	if f := c.a.Record("out", driver.Encode(m)); f != nil {
		return f
	}
	return c.Write(m)
}

// Write hands a recorded message to the call; one that answers no request
// of it (there are none: the hub answers a request through its peer) is
// dropped.
func (c *caller) Write(m protocols.Message) *attempt.Failure {
	if m.InReplyTo == c.id {
		select {
		case c.answers <- m:
		default: // more answers than a request gets: the call has its own
		}
	}
	return nil
}

// Expect refuses: a call's agent answers no message of orch's through it.
func (c *caller) Expect(string, func(*driver.Wire)) *attempt.Failure {
	return attempt.Failf("internal", "a call takes no messages that need an answer")
}

func (c *caller) Unexpect(string) {}
