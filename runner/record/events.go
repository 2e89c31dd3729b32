package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/orch-cli/orch/runner/redact"
)

// A run's log is a sequence of Events. Each type's payload is one Go type of
// the sealed set below (EventData): the runner builds it, the recorder
// encodes it once when it stores the event (and projects the typed value),
// and a reader decodes it once with DecodeEventData.

// Event types. Every change of a run is an event; the recorder applies each
// to its tables (runs, cues, attempts, messages, cooldowns) in the same
// transaction that appends it, so the event log and the state never disagree.
const (
	// EvRunStarted creates the run. Data: RunStartedData.
	EvRunStarted = "run/started"
	// EvRunState sets the run's State (and Reason); a final state sets ended_at.
	EvRunState = "run/state"
	// EvCueState sets the Cue's State and Reason. Data (optional): CueStateData.
	EvCueState = "cue/state"
	// EvAttemptStarted records attempt number Attempt of Agent at Cue before
	// anything is launched. A number is started once, but for an attempt
	// ended paused: prepared for a manual GO when its run paused, it is
	// started again under its number when the run continues, and it is the
	// one that gets the GO. Data: AttemptStartedData.
	EvAttemptStarted = "attempt/started"
	// EvAttemptEnded closes an attempt with State (completed, failed,
	// stopped, interrupted — running when its run's owner died —, or paused:
	// see EvAttemptStarted) and Reason. Data: AttemptEndedData.
	EvAttemptEnded = "attempt/ended"
	// EvMessage is a protocol message sent to or received from an agent,
	// stored before it is acted on. Data: MessageData.
	EvMessage = "message"
	// EvCooldown puts Agent on cooldown (it holds across runs). Data: CooldownData.
	EvCooldown = "agent/cooldown"
	// EvBlackboard is written by the recorder itself with each blackboard write.
	// Data: BlackboardData.
	EvBlackboard = "blackboard/updated"
	// EvBlackboardConflict is written by the recorder instead of
	// EvBlackboard for a conditional write that found its key at another
	// version: nothing was written. Data: BlackboardConflictData.
	EvBlackboardConflict = "blackboard/conflict"
	// EvManualGo records that a person said GO for Cue.
	EvManualGo = "cue/go-approved"
	// EvConflict is an arbitration decision taken at run time (a cue waits for
	// a resource, an agent or an output another cue holds). Data: ConflictData.
	EvConflict = "escalation/conflict"
	// EvNote is anything else worth seeing in the log (a malfunction, a process
	// left behind, a retry scheduled): Reason says what.
	EvNote = "note"

	// EvTaskStarted creates a child task: the receiver of a handoff or a
	// spawned agent, run as a child of the task that asked for it. Cue is the
	// child's task id — its parent's id, "/", a number (CUE-100/1, CUE-100/1/2;
	// cue ids cannot hold "/") — and Agent the child's agent. The recorder
	// creates a cue row for it (pending, with its parent); from then on its
	// states and attempts are recorded as any cue's: EvCueState,
	// EvAttemptStarted and EvAttemptEnded with Cue set to the task id.
	// Data: TaskStartedData.
	EvTaskStarted = "task/started"
	// EvQuestion records a question an agent asked (question.ask), open until
	// EvQuestionClosed. Cue, Agent, Attempt: the asker. Data: QuestionData.
	EvQuestion = "question/asked"
	// EvQuestionClosed closes a question. State: "answered", "unanswered"
	// (its timeout passed) or "withdrawn" (its asker ended first); Reason
	// says more. Data: AnswerData, always with the ID; Answer and By when
	// answered.
	EvQuestionClosed = "question/closed"
	// EvUsage records what an attempt reported it used so far (credits, cost,
	// tokens: jsonl status.usage, or a driver). Cue, Agent,
	// Attempt: the reporter. Data: UsageData; the recorder keeps the run's
	// total on the run.
	EvUsage = "usage/reported"
	// EvExhausted says a limit of the run was reached: no new GO is given and
	// the run is stopped, then fails. Data: ExhaustedData.
	EvExhausted = "resource/exhausted"
	// EvGuard says a guard acted on an agent: a message repeated loop_warn
	// times (a warning), loop_block times (the attempt fails), or a flood
	// throttled. Cue, Agent, Attempt: the agent's; Reason says what.
	EvGuard = "guard/warning"
	// EvUserMessage is something that reached the person running orch: an
	// agent's message.user, a root task's discovery.report, or the notice of a
	// message between root tasks (their parent is the person). Data:
	// UserMessageData.
	EvUserMessage = "message/user"
	// EvCueSpecs records the fingerprint of each cue's definition as it is
	// run: at the run's start, and for the cues an orch retry runs again
	// (the store keeps it in the log only). Data: CueSpecsData.
	EvCueSpecs = "run/cue_specs"
	// EvRunRetried records an orch retry: who, and which cues run again.
	// Data: RetriedData.
	EvRunRetried = "run/retried"
	// EvWorktree records the git worktree of an attempt of a workspace:
	// worktree agent: once created (its branch, the commit it starts from),
	// then, at the end of a successful attempt, with the commit its branch
	// ended at. Cue, Agent, Attempt: the attempt's. Data: WorktreeData.
	EvWorktree = "attempt/worktree"
	// EvNotice records a notice sent for the run (the cuelist's notify:, or
	// orch run --notify): State "sent" or "failed", Reason why it failed.
	// Data: NoticeData.
	EvNotice = "notice"
	// EvAgentStatus records a state an agent reported (status.report, asked
	// for by orch status --ask or sent unasked, or status.update): State is
	// the state, e.g. working or blocked. Cue, Agent, Attempt: the
	// reporter's. Data: StatusData.
	EvAgentStatus = "agent/status"
	// EvEscalationAcked records that the person acknowledged a high or
	// critical escalation (orch ack, or the page's Acknowledge): it leaves
	// the inbox and orch status's list. The escalation never blocked the
	// agent; this only says someone saw it. Data: EscalationAckedData.
	EvEscalationAcked = "escalation/acknowledged"
	// EvFanOut records a for_each cue's expansion, before any item's GO:
	// Cue is the for_each cue, Data (FanOutData) its items in order. The
	// recorder creates a cue row per item (pending; parent the cue, kind
	// "item", the item as its context): from then on an item's states and
	// attempts are recorded as any cue's, with Cue set to the item's id. A
	// later expansion of the same cue (orch retry after its list changed)
	// takes the rows of the items it names back to pending, and marks the
	// others' kind "dropped".
	EvFanOut = "cue/expanded"
)

