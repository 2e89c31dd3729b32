package temporal

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/record"
)

// What an agent's attempt on a worker asks the workflow (collaboration: the
// hub of the local engine, here the workflow's): updates that the workflow
// validates, applies, records as orch's events and answers; a query that
// reads; a signal that reports. Registering them adds nothing to a run's
// history: they only act when an agent asks, and only protocol agents,
// which runs recorded before them could not have, ask.
const (
	UpdateBBWrite = "orch.bb-write"
	QueryBBRead   = "orch.bb-read"
	QueryBBList   = "orch.bb-list"
	UpdateAsk     = "orch.ask"
	SignalReport  = "orch.report"
	SignalUsage   = "orch.usage"
)

// Asker names the attempt an agent's request comes from.
type Asker struct {
	Cue     string
	Agent   string
	Attempt int
}

// BBWrite is a blackboard.write of an agent: stored unless IfVersion says
// otherwise (record.BlackboardPut.Conflicts, the store's rule too).
type BBWrite struct {
	Asker
	Key       string
	Value     json.RawMessage
	IfVersion *int64
	MessageID string
}

// BBWritten answers a BBWrite: the key's version now, and whether it was a
// conflict (then Version and Author are the key's current ones).
type BBWritten struct {
	Version  int64
	Author   string
	Conflict bool
}

// BBValue answers orch.bb-read.
type BBValue struct {
	Found   bool
	Value   json.RawMessage
	Version int64
	Author  string
}

// Ask is a question.ask of an agent for the person (or a question an ACP
// agent's permission request makes, with its options).
type Ask struct {
	Asker
	Question   string
	Complexity string
	Options    []record.QuestionOption
}

// Asked answers an Ask once the question closed: its answer, or why it
// has none (Closed, with the failure's class when the attempt fails for
// it).
type Asked struct {
	ID     string
	Answer string
	By     string
	Closed string
	Class  string
}

// Report is an agent's status.report or status.update.
type Report struct {
	Asker
	State    string
	Progress float64
	Detail   string
}

// UsageReport is what an agent reported it used: its attempt's totals so
// far, and what they add since its last report (counted toward the run's
// limits, max_credits and max_cost_usd).
type UsageReport struct {
	Asker
	Totals, More record.Usage
}

// collab is the workflow's side of its agents' requests.
type collab struct {
	w      *wf
	asked  int
	open   map[string]*openAsk          // by question id
	wake   workflow.Channel             // a request changed what the core reads: look again
	policy time.Duration                // guardrails.question_timeout
	inbox  map[Asker][]Received         // what running attempts were sent (inbox.go)
	used   record.Usage                 // the run's, as its agents reported
	kids   children                     // handoffs' and spawns' tasks (children.go)
	status map[Asker]Report             // what attempts last reported (agents.list)
	notify notifying                    // notification modes (notifymode.go)
	mem    map[string]record.MemoryItem // the run's memory, by key (memory.go)
}

type openAsk struct {
	Ask
	answer, by string
	done       bool
	complexity string
	with       Asker // the ancestor agent's attempt it is with (bubbling.go); zero: the person
}

