// Package protocols is orch's side of the cue protocol spoken by `protocol: jsonl`
// agents (docs/design.md#the-cue-protocol): the message types, their expected replies, the JSON-lines
// codec and the hub-and-spoke routing rules.
//
// On the wire every message is one JSON object on one line. The envelope fields
// come first: message_type, id (non-empty, unique per sender) and, for answers,
// in_reply_to; then the fields of the type's body. For example:
//
//	{"message_type":"coord.warning","id":"3f9a0c1b2d4e","run_id":"r1","cue_id":"CUE-100"}
//	{"message_type":"ack.warning","id":"a81c4f00e2b7","in_reply_to":"3f9a0c1b2d4e","cue_id":"CUE-100"}
//
// In Go a message is a Message: the envelope plus a Body, one struct per type
// (CoordWarning, AckWarning, TaskComplete, ...). The field names and which fields
// are required come from schemas/message.schema.json, the source of truth; a test
// keeps the structs and the schema in agreement.
//
// Decode is strict, because orch must tell a malfunctioning agent from a working
// one: one JSON object per line and nothing else, a known message_type, a
// non-empty id, no unknown or duplicate fields (names match exactly, not
// case-insensitively as encoding/json would), required fields present, every
// field of the right JSON type, enums and minimums as in the schema, and nesting
// at most MaxDepth deep. Failures are *DecodeError values whose Kind lets the
// runner classify the malfunction. Encode never produces a line that Decode
// rejects: it checks the same rules before writing.
//
// Reader and Writer move messages over an agent's stdout and stdin: Reader caps
// the length of a line without buffering more than the cap, Writer is safe for
// concurrent use. ExpectedReplies and CheckReply know which answer each request
// needs; Route and FromAgent implement the seed's hub-and-spoke routing by prefix.
//
// The package uses only the standard library and knows nothing of the runner or
// the store, so agent authors can use it too; see the agent subpackage for a
// ready-made Go agent loop.
package protocols

import "encoding/json"

// The message types, as in the message_type enum of schemas/message.schema.json.
const (
	// Cue phases: orch -> agent, and the agent's acknowledgements.
	TypeCoordWarning = "coord.warning"
	TypeAckWarning   = "ack.warning"
	TypeCoordStandby = "coord.standby"
	TypeAckStandby   = "ack.standby"
	TypeCoordGo      = "coord.go"
	TypeCoordStop    = "coord.stop"

	// Answers to coord.go.
	TypeTaskComplete = "task.complete"
	TypeTaskFailed   = "task.failed"

	// Handoff and spawn: an agent starts a child task.
	TypeTaskHandoff   = "task.handoff"
	TypeHandoffResult = "handoff.result"
	TypeTaskSpawn     = "task.spawn"
	TypeSpawnAccepted = "spawn.accepted"
	TypeTaskAnnounce  = "task.announce"

	// The run's blackboard.
	TypeBlackboardWrite = "blackboard.write"
	TypeBlackboardAck   = "blackboard.ack"
	TypeBlackboardRead  = "blackboard.read"
	TypeBlackboardValue = "blackboard.value"

	// Questions bubble up the chain of parents to the person.
	TypeQuestionAsk    = "question.ask"
	TypeQuestionAnswer = "question.answer"

	// Messages between siblings, to the person, and reports to the parent.
	TypeMessageSend     = "message.send"
	TypeMessageSent     = "message.sent"
	TypeMessageUser     = "message.user"
	TypeMessageNotice   = "message.notice"
	TypeMessageReceived = "message.received"
	TypeDeliveryFailed  = "delivery.failed"
	TypeDiscoveryReport = "discovery.report"

	// Memory across runs.
	TypeMemoryWrite   = "memory.write"
	TypeMemoryAck     = "memory.ack"
	TypeMemorySearch  = "memory.search"
	TypeMemoryResults = "memory.results"

	// Reports to the hub.
	TypeStatusUpdate       = "status.update"
	TypeStatusUsage        = "status.usage"
	TypeEscalationConflict = "escalation.conflict"
	TypeEscalationError    = "escalation.error"

	// orch's own notices to an agent.
	TypeGuardWarning  = "guard.warning"
	TypeProtocolError = "protocol.error"

	// Who else is at work in the run (docs/design.md#seeing-each-other).
	TypeAgentsList   = "agents.list"
	TypeAgentsListed = "agents.listed"

	// Broadcasts to every agent of the run in GO (docs/design.md#hub-and-spoke).
	TypeBroadcastSend   = "broadcast.send"
	TypeBroadcastSent   = "broadcast.sent"
	TypeBroadcastNotice = "broadcast.notice"

	// orch asks an agent in GO for its state (docs/design.md#hub-and-spoke, "requested
	// status updates"); an agent may also report unasked.
	TypeStatusRequest = "status.request"
	TypeStatusReport  = "status.report"

	// A parent sets how its children's notices reach it (docs/design.md#notification-mode).
	TypeNotifyMode = "notify.mode"
	TypeNotifyAck  = "notify.ack"
)

// Body is the type-specific part of a message: every field except the envelope
// (message_type, id, in_reply_to). Each message type has one struct in this
// package; their methods have value receivers, so a pointer to a body is a
// Body too (Encode accepts both, Decode returns values).
type Body interface {
	MessageType() string
}

// Message is one protocol message: the envelope and the body.
type Message struct {
	Type      string // message_type; must equal Body.MessageType()
	ID        string // id: non-empty, unique per sender
	InReplyTo string // in_reply_to: the id of the request this answers, if any
	Body      Body
}

// Task is the task an agent gets at GO, inside coord.go (docs/design.md#the-go-task). The same
// shape reaches `protocol: none` agents as JSON on stdin.
type Task struct {
	RunID          string         `json:"run_id"`
	CueID          string         `json:"cue_id"`
	AgentID        string         `json:"agent_id"`
	Attempt        int            `json:"attempt"`
	Inputs         map[string]any `json:"inputs"`                    // the cue's inputs and its dependencies' outputs
	Blackboard     map[string]any `json:"blackboard"`                // a snapshot of the run's blackboard
	Tools          []string       `json:"tools"`                     // the effective tool policy
	HandoffContext map[string]any `json:"handoff_context,omitempty"` // for a handoff child
	TaskID         string         `json:"task_id,omitempty"`         // for a handoff or spawn child
	ParentTaskID   string         `json:"parent_task_id,omitempty"`
	Depth          int            `json:"depth,omitempty"`     // handoff depth: 0 for a cue's own agent
	Workspace      string         `json:"workspace,omitempty"` // the attempt's git worktree (workspace: worktree)
	// BlackboardEntries is the snapshot again with each key's version and
	// author; Blackboard keeps the plain values for agents that read them.
	BlackboardEntries map[string]BoardEntry `json:"blackboard_entries,omitempty"`
	// Item is the item of a fan-out's task (a cue with for_each), as JSON;
	// absent for any other task.
	Item json.RawMessage `json:"item,omitempty"`
}

// taskJSON has Task's fields without its methods, so that Task.MarshalJSON
// (in encode.go) can use the default encoding without recursing.
type taskJSON Task
