package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// QuestionPrompt is a question for the person running orch (Options.Ask).
// Complexity comes first: the person knows what a question will take before
// opening it.
type QuestionPrompt struct {
	ID         string // q1, q2, ...: what orch answer RUN QID names
	Complexity string // quick or deep
	Question   string
	Agent      string // who asks
	Cue        string // the task it asks for (a cue, or a child task CUE/1)
	Deadline   time.Time
	// Options are the answers it takes (see PickOption); none: any answer.
	Options []record.QuestionOption
}

// A question.ask bubbles up the task tree: to the nearest ancestor agent
// working now, which may answer it or ask its own parent (the
// protocols/agent library's PassUp), else to the person. Who it goes to,
// when it is due and how it closes is sched.Tasks' to decide, on the loop;
// openQuestion is what the loop keeps to carry that out.
type openQuestion struct {
	ask    protocols.Message // the asker's question.ask: the answer replies to it
	body   protocols.QuestionAsk
	fwdID  string             // the question.ask forwarded to the parent agent
	cancel context.CancelFunc // ends the terminal prompt, if there is one
	// deliver takes the answer of a question asked for an agent that does
	// not speak the cue protocol (askPerson); nil: question.answer is sent.
	deliver func(answer string)
	options []record.QuestionOption // the answers it takes; none: any
	asker   *attemptRun
	// expired, on the loop, tells a question's asker that is not an
	// attempt at work (a merge's) that it was not answered in time.
	expired func(reason string)
}

type question = sched.Question[*attemptRun]

func (r *run) questionTimeout() time.Duration {
	if d := r.plan.Cuelist.Guardrails.QuestionTimeout.D(); d > 0 {
		return d
	}
	return DefaultQuestionTimeout
}

// askRequest opens a question; the reply says where it went (fwd: the
// question.ask to send the parent agent) once it is recorded.
type askRequest struct {
	att     *attemptRun
	msg     protocols.Message
	body    protocols.QuestionAsk
	options []record.QuestionOption
	deliver func(answer string) // nil: the answer is a question.answer to msg
	reply   chan askReply
}

type askReply struct {
	q   question
	fwd protocols.Message
	err error
}

func (q askRequest) serveOn(ctx context.Context, r *run) {
	a := q.att
	qn := r.tasks.Ask(time.Now(), a.node.ref, a, r.questionTimeout())
	to := "person"
	if !qn.WithPerson() {
		to = qn.To.Agent.ID
	}
	r.emit(record.Event{Type: record.EvQuestion, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number,
		Data: record.QuestionData{ID: qn.ID, Question: q.body.Question, Complexity: q.body.Complexity, To: to, Deadline: qn.Deadline.UTC(), Options: q.options}})
	if err := r.flush(ctx); err != nil {
		r.tasks.Answer(qn.ID) // not recorded: it was never asked
		q.reply <- askReply{err: err}
		return
	}
	oq := &openQuestion{ask: q.msg, body: q.body, deliver: q.deliver, options: q.options, asker: a}
	r.openQuestions[qn.ID] = oq
	rep := askReply{q: qn}
	if qn.WithPerson() {
		r.toPerson(oq, qn, qn.Deadline)
	} else {
		p := qn.To
		rep.fwd = protocols.New(protocols.QuestionAsk{CueID: p.Cue.ID, Question: q.body.Question, Complexity: q.body.Complexity, QuestionID: qn.ID})
		oq.fwdID = rep.fwd.ID
	}
	q.reply <- rep
}

// toPersonRequest sends a question its agent could not take to the person.
type toPersonRequest struct {
	id       string
	deadline bool // the prompt shows the question's deadline
	reply    chan struct{}
}

func (q toPersonRequest) serveOn(_ context.Context, r *run) {
	if qn, ok := r.tasks.ToPerson(q.id); ok {
		var deadline time.Time
		if q.deadline {
			deadline = qn.Deadline
		}
		r.toPerson(r.openQuestions[q.id], qn, deadline)
	}
	q.reply <- struct{}{}
}

// answerRequest closes a question with an answer (from its parent agent, or
// the person at the terminal); ok is false if it was closed already.
type answerRequest struct {
	id, text, by string
	reply        chan bool
}

