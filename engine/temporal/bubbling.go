package temporal

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
)

// A child's question bubbles up the task tree, as locally (runner/
// questions.go, sched.Tasks.Ask): it goes to the nearest ancestor agent at
// work that can take it (a jsonl agent in GO: the question.ask reaches it
// through its inbox), which answers it (question.answer, an orch.parent-
// answer update from its worker) or asks its own parent (the libraries'
// pass_up); when that agent cannot take it (it answers with a
// protocol.error or anything else) the question goes to the person. While
// an agent has it, the person's orch answer is not used (a note says so).
// Before changeBubbling every question went to the person.
const (
	changeBubbling     = "orch-question-bubbling"
	UpdateParentAnswer = "orch.parent-answer"
)

// ParentAnswer is how the agent a question was forwarded to took it: its
// answer, or why it did not (Refused: the question goes to the person).
type ParentAnswer struct {
	Asker           // the agent's attempt
	Question string // q1, ...
	Answer   string
	Refused  string `json:",omitempty"`
}

func (c *collab) bubbling() {
	_ = workflow.SetUpdateHandlerWithOptions(c.w.ctx, UpdateParentAnswer, c.parentAnswer, workflow.UpdateHandlerOptions{Validator: func(in ParentAnswer) error {
		return c.running("question.answer", in.Asker)
	}})
}

// questionTo is the ancestor attempt a question of asker goes to; false:
// the person (asker is a cue's own agent, no ancestor can take it, or the
// run started before changeBubbling).
func (c *collab) questionTo(ctx workflow.Context, asker Asker) (Asker, bool) {
	if c.kids.live[asker.Cue] == nil {
		return Asker{}, false
	}
	if workflow.GetVersion(ctx, changeBubbling, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return Asker{}, false
	}
	for _, a := range c.lineage(asker)[1:] {
		if ag := c.w.plan.Agents[a.Agent]; c.asking(a) && ag != nil && driver.Speaks(ag) && ag.Protocol == "jsonl" {
			return a, true
		}
	}
	return Asker{}, false
}

// forward puts question id of q to the agent of attempt to, in its inbox.
func (c *collab) forward(id string, q *openAsk, to Asker) {
	q.with = to
	c.inbox[to] = append(c.inbox[to], Received{Question: &protocols.QuestionAsk{CueID: to.Cue, Question: q.Question, Complexity: q.complexity, QuestionID: id}})
}

// parentAnswer takes the answer of the agent a question is with, or sends
// the question on to the person when it did not take it.
func (c *collab) parentAnswer(_ workflow.Context, in ParentAnswer) (struct{}, error) {
	w := c.w
	q := c.open[in.Question]
	if q == nil || q.done || q.with != in.Asker {
		return struct{}{}, nil // closed meanwhile (answered, withdrawn, timed out)
	}
	if in.Refused != "" {
		q.with = Asker{}
		w.emit(record.Event{Type: record.EvNote, Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt,
			Reason: fmt.Sprintf("%s did not take question %s (%s): it goes to the person", in.Agent, in.Question, in.Refused)})
		return struct{}{}, nil
	}
	q.answer, q.by, q.done = in.Answer, in.Agent, true // the asker's worker picks the option it names, as for the person's
	w.emit(record.Event{Type: record.EvQuestionClosed, Cue: q.Cue, Agent: q.Agent, Attempt: q.Attempt, State: record.QuestionAnswered,
		Data: record.AnswerData{ID: in.Question, Answer: in.Answer, By: in.Agent}})
	return struct{}{}, nil
}

// withAgent refuses the person's answer to a question an agent has: a note
// says so (as locally); false: the question is with the person.
func (c *collab) withAgent(id string, q *openAsk) bool {
	if q.with == (Asker{}) {
		return false
	}
	c.w.emit(record.Event{Type: record.EvNote, Cue: q.Cue, Agent: q.Agent, Attempt: q.Attempt,
		Reason: fmt.Sprintf("orch answer %s: the question is with agent %s, which answers it (the person's answer is not used)", id, q.with.Agent)})
	return true
}

// deliver gives an agent in GO what its inbox held; a question forwarded to
// it waits for its answer, which goes back to the workflow (as locally:
// anything but a question.answer sends the question to the person).
func (h *stepHost) deliver(hub hubLink, p driver.Peer, r Received) {
	msg := r.Message(hub.asker.Cue)
	if r.Question == nil {
		_ = p.Send(msg)
		return
	}
	id := r.Question.QuestionID
	back := func(answer, refused string) {
		ctx, cancel := context.WithTimeout(hub.ctx, MaxInboxWait)
		defer cancel()
		_ = hub.link.Update(ctx, UpdateParentAnswer, ParentAnswer{Asker: hub.asker, Question: id, Answer: answer, Refused: refused}, nil)
	}
	if f := p.Expect(msg.ID, func(m *driver.Wire) {
		h.Record("in", m)
		switch b := m.Msg.Body.(type) {
		case protocols.QuestionAnswer:
			go back(b.Answer, "")
		case protocols.ProtocolError:
			go back("", b.Reason)
		default:
			go back("", "it answered with "+m.Msg.Type+", not question.answer")
		}
	}); f != nil {
		back("", f.Reason)
		return
	}
	if f := p.Send(msg); f != nil {
		p.Unexpect(msg.ID)
		back("", f.Reason)
	}
}
