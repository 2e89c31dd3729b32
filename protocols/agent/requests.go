package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/orch-cli/orch/protocols"
)

// OrchError is orch's refusal of a request (protocol.error): the request was
// not acted on, for Reason.
type OrchError struct {
	Request string // the request's message type
	Reason  string
}

func (e *OrchError) Error() string { return fmt.Sprintf("orch refused %s: %s", e.Request, e.Reason) }

// LoopBlocked reports whether err is orch's loop guard refusing a request
// the agent repeated loop_block times or more: the request was not acted
// on, and the agent should try a different approach (repeating it until
// loop_fail fails the attempt as loop_detected).
func LoopBlocked(err error) bool {
	var e *OrchError
	return errors.As(err, &e) && strings.HasPrefix(e.Reason, "loop_blocked:")
}

// request sends body and waits for the answer with the request's id in its
// in_reply_to. The reader goroutine hands the answer over (deliver); the
// answer is checked with protocols.CheckReply, so a wrong answer is an error
// here rather than a surprise in the handler.
func (s *server) request(ctx context.Context, t *Task, body protocols.Body) (protocols.Message, error) {
	if err := ctx.Err(); err != nil {
		return protocols.Message{}, err
	}
	m := protocols.New(body)
	p := &pending{task: t, reply: make(chan protocols.Message, 1)}
	s.mu.Lock()
	s.pending[m.ID] = p
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, m.ID)
		s.mu.Unlock()
	}()
	if err := s.send(m); err != nil {
		return protocols.Message{}, err
	}
	var reply protocols.Message
	select {
	case reply = <-p.reply:
	case <-ctx.Done():
		return protocols.Message{}, ctx.Err()
	case <-s.inputDone:
		select { // the answer may have been the last line orch sent
		case reply = <-p.reply:
		default:
			return protocols.Message{}, fmt.Errorf("%s: %w", m.Type, ErrClosed)
		}
	}
	if e, ok := reply.Body.(protocols.ProtocolError); ok {
		return reply, &OrchError{Request: m.Type, Reason: e.Reason}
	}
	if err := protocols.CheckReply(m, reply); err != nil {
		return reply, fmt.Errorf("orch answered wrongly: %w", err)
	}
	return reply, nil
}

// notify sends a message that has no answer.
func (s *server) notify(ctx context.Context, body protocols.Body) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.send(protocols.New(body))
}

// deliver hands an answer to the request waiting for it, and reports whether
// one was. A spawned child is recorded here, in the reader goroutine, so that
// its task.announce (read later on the same goroutine) finds its parent.
func (s *server) deliver(m protocols.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending[m.InReplyTo]
	if p == nil {
		return false
	}
	delete(s.pending, m.InReplyTo) // one answer per request
	if a, ok := m.Body.(protocols.SpawnAccepted); ok {
		s.spawned[a.TaskID] = p.task
	}
	p.reply <- m // buffered: never blocks
	return true
}

// unsolicited handles what orch sends unasked: announcements, messages and
// questions go to the task they concern (the spawning task for an
// announcement, else the oldest running task); notices go to the log.
func (s *server) unsolicited(m protocols.Message) {
	s.mu.Lock()
	var t *Task
	switch b := m.Body.(type) {
	case protocols.TaskAnnounce:
		t = s.spawned[b.TaskID]
		delete(s.spawned, b.TaskID)
	case protocols.QuestionAsk:
		t = s.runningTask(b.CueID)
	case protocols.MessageReceived:
		t = s.runningTask(b.CueID)
	case protocols.BroadcastNotice:
		t = s.runningTask(b.CueID)
	case protocols.StatusRequest:
		t = s.runningTask(b.CueID)
	case protocols.MessageNotice:
		t = s.runningTask(b.CueID)
	case protocols.BlackboardChanged:
		t = s.runningTask(b.CueID)
	}
	if t == nil && len(s.running) > 0 {
		t = s.running[0]
	}
	s.mu.Unlock()

	switch b := m.Body.(type) {
	case protocols.TaskAnnounce:
		if t != nil {
			offer(s, t.announcements, b, m.Type)
			return
		}
	case protocols.MessageReceived:
		if t != nil {
			offer(s, t.messages, b, m.Type)
			return
		}
	case protocols.BroadcastNotice:
		if t != nil {
			offer(s, t.broadcasts, b, m.Type)
			return
		}
	case protocols.StatusRequest: // answered here, from what the handler last reported
		if t != nil {
			st := t.lastStatus()
			st.CueID = t.CueID
			_ = s.send(protocols.Reply(m, st))
			return
		}
	case protocols.QuestionAsk:
		if t != nil {
			offer(s, t.questions, &Question{QuestionAsk: b, msg: m, t: t}, m.Type)
			return
		}
	case protocols.BlackboardChanged:
		if t != nil {
			offer(s, t.changes, b, m.Type)
			return
		}
	case protocols.GuardWarning:
		s.logf("orch guard warning: %s (count %d)", b.Reason, b.Count)
		return
	case protocols.ProtocolError:
		s.logf("orch protocol error (in reply to %q): %s", m.InReplyTo, b.Reason)
		return
	case protocols.MessageNotice:
		s.logf("notice: %s sent %s to %s", b.From, b.Kind, b.To)
		if t != nil {
			offer(s, t.notices, b, m.Type)
		}
		return
	}
	if t == nil {
		s.logf("dropping %s %s: no task is running", m.Type, m.ID)
		return
	}
	s.logf("ignoring unexpected %s %s", m.Type, m.ID)
}

// runningTask is the running task for cue (nil if none or cue is empty).
// s.mu is held.
func (s *server) runningTask(cue string) *Task {
	if cue == "" {
		return nil
	}
	for _, t := range s.running {
		if t.CueID == cue {
			return t
		}
	}
	return nil
}

// offer queues v for the handler without ever blocking the reader goroutine:
// a handler that does not read its channel must not stop coord.stop or the
// answers to other requests from being read.
func offer[T any](s *server, ch chan T, v T, typ string) {
	select {
	case ch <- v:
	default:
		s.logf("dropping %s: %d are already waiting for the handler", typ, cap(ch))
	}
}
