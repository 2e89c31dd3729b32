package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/orch-cli/orch/protocols"
)

// Task is one cue's work as the agent sees it: the GO task's fields (RunID,
// CueID, AgentID, Attempt, Inputs, Blackboard, Tools, HandoffContext, and
// TaskID, ParentTaskID, Depth: where it stands in the run's task tree, ...)
// and the calls it may make on orch. Its methods are safe for concurrent use.
type Task struct {
	protocols.Task
	// Warning is the coord.warning an OnWarning hook prepares for (its
	// cue_group, estimated_go_time, preparation_required); Standby the
	// coord.standby an OnStandby hook confirms (its ready_check). Nil in
	// the handler of a GO.
	Warning *protocols.CoordWarning
	Standby *protocols.CoordStandby

	s             *server
	announcements chan Announce
	messages      chan Received
	notices       chan Notice
	questions     chan *Question
	broadcasts    chan Broadcast

	statusMu sync.Mutex
	status   protocols.StatusReport // what ReportStatus last said, for status.request
	changes  chan Changed
}

// Notice tells this task of a message between others (message.notice):
// From, To, Kind (message.send, message.user, discovery.report, or summary:
// the notices held for a child in summary mode, delivered when it ends),
// Body. It is one its child sent, or one routed through it (Routed) as the
// nearest common ancestor of sender and recipient; a private message's
// notice has no Body.
type Notice = protocols.MessageNotice

// Broadcast is a broadcast from another agent of the run (broadcast.notice): From, Body.
type Broadcast = protocols.BroadcastNotice

// Agent is one task in GO, as agents.list tells: ID (the agent), TaskID,
// CueID, State, Progress, Provides, AcceptsHandoff.
type Agent = protocols.ListedAgent

// Announce says a spawned child task ended (task.announce): its TaskID,
// Agent, Status (completed, failed or stopped), Outputs and Reason.
type Announce = protocols.TaskAnnounce

// Received is a message from a sibling agent (message.received): From, Body.
type Received = protocols.MessageReceived

// HandoffResult is the outcome of a handoff: Status (completed, failed or
// refused), Outputs, Reason.
type HandoffResult = protocols.HandoffResult

// inbox is how many unasked messages of each kind wait for the handler to
// read them; beyond that they are dropped, with a note in the log.
const inbox = 256

func (s *server) newTask(t protocols.Task) *Task {
	return &Task{
		Task: t, s: s,
		announcements: make(chan Announce, inbox),
		messages:      make(chan Received, inbox),
		notices:       make(chan Notice, inbox),
		questions:     make(chan *Question, inbox),
		broadcasts:    make(chan Broadcast, inbox),
		changes:       make(chan Changed, inbox),
	}
}