// collaborate registers the handlers of the agents' requests.
func (w *wf) collaborate() *collab {
	c := &collab{w: w, open: map[string]*openAsk{}, status: map[Asker]Report{}, wake: workflow.NewBufferedChannel(w.ctx, 1),
		policy: w.plan.Cuelist.Guardrails.QuestionTimeout.D()}
	if c.policy <= 0 {
		c.policy = DefaultQuestionTimeout
	}
	ctx := w.ctx
	_ = workflow.SetUpdateHandlerWithOptions(ctx, UpdateBBWrite, c.bbWrite, workflow.UpdateHandlerOptions{Validator: c.validWrite})
	_ = workflow.SetQueryHandler(ctx, QueryBBRead, c.bbRead)
	_ = workflow.SetQueryHandler(ctx, QueryBBList, c.bbList)
	_ = workflow.SetUpdateHandlerWithOptions(ctx, UpdateAsk, c.ask, workflow.UpdateHandlerOptions{Validator: c.validAsk})
	c.messages()
	c.children()
	c.person()
	c.bubbling()
	c.notifyModes()
	c.memory()
	w.sel.AddReceive(c.wake, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil) })
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalReport), func(ch workflow.ReceiveChannel, _ bool) {
		var r Report
		ch.Receive(ctx, &r)
		if c.asking(r.Asker) {
			c.status[r.Asker] = r
		}
		w.emit(record.Event{Type: record.EvAgentStatus, Cue: r.Cue, Agent: r.Agent, Attempt: r.Attempt, State: r.State,
			Data: record.StatusData{Progress: r.Progress, Detail: r.Detail}})
	})
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalUsage), func(ch workflow.ReceiveChannel, _ bool) {
		var u UsageReport
		ch.Receive(ctx, &u)
		c.used = c.used.Plus(u.More)
		w.core.AddUsage(u.More.Credits, u.More.CostUSD) // the loop checks the limits next
		w.emit(record.Event{Type: record.EvUsage, Cue: u.Cue, Agent: u.Agent, Attempt: u.Attempt, Data: record.UsageDataOf(u.Totals, c.used)})
	})
	return c
}

// DefaultQuestionTimeout is how long a question waits for its answer when
// the cuelist sets no guardrails.question_timeout (the local runner's).
const DefaultQuestionTimeout = 30 * time.Minute

// asking reports whether the attempt a request names is in flight.
func (c *collab) asking(a Asker) bool {
	if c.w.core == nil {
		return false
	}
	if c.kidAsking(a) || c.w.mergeAsking(a) { // a child (children.go); a merge's question, or its resolver (merge_wf.go)
		return true
	}
	for pos, fs := range c.w.atts {
		for _, f := range fs {
			if f != nil && f.number == a.Attempt && f.agent.ID == a.Agent && c.w.core.Cue(pos).ID == a.Cue && f.stopWhy == "" {
				return true
			}
		}
	}
	return false
}

// running refuses a request (what) of an attempt that is not in flight.
func (c *collab) running(what string, a Asker) error {
	if !c.asking(a) {
		return fmt.Errorf("%s: attempt %d of %s at cue %s is not running", what, a.Attempt, a.Agent, a.Cue)
	}
	return nil
}

func (c *collab) validWrite(in BBWrite) error {
	if in.Key == "" {
		return fmt.Errorf("blackboard.write: the key is empty")
	}
	return c.running("blackboard.write", in.Asker)
}

// bbWrite stores an agent's write, or records its conflict.
func (c *collab) bbWrite(_ workflow.Context, in BBWrite) (BBWritten, error) {
	w := c.w
	e := w.board[in.Key]
	put := record.BlackboardPut{Key: in.Key, IfVersion: in.IfVersion}
	if put.Conflicts(e.version) {
		w.emit(record.Event{Type: record.EvBlackboardConflict, Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt,
			Data: record.BlackboardConflictData{Key: in.Key, ExpectedVersion: *in.IfVersion, CurrentVersion: e.version, Author: e.author, MessageID: in.MessageID}})
		return BBWritten{Version: e.version, Author: e.author, Conflict: true}, nil
	}
	w.writeBoard(in.Key, in.Value, in.Agent, in.Cue)
	c.changed()
	e = w.board[in.Key]
	return BBWritten{Version: e.version, Author: e.author}, nil
}

// changed wakes the main loop: a write may meet a cue's conditions.
func (c *collab) changed() {
	if c.w.core != nil {
		c.w.core.Wake()
	}
	c.wake.SendAsync(struct{}{})
}