func (q answerRequest) serveOn(ctx context.Context, r *run) {
	if q.by == "person" && r.refused(q.id, q.text, "the terminal") {
		q.reply <- true // still open: the prompt checked the answer, so only in theory
		return
	}
	qn, ok := r.tasks.Answer(q.id)
	if ok {
		r.answered(qn, q.text, q.by)
		_ = r.flush(ctx)
	}
	q.reply <- ok
}

// ask records a question and sends it up: the asker waits for the answer
// while the run goes on with other work. It runs on the asker's goroutine.
func (r *run) ask(a *attemptRun, msg protocols.Message, b protocols.QuestionAsk) *attempt.Failure {
	return r.askQuestion(askRequest{att: a, msg: msg, body: b, options: record.NamedOptions(b.Options)})
}

// askPerson asks a question whose answer goes to deliver (see hostServices):
// one of options when there are some.
func (r *run) askPerson(a *attemptRun, b protocols.QuestionAsk, options []record.QuestionOption, deliver func(string)) *attempt.Failure {
	return r.askQuestion(askRequest{att: a, body: b, options: options, deliver: deliver})
}

func (r *run) askQuestion(req askRequest) *attempt.Failure {
	reply := make(chan askReply, 1)
	req.reply = reply
	rep, ok := call(r, req, reply)
	switch {
	case !ok:
		return attempt.Failf("stopped", "the run is over")
	case rep.err != nil:
		return attempt.Failf("internal", "recording question: %v", rep.err)
	case rep.fwd.ID == "":
		return nil // with the person
	}
	if r.forward(rep.q, rep.fwd) {
		return nil
	}
	done := make(chan struct{}, 1)
	call(r, toPersonRequest{id: rep.q.ID, deadline: true, reply: done}, done)
	return nil
}

// forward sends the question to the parent agent; false if it could not.
func (r *run) forward(q question, fwd protocols.Message) bool {
	parent := q.To
	p := parent.peer
	if p.Expect(fwd.ID, func(m *driver.Wire) { go r.fromParent(q, m) }) != nil {
		return false
	}
	if f := p.Send(fwd); f != nil {
		p.Unexpect(fwd.ID)
		return false
	}
	return true
}

// fromParent takes the parent agent's answer to a forwarded question.
func (r *run) fromParent(q question, m *driver.Wire) {
	parent := q.To
	parent.Record("in", m)
	switch b := m.Msg.Body.(type) {
	case protocols.QuestionAnswer:
		r.answer(q.ID, b.Answer, parent.Agent.ID)
		return
	case protocols.ProtocolError:
		parent.Note("%s did not take question %s (%s): it goes to the person", parent.Agent.ID, q.ID, b.Reason)
	default:
		parent.Note("%s answered question %s with %s, not question.answer: it goes to the person", parent.Agent.ID, q.ID, m.Msg.Type)
	}
	done := make(chan struct{}, 1)
	call(r, toPersonRequest{id: q.ID, reply: done}, done)
}

// answer closes a question with its answer; false if it is no longer open.
func (r *run) answer(id, text, by string) bool {
	reply := make(chan bool, 1)
	ok, _ := call(r, answerRequest{id: id, text: text, by: by, reply: reply}, reply)
	return ok
}

// The loop's side.

// toPerson puts the question to the person: a prompt at the terminal when
// there is one; in any case it stays open for orch answer RUN QID TEXT.
func (r *run) toPerson(oq *openQuestion, q question, deadline time.Time) {
	if r.opts.Ask == nil || oq == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	oq.cancel = cancel
	p := QuestionPrompt{ID: q.ID, Complexity: oq.body.Complexity, Question: r.redact.Text(oq.body.Question), Agent: q.Asker.Agent.ID,
		Cue: q.Asker.Cue.ID, Deadline: deadline, Options: oq.options}
	go func() {
		r.shown() // the question's event first
		if answer, ok := r.opts.Ask(ctx, p); ok {
			r.answer(q.ID, answer, "person")
		}
	}()
}

