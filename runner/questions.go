package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/orch-cli/orch/protocols"
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
}

// question is a question.ask waiting for its answer. It bubbles up the task
// tree: to the nearest ancestor agent working now, which may answer it or
// ask its own parent (the protocols/agent library's PassUp), else to the
// person. Open questions are in run.questions; the first answer, the
// timeout, or the asker's end closes one.
type question struct {
	id     string
	asker  *attempt
	ask    protocols.Message // the asker's question.ask: the answer replies to it
	body   protocols.QuestionAsk
	to     *attempt // the parent agent's attempt it went to; nil: the person
	fwdID  string   // the question.ask sent to that agent
	timer  *time.Timer
	cancel context.CancelFunc // ends the terminal prompt, if there is one
	// deliver takes the answer of a question asked for an agent that does
	// not speak the cue protocol (askPerson); nil: question.answer is sent.
	deliver func(answer string)
}

func (r *run) questionTimeout() time.Duration {
	if d := r.plan.Cuelist.Guardrails.QuestionTimeout.D(); d > 0 {
		return d
	}
	return DefaultQuestionTimeout
}

// ask records a question and sends it up: the asker waits for the answer
// while the run goes on with other work.
func (r *run) ask(a *attempt, msg protocols.Message, b protocols.QuestionAsk) *failure {
	return r.askQuestion(&question{asker: a, ask: msg, body: b})
}

// askPerson asks a question whose answer goes to deliver (see hostServices).
func (r *run) askPerson(a *attempt, b protocols.QuestionAsk, deliver func(string)) *failure {
	return r.askQuestion(&question{asker: a, body: b, deliver: deliver})
}

func (r *run) askQuestion(q *question) *failure {
	a, b := q.asker, q.body
	timeout := r.questionTimeout()
	q.to = r.tree.nearestWorkingAncestor(a.node)
	to := "person"
	if q.to != nil {
		to = q.to.agent.ID
	}
	r.qmu.Lock()
	r.asked++
	q.id = fmt.Sprintf("q%d", r.asked)
	r.questions[q.id] = q
	r.qmu.Unlock()
	deadline := time.Now().Add(timeout).UTC()
	err := r.publish(context.Background(), Event{RunID: r.id, At: time.Now().UTC(), Type: EvQuestion, Cue: a.cue.ID, Agent: a.agent.ID,
		Attempt: a.number, Data: QuestionData{ID: q.id, Question: b.Question, Complexity: b.Complexity, To: to, Deadline: deadline}})
	if err != nil {
		r.qmu.Lock()
		delete(r.questions, q.id)
		r.qmu.Unlock()
		return failf("internal", "recording question: %v", err)
	}
	r.qmu.Lock()
	q.timer = time.AfterFunc(timeout, func() { r.unanswered(q, timeout) })
	r.qmu.Unlock()
	if q.to != nil && r.forward(q) {
		return nil
	}
	r.toPerson(q, deadline)
	return nil
}

// forward sends the question to the parent agent; false if it could not.
func (r *run) forward(q *question) bool {
	parent := q.to
	ap := parent.proc
	fwd := protocols.New(protocols.QuestionAsk{CueID: parent.cue.ID, Question: q.body.Question, Complexity: q.body.Complexity, QuestionID: q.id})
	r.qmu.Lock()
	q.fwdID = fwd.ID
	r.qmu.Unlock()
	if ap.expect(fwd.ID, func(m *wireMessage) { go r.fromParent(q, m) }) != nil {
		return false
	}
	if f := ap.send(parent, fwd); f != nil {
		ap.unexpect(fwd.ID)
		return false
	}
	return true
}

// fromParent takes the parent agent's answer to a forwarded question.
func (r *run) fromParent(q *question, m *wireMessage) {
	parent := q.to
	parent.recordMessage("in", m.msg, m.raw)
	switch b := m.msg.Body.(type) {
	case protocols.QuestionAnswer:
		r.answer(q.id, b.Answer, parent.agent.ID)
		return
	case protocols.ProtocolError:
		parent.note("%s did not take question %s (%s): it goes to the person", parent.agent.ID, q.id, b.Reason)
	default:
		parent.note("%s answered question %s with %s, not question.answer: it goes to the person", parent.agent.ID, q.id, m.msg.Type)
	}
	r.qmu.Lock()
	q.to = nil
	r.qmu.Unlock()
	r.toPerson(q, time.Time{})
}