func (c *collab) bbRead(key string) (BBValue, error) {
	e, ok := c.w.board[key]
	if !ok {
		return BBValue{}, nil
	}
	return BBValue{Found: true, Value: e.value, Version: e.version, Author: e.author}, nil
}

// BBKey is a key of the blackboard without its value (orch.bb-list).
type BBKey struct {
	Key     string
	Version int64
	Author  string
}

// bbList lists the keys under prefix, sorted.
func (c *collab) bbList(prefix string) ([]BBKey, error) {
	var keys []BBKey
	for k, e := range c.w.board {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, BBKey{Key: k, Version: e.version, Author: e.author})
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Key < keys[j].Key })
	return keys, nil
}

func (c *collab) validAsk(in Ask) error {
	if in.Question == "" {
		return fmt.Errorf("question.ask: the question is empty")
	}
	return c.running("question.ask", in.Asker)
}

// ask records a question for the person and answers once it closed: orch
// answer (the orch.answer signal), the question's timeout, or its asker's
// end.
func (c *collab) ask(ctx workflow.Context, in Ask) (Asked, error) {
	w := c.w
	c.asked++
	id := fmt.Sprintf("q%d", c.asked)
	complexity := in.Complexity
	if complexity == "" {
		complexity = "quick"
	}
	deadline := workflow.Now(ctx).Add(c.policy)
	to, toAgent := "person", false
	parent, toAgent := c.questionTo(ctx, in.Asker) // bubbling.go
	if toAgent {
		to = parent.Agent
	}
	w.emit(record.Event{Type: record.EvQuestion, Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt,
		Data: record.QuestionData{ID: id, Question: in.Question, Complexity: complexity, To: to, Deadline: deadline.UTC(), Options: in.Options}})
	q := &openAsk{Ask: in, complexity: complexity}
	c.open[id] = q
	if toAgent {
		c.forward(id, q, parent)
	}
	defer delete(c.open, id)
	ok, err := workflow.AwaitWithTimeout(ctx, c.policy, func() bool { return q.done || !c.asking(in.Asker) })
	closed := func(state, reason string) {
		w.emit(record.Event{Type: record.EvQuestionClosed, Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt, State: state,
			Reason: reason, Data: record.AnswerData{ID: id}})
	}
	switch {
	case q.done:
		return Asked{ID: id, Answer: q.answer, By: q.by}, nil
	case err != nil || ok: // its asker ended (or the run is going away)
		closed(record.QuestionWithdrawn, "its asker's attempt ended")
		return Asked{ID: id, Closed: "its asker's attempt ended", Class: "stopped"}, nil
	}
	reason := fmt.Sprintf("question %s was not answered within %s", id, c.policy)
	closed(record.QuestionUnanswered, reason)
	return Asked{ID: id, Closed: reason, Class: "unanswered"}, nil
}

// answer is orch answer RUN QID TEXT: an open question takes it (one of
// its options, when it has some).
func (c *collab) answer(s AnswerSignal) {
	w := c.w
	q := c.open[s.Question]
	if q == nil || q.done {
		w.emit(record.Event{Type: record.EvNote, Reason: "orch answer " + s.Question + ": the run has no open question " + s.Question})
		return
	}
	if c.withAgent(s.Question, q) {
		return
	}
	if _, err := record.PickOption(q.Options, s.Answer); err != nil {
		w.emit(record.Event{Type: record.EvNote, Cue: q.Cue, Agent: q.Agent, Attempt: q.Attempt,
			Reason: fmt.Sprintf("orch answer %s: %v; the question stays open", s.Question, err)})
		return
	}
	by := s.By
	if by == "" {
		by = "person"
	}
	q.answer, q.by, q.done = s.Answer, by, true
	w.emit(record.Event{Type: record.EvQuestionClosed, Cue: q.Cue, Agent: q.Agent, Attempt: q.Attempt, State: record.QuestionAnswered,
		Data: record.AnswerData{ID: s.Question, Answer: s.Answer, By: by}})
}