// closed ends what the loop keeps of a question that closed: its prompt,
// the answer its parent agent would give.
func (r *run) closed(q question) *openQuestion {
	oq := r.openQuestions[q.ID]
	delete(r.openQuestions, q.ID)
	if oq == nil {
		return &openQuestion{}
	}
	if oq.cancel != nil {
		oq.cancel()
	}
	if q.To != nil && oq.fwdID != "" {
		q.To.peer.Unexpect(oq.fwdID)
	}
	return oq
}

// answered records a question's answer and, once recorded, delivers it to
// the asker (off the loop: it writes to an agent).
func (r *run) answered(q question, text, by string) {
	oq := r.closed(q)
	a := q.Asker
	r.emit(record.Event{Type: record.EvQuestionClosed, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number, State: record.QuestionAnswered,
		Data: record.AnswerData{ID: q.ID, Answer: text, By: by}})
	if deliver := oq.deliver; deliver != nil {
		r.then(func() { go deliver(text) })
		return
	}
	text = record.Picked(oq.options, text) // the option the answer names, as the asker wrote it
	reply := protocols.Reply(oq.ask, protocols.QuestionAnswer{QuestionID: q.ID, Answer: text})
	r.then(func() { go func() { _ = a.answer(reply) }() })
}

// answerFromPerson is orch answer RUN QID TEXT, arriving through the store.
func (r *run) answerFromPerson(id, text string) {
	if r.refused(id, text, "orch answer") {
		return
	}
	q, withAgent, ok := r.tasks.PersonAnswers(id)
	switch {
	case !ok:
	case withAgent:
		a := q.Asker
		r.emit(record.Event{Type: record.EvNote, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number,
			Reason: fmt.Sprintf("orch answer %s: the question is with agent %s, which answers it (the person's answer is not used)", id, q.To.Agent.ID)})
	default:
		r.answered(q, text, "person")
	}
}

// refused says whether the person's answer to an open question with
// options names none of them (PickOption, which orch answer and the
// terminal prompt ran already): then the question stays open, and a note
// says why the answer was not taken.
func (r *run) refused(id, text, from string) bool {
	oq := r.openQuestions[id]
	if oq == nil {
		return false
	}
	_, err := record.PickOption(oq.options, text)
	if err == nil {
		return false
	}
	a := oq.asker
	r.emit(record.Event{Type: record.EvNote, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number,
		Reason: fmt.Sprintf("%s %s: %v; the question stays open", from, id, err)})
	return true
}

// expireQuestions fails the askers of the questions nobody answered in time.
func (r *run) expireQuestions(now time.Time) {
	if at := r.tasks.NextDeadline(); at.IsZero() || now.Before(at) {
		return
	}
	timeout := r.questionTimeout()
	for _, q := range r.tasks.Due(now) {
		oq := r.closed(q)
		a := q.Asker
		reason := fmt.Sprintf("question %s was not answered within %s", q.ID, timeout)
		r.emit(record.Event{Type: record.EvQuestionClosed, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number, State: record.QuestionUnanswered,
			Reason: reason, Data: record.AnswerData{ID: q.ID}})
		if oq.expired != nil {
			oq.expired(reason)
			continue
		}
		r.then(func() { a.fail(attempt.Failf("unanswered", "%s", reason)) })
	}
}

// withdrawRequest closes the questions of an attempt that ended.
type withdrawRequest struct {
	att   *attemptRun
	reply chan struct{}
}

func (q withdrawRequest) serveOn(ctx context.Context, r *run) {
	a := q.att
	if qs := r.tasks.Withdraw(a); len(qs) > 0 {
		for _, qn := range qs {
			r.closed(qn)
			r.emit(record.Event{Type: record.EvQuestionClosed, Cue: a.Cue.ID, Agent: a.Agent.ID, Attempt: a.Number, State: record.QuestionWithdrawn,
				Reason: "its asker's attempt ended", Data: record.AnswerData{ID: qn.ID}})
		}
		_ = r.flush(ctx)
	}
	q.reply <- struct{}{}
}

// withdrawQuestions closes the questions of an attempt that ended.
func (r *run) withdrawQuestions(a *attemptRun) {
	if !driver.Speaks(a.Agent) { // only a protocol agent asks
		return
	}
	reply := make(chan struct{}, 1)
	call(r, withdrawRequest{att: a, reply: reply}, reply)
}