// toPerson puts the question to the person: a prompt at the terminal when
// there is one; in any case it stays open for orch answer RUN QID TEXT.
func (r *run) toPerson(q *question, deadline time.Time) {
	if r.opts.Ask == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.qmu.Lock()
	q.cancel = cancel
	r.qmu.Unlock()
	p := QuestionPrompt{ID: q.id, Complexity: q.body.Complexity, Question: r.redact.Text(q.body.Question), Agent: q.asker.agent.ID,
		Cue: q.asker.cue.ID, Deadline: deadline}
	go func() {
		if answer, ok := r.opts.Ask(ctx, p); ok {
			r.answer(q.id, answer, "person")
		}
	}()
}

// take removes an open question so that exactly one of its endings acts.
func (r *run) take(id string) *question {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	q := r.questions[id]
	if q == nil {
		return nil
	}
	delete(r.questions, id)
	q.timer.Stop()
	if q.cancel != nil {
		q.cancel()
	}
	if q.to != nil {
		q.to.proc.unexpect(q.fwdID)
	}
	return q
}

// answer closes a question with its answer and delivers it to the asker;
// false if it is no longer open.
func (r *run) answer(id, text, by string) bool {
	q := r.take(id)
	if q == nil {
		return false
	}
	a := q.asker
	_ = r.publish(context.Background(), Event{RunID: r.id, At: time.Now().UTC(), Type: EvQuestionClosed, Cue: a.cue.ID, Agent: a.agent.ID,
		Attempt: a.number, State: QuestionAnswered, Data: AnswerData{ID: id, Answer: text, By: by}})
	if q.deliver != nil {
		q.deliver(text)
		return true
	}
	_ = a.proc.send(a, protocols.Reply(q.ask, protocols.QuestionAnswer{QuestionID: id, Answer: text}))
	return true
}

// answerFromPerson is orch answer RUN QID TEXT, arriving through the store.
func (r *run) answerFromPerson(id, text string) {
	r.qmu.Lock()
	q := r.questions[id]
	withAgent := q != nil && q.to != nil
	r.qmu.Unlock()
	if withAgent {
		q.asker.note("orch answer %s: the question is with agent %s, which answers it (the person's answer is not used)", id, q.to.agent.ID)
		return
	}
	r.answer(id, text, "person")
}

// unanswered fails the asker of a question nobody answered in time.
func (r *run) unanswered(q *question, timeout time.Duration) {
	if r.take(q.id) == nil {
		return
	}
	a := q.asker
	reason := fmt.Sprintf("question %s was not answered within %s", q.id, timeout)
	_ = r.publish(context.Background(), Event{RunID: r.id, At: time.Now().UTC(), Type: EvQuestionClosed, Cue: a.cue.ID, Agent: a.agent.ID,
		Attempt: a.number, State: QuestionUnanswered, Reason: reason, Data: AnswerData{ID: q.id}})
	a.fail(failf("unanswered", "%s", reason))
}

// withdrawQuestions closes the questions of an attempt that ended.
func (r *run) withdrawQuestions(a *attempt) {
	r.qmu.Lock()
	var mine []string
	for id, q := range r.questions {
		if q.asker == a {
			mine = append(mine, id)
		}
	}
	r.qmu.Unlock()
	for _, id := range mine {
		if r.take(id) != nil {
			_ = r.publish(context.Background(), Event{RunID: r.id, At: time.Now().UTC(), Type: EvQuestionClosed, Cue: a.cue.ID,
				Agent: a.agent.ID, Attempt: a.number, State: QuestionWithdrawn, Reason: "its asker's attempt ended", Data: AnswerData{ID: id}})
		}
	}
}