// Input returns the input key as a string: the task's inputs first (for a
// child task they are inherited from the task that started it, with its
// own spawn inputs or handoff context on top), then its handoff context. A string is returned as it is, a
// number or a boolean as written in JSON, anything else as JSON; a missing
// key gives "".
func (t *Task) Input(key string) string {
	v, ok := t.Inputs[key]
	if !ok {
		if v, ok = t.HandoffContext[key]; !ok {
			return ""
		}
	}
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ItemInto decodes the task's fan-out item (a cue with for_each: the item
// this task is for) into v, as encoding/json does; false when the task is
// not a fan-out's item.
func (t *Task) ItemInto(v any) (bool, error) {
	if t.Item == nil {
		return false, nil
	}
	return true, json.Unmarshal(t.Item, v)
}

// Logf writes a line to the agent's log (stderr), never to stdout, which
// carries only protocol messages.
func (t *Task) Logf(format string, args ...any) {
	who := t.AgentID
	if who == "" {
		who = "agent"
	}
	t.s.logMu.Lock()
	defer t.s.logMu.Unlock()
	fmt.Fprintf(t.s.cfg.log, "%s %s: %s\n", who, t.CueID, fmt.Sprintf(format, args...))
}

// Announcements delivers task.announce for the children this task spawned.
// The channel is never closed: select on it together with ctx.Done().
func (t *Task) Announcements() <-chan Announce { return t.announcements }

// Messages delivers messages sent to this agent by other tasks of the run.
func (t *Task) Messages() <-chan Received { return t.messages }

// Notices delivers the notices of messages between other tasks that this
// task oversees (from its children, as notify.mode says, or routed through
// it); they also go to the log. Unread ones beyond the inbox are dropped.
func (t *Task) Notices() <-chan Notice { return t.notices }

// Questions delivers questions from this task's children, which it may answer
// or pass up to its own parent.
func (t *Task) Questions() <-chan *Question { return t.questions }

// BlackboardWrite sets key on the run's blackboard and returns its new version.
func (t *Task) BlackboardWrite(ctx context.Context, key string, value any) (version int64, err error) {
	r, err := t.s.request(ctx, t, protocols.BlackboardWrite{CueID: t.CueID, Key: key, Value: value})
	if err != nil {
		return 0, err
	}
	if c, ok := r.Body.(protocols.BlackboardConflict); ok { // not for an unconditional write, but never a panic
		return 0, &ConflictError{Key: c.Key, CurrentVersion: c.CurrentVersion, Author: c.Author}
	}
	return r.Body.(protocols.BlackboardAck).Version, nil
}

// BlackboardRead reads key from the run's blackboard; found is false if it is not set.
func (t *Task) BlackboardRead(ctx context.Context, key string) (value any, found bool, version int64, author string, err error) {
	r, err := t.s.request(ctx, t, protocols.BlackboardRead{CueID: t.CueID, Key: key})
	if err != nil {
		return nil, false, 0, "", err
	}
	b := r.Body.(protocols.BlackboardValue)
	return b.Value, b.Found, b.Version, b.Author, nil
}

// Ask asks a question that bubbles up to the parent agent, then to the person
// running orch, and waits for the answer. complexity is "quick" or "deep"
// ("" means quick); it is shown before anyone opens the question.
func (t *Task) Ask(ctx context.Context, question, complexity string) (answer string, err error) {
	if complexity == "" {
		complexity = "quick"
	}
	r, err := t.s.request(ctx, t, protocols.QuestionAsk{CueID: t.CueID, Question: question, Complexity: complexity})
	if err != nil {
		return "", err
	}
	return r.Body.(protocols.QuestionAnswer).Answer, nil
}

// Handoff hands work to another agent and waits for its result. A child that
// failed or refused is a result, not an error: check Status.
func (t *Task) Handoff(ctx context.Context, toAgent, taskID string, handoffContext map[string]any) (HandoffResult, error) {
	r, err := t.s.request(ctx, t, protocols.TaskHandoff{CueID: t.CueID, FromAgent: t.AgentID, ToAgent: toAgent, TaskID: taskID, HandoffContext: handoffContext})
	if err != nil {
		return HandoffResult{}, err
	}
	return r.Body.(protocols.HandoffResult), nil
}

// Spawn starts a child task without waiting for it and returns its task id;
// its outcome arrives later on Announcements.
func (t *Task) Spawn(ctx context.Context, agent string, inputs map[string]any) (taskID string, err error) {
	r, err := t.s.request(ctx, t, protocols.TaskSpawn{CueID: t.CueID, Agent: agent, Inputs: inputs})
	if err != nil {
		return "", err
	}
	return r.Body.(protocols.SpawnAccepted).TaskID, nil
}

// Send sends body (any JSON value) to another task of the run, by agent id
// or task id: a sibling directly, any other task through the nearest common
// ancestor of the two, which is told. If orch could not deliver it (the
// recipient ended, has not started, or is unknown), the error wraps
// ErrNotDelivered and says why.
func (t *Task) Send(ctx context.Context, to string, body any) error {
	return t.send(ctx, protocols.MessageSend{CueID: t.CueID, To: to, Body: body})
}

// SendPrivate is Send, except that only the recipient sees body: those
// told of the message get a notice without it.
func (t *Task) SendPrivate(ctx context.Context, to string, body any) error {
	return t.send(ctx, protocols.MessageSend{CueID: t.CueID, To: to, Body: body, Private: true})
}

func (t *Task) send(ctx context.Context, m protocols.MessageSend) error {
	to := m.To
	r, err := t.s.request(ctx, t, m)
	if err != nil {
		return err
	}
	if f, ok := r.Body.(protocols.DeliveryFailed); ok {
		return fmt.Errorf("message to %s %w: %s", to, ErrNotDelivered, f.Reason)
	}
	return nil
}

// User sends body to the person running orch (the parent is told). It does
// not wait: there is no answer.
func (t *Task) User(ctx context.Context, body any) error {
	return t.s.notify(ctx, protocols.MessageUser{CueID: t.CueID, Body: body})
}

// Discovery reports something noticed, for the parent, without interrupting it.
func (t *Task) Discovery(ctx context.Context, summary string) error {
	return t.s.notify(ctx, protocols.DiscoveryReport{CueID: t.CueID, Summary: summary})
}

// Usage reports the credits this attempt has used so far (they count against
// the cuelist's max_credits).
func (t *Task) Usage(ctx context.Context, credits float64) error {
	return t.s.notify(ctx, protocols.StatusUsage{CueID: t.CueID, Credits: credits})
}

// ReportUsage reports what this attempt has used so far: its cost (US
// dollars), tokens and credits, each a total. Cost counts against the
// cuelist's max_cost_usd, credits against max_credits.
func (t *Task) ReportUsage(ctx context.Context, u protocols.StatusUsage) error {
	u.CueID = t.CueID
	return t.s.notify(ctx, u)
}

// Status reports a change of state ("blocked", "waiting for db", ...). Send
// changes only: orch wants no heartbeats.
func (t *Task) Status(ctx context.Context, state, detail string) error {
	return t.s.notify(ctx, protocols.StatusUpdate{CueID: t.CueID, State: state, Detail: detail})
}

// Escalate reports an error to the hub without failing the task.
func (t *Task) Escalate(ctx context.Context, message string, detail any) error {
	return t.s.notify(ctx, protocols.EscalationError{CueID: t.CueID, Error: message, Detail: detail})
}

// MemoryWrite keeps text under key across runs, with tags for searching.
func (t *Task) MemoryWrite(ctx context.Context, key, text string, tags []string) error {
	_, err := t.s.request(ctx, t, protocols.MemoryWrite{CueID: t.CueID, Key: key, Text: text, Tags: tags})
	return err
}

// MemorySearch searches what agents kept across runs (full-text).
func (t *Task) MemorySearch(ctx context.Context, query string) ([]map[string]any, error) {
	r, err := t.s.request(ctx, t, protocols.MemorySearch{CueID: t.CueID, Query: query})
	if err != nil {
		return nil, err
	}
	return r.Body.(protocols.MemoryResults).Items, nil
}

// Broadcasts delivers what other agents of the run broadcast.
func (t *Task) Broadcasts() <-chan Broadcast { return t.broadcasts }

// ListAgents lists the run's tasks in GO, this one included (agents.list).
// orch refuses it where there is no other agent to see (a single-agent
// cuelist): the error is an *OrchError that says so.
func (t *Task) ListAgents(ctx context.Context) ([]Agent, error) {
	r, err := t.s.request(ctx, t, protocols.AgentsList{CueID: t.CueID})
	if err != nil {
		return nil, err
	}
	return r.Body.(protocols.AgentsListed).Agents, nil
}

// Broadcast sends body (any JSON value) to every other agent of the run in
// GO and returns the task ids it reached; the person sees it too.
func (t *Task) Broadcast(ctx context.Context, body any) (recipients []string, err error) {
	r, err := t.s.request(ctx, t, protocols.BroadcastSend{CueID: t.CueID, Body: body})
	if err != nil {
		return nil, err
	}
	return r.Body.(protocols.BroadcastSent).Recipients, nil
}

// ReportStatus tells orch this task's state ("working", "blocked", ...),
// its progress (0..1, or a percent; 0: not known) and a detail; orch shows
// it in orch status and its live display. The library answers orch's
// status.request with what was last reported here ("working" if nothing).
func (t *Task) ReportStatus(ctx context.Context, state string, progress float64, detail string) error {
	st := protocols.StatusReport{CueID: t.CueID, State: state, Progress: progress, Detail: detail}
	t.statusMu.Lock()
	t.status = st
	t.statusMu.Unlock()
	return t.s.notify(ctx, st)
}

func (t *Task) lastStatus() protocols.StatusReport {
	t.statusMu.Lock()
	defer t.statusMu.Unlock()
	if t.status.State == "" {
		return protocols.StatusReport{State: "working"}
	}
	return t.status
}

// EscalateWithSeverity reports an error to the hub with a severity (low,
// medium, high or critical): the person sees it at once; high and critical
// ring the bell and send the notify: block's needed notice. The task goes on.
func (t *Task) EscalateWithSeverity(ctx context.Context, severity, message string, detail any) error {
	return t.s.notify(ctx, protocols.EscalationError{CueID: t.CueID, Error: message, Detail: detail, Severity: severity})
}

// SetNotifyMode sets how this task's children's messages and discoveries
// reach it: "immediate" (each at once, the default), "summary" (collected,
// delivered as one notice when the child ends) or "silent". The person may
// override it (orch notify-mode).
func (t *Task) SetNotifyMode(ctx context.Context, mode string) error {
	_, err := t.s.request(ctx, t, protocols.NotifyMode{CueID: t.CueID, Mode: mode})
	return err
}

// Question is a question from a child task, passed to its parent.
type Question struct {
	protocols.QuestionAsk // Question, Complexity, QuestionID

	msg protocols.Message
	t   *Task
}

// Answer answers the child's question.
func (q *Question) Answer(ctx context.Context, answer string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return q.t.s.send(protocols.Reply(q.msg, protocols.QuestionAnswer{QuestionID: q.QuestionID, Answer: answer}))
}

// PassUp asks the question of this task's own parent (or the person), waits,
// and gives the answer to the child.
func (q *Question) PassUp(ctx context.Context) error {
	answer, err := q.t.Ask(ctx, q.Question, q.Complexity)
	if err != nil {
		return err
	}
	return q.Answer(ctx, answer)
}