// Question states, in EvQuestionClosed.State (an open question has none).
const (
	QuestionAnswered   = "answered"
	QuestionUnanswered = "unanswered"
	QuestionWithdrawn  = "withdrawn"
)

// Event is one entry of a run's append-only log. The recorder assigns Seq,
// contiguous per run, when it commits the event.
type Event struct {
	RunID   string    `json:"run_id"`
	Seq     int64     `json:"seq"`
	At      time.Time `json:"at"`
	Type    string    `json:"type"`
	Cue     string    `json:"cue,omitempty"`
	Agent   string    `json:"agent,omitempty"`
	Attempt int       `json:"attempt,omitempty"`
	State   string    `json:"state,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	// Data is the payload of the types that have one (see each type's
	// comment): a value (never a pointer) whose EventType is Type.
	Data EventData `json:"data,omitempty"`
}

// EventData is the payload of an event: one of the types of this package
// listed in payloads, or RawData for a payload a reader could not decode.
// Each names the type of the events that carry it (EventType), as a
// protocol message's body names its message_type. The set is sealed:
// redacted is the one place that knows every string a payload holds.
type EventData interface {
	// EventType is the type of the events that carry it ("" for RawData).
	EventType() string
	// redacted returns a copy with the secrets d knows masked.
	redacted(d *redact.Redactor) EventData
}

// payloads has one value of each payload type: adding an event kind with
// a payload is its type, its EventType and redacted methods, and a line
// here.
var payloads = []EventData{
	RunStartedData{}, CueStateData{}, AttemptStartedData{}, AttemptEndedData{}, MessageData{}, CooldownData{},
	BlackboardData{}, BlackboardConflictData{}, ConflictData{}, TaskStartedData{}, QuestionData{}, AnswerData{},
	UsageData{}, ExhaustedData{}, UserMessageData{}, CueSpecsData{}, RetriedData{}, WorktreeData{}, NoticeData{},
	StatusData{}, EscalationAckedData{}, FanOutData{}, MergeData{},
}

// payloadTypes are the payload types by the event type that carries them.
var payloadTypes = func() map[string]reflect.Type {
	m := make(map[string]reflect.Type, len(payloads))
	for _, p := range payloads {
		m[p.EventType()] = reflect.TypeOf(p)
	}
	return m
}()

// CheckEventData reports an error when data is not what an event of type
// typ carries: the recorder refuses such an event rather than log a payload
// no reader could decode. nil data is always allowed (it is omitted).
func CheckEventData(typ string, data EventData) error {
	if data == nil {
		return nil
	}
	want, known := payloadTypes[typ]
	got := reflect.TypeOf(data) // a value: a pointer to a payload is none
	switch {
	case got == want:
		return nil
	case !known:
		return fmt.Errorf("a %s event carries no data (got %s)", typ, got)
	}
	return fmt.Errorf("the data of a %s event must be a %s, not a %s", typ, want, got)
}

// Redact masks the secrets d knows in events, in place: their reasons and
// every string of their payloads.
func Redact(d *redact.Redactor, events []Event) {
	if d.None() {
		return
	}
	for i := range events {
		events[i].Reason = d.Text(events[i].Reason)
		if events[i].Data != nil {
			events[i].Data = events[i].Data.redacted(d)
		}
	}
}

// DecodeEventData decodes the stored payload of an event of type typ: the
// one decoding of every reader. Empty raw is no payload (nil). When raw
// cannot be decoded (a type this orch does not know, or a payload that does
// not fit its type) the error says why and the data returned is RawData,
// so that a reader can still show it.
func DecodeEventData(typ string, raw json.RawMessage) (EventData, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	t, ok := payloadTypes[typ]
	if !ok {
		err := fmt.Errorf("a %s event has no data of a type this orch knows", typ)
		return RawData{JSON: raw, Err: err}, err
	}
	v := reflect.New(t)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // a number in a free-form map (inputs, outputs) prints back as it was stored
	if err := dec.Decode(v.Interface()); err != nil {
		err = fmt.Errorf("decoding the data of a %s event: %w", typ, err)
		return RawData{JSON: raw, Err: err}, err
	}
	return v.Elem().Interface().(EventData), nil
}

// RawData is a payload a reader could not decode, kept as stored: it
// encodes as that JSON again, and Err says why it was not decoded.
type RawData struct {
	JSON json.RawMessage
	Err  error
}

// MarshalJSON returns the stored JSON.
func (r RawData) MarshalJSON() ([]byte, error) {
	if len(r.JSON) == 0 {
		return []byte("null"), nil
	}
	return r.JSON, nil
}

// UnmarshalJSON reads an event as Event's JSON form writes it (orch events
// --output json), decoding its data with DecodeEventData; data that cannot
// be decoded is an error.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event // the same fields, without this method
	var v struct {
		plain
		Data json.RawMessage `json:"data,omitempty"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	data, err := DecodeEventData(v.Type, v.Data)
	if err != nil {
		return err
	}
	*e = Event(v.plain)
	e.Data = data
	return nil
}
