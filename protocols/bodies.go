package protocols

// The bodies, one struct per message type, in the order of the schema.
//
// Tags: `json` gives the wire name; a field is omitempty exactly when the schema
// does not require it, except for a few optional objects that orch always sends
// (a non-omitempty map or slice is written as {} or [] when nil, never null).
// `protocol` lists what Decode and Encode check beyond the JSON type:
// required (the field must be present), nonempty (a string of at least one
// character), min=N (a number of at least N) and enum=a|b|c.

// CoordWarning alerts agents that a cue is coming; answer AckWarning.
type CoordWarning struct {
	RunID               string   `json:"run_id,omitempty"`
	CueID               string   `json:"cue_id" protocol:"required"`
	CueGroup            string   `json:"cue_group,omitempty"`
	TargetAgents        []string `json:"target_agents,omitempty"`
	EstimatedGoTime     string   `json:"estimated_go_time,omitempty"`
	PreparationRequired []string `json:"preparation_required,omitempty"`
	Attempt             int      `json:"attempt,omitempty" protocol:"min=1"`
}

// CoordStandby asks agents to confirm they are ready; answer AckStandby.
type CoordStandby struct {
	RunID        string   `json:"run_id,omitempty"`
	CueID        string   `json:"cue_id" protocol:"required"`
	TargetAgents []string `json:"target_agents,omitempty"`
	ReadyCheck   []string `json:"ready_check,omitempty"`
}

// CoordGo says: execute now. Answer TaskComplete or TaskFailed.
type CoordGo struct {
	RunID        string   `json:"run_id,omitempty"`
	CueID        string   `json:"cue_id" protocol:"required"`
	TargetAgents []string `json:"target_agents,omitempty"`
	Task         Task     `json:"task"`
}

// CoordStop says the run is being stopped; the agent should end.
type CoordStop struct {
	RunID  string `json:"run_id,omitempty"`
	CueID  string `json:"cue_id,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// AckWarning answers CoordWarning.
type AckWarning struct {
	CueID string `json:"cue_id,omitempty"`
}

// AckStandby answers CoordStandby: the agent is ready for GO.
type AckStandby struct {
	CueID string `json:"cue_id,omitempty"`
}

// TaskComplete answers CoordGo: success. Outputs is always written ({} if nil).
type TaskComplete struct {
	CueID   string         `json:"cue_id,omitempty"`
	Outputs map[string]any `json:"outputs"`
}

// TaskFailed answers CoordGo: failure. Retriable asks orch to retry the attempt.
type TaskFailed struct {
	CueID     string `json:"cue_id,omitempty"`
	Error     string `json:"error" protocol:"required"`
	Retriable bool   `json:"retriable,omitempty"`
}

// TaskHandoff hands work to another agent (a handoff spec); answer HandoffResult.
type TaskHandoff struct {
	CueID          string         `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	FromAgent      string         `json:"from_agent,omitempty"`
	ToAgent        string         `json:"to_agent" protocol:"required"`
	TaskID         string         `json:"task_id" protocol:"required"`
	HandoffContext map[string]any `json:"handoff_context" protocol:"required"`
}

// HandoffResult is the outcome of a handoff.
type HandoffResult struct {
	TaskID  string         `json:"task_id,omitempty"`
	Status  string         `json:"status" protocol:"required,enum=completed|failed|refused"`
	Outputs map[string]any `json:"outputs,omitempty"`
	Reason  string         `json:"reason,omitempty"`
}

// TaskSpawn starts a child task without waiting; answer SpawnAccepted. When the
// child ends, orch sends TaskAnnounce.
type TaskSpawn struct {
	CueID  string         `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Agent  string         `json:"agent" protocol:"required"`
	Inputs map[string]any `json:"inputs,omitempty"`
}

// SpawnAccepted answers TaskSpawn with the child's task id.
type SpawnAccepted struct {
	TaskID string `json:"task_id" protocol:"required"`
}

// TaskAnnounce tells a parent, unasked, that a spawned child ended.
type TaskAnnounce struct {
	TaskID  string         `json:"task_id" protocol:"required"`
	Agent   string         `json:"agent,omitempty"`
	Status  string         `json:"status" protocol:"required,enum=completed|failed|stopped"`
	Outputs map[string]any `json:"outputs,omitempty"`
	Reason  string         `json:"reason,omitempty"`
}

// BlackboardWrite writes a key on the run's blackboard; answer BlackboardAck
// (or BlackboardConflict for a write with ExpectedVersion).
// Value may be any JSON value, null included.
type BlackboardWrite struct {
	CueID string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Key   string `json:"key" protocol:"required"`
	Value any    `json:"value" protocol:"required"`
	// ExpectedVersion, when set, makes the write conditional: it is stored
	// only if the key is at that version (0: the key must not exist yet),
	// else the answer is BlackboardConflict and nothing is written.
	ExpectedVersion *int64 `json:"expected_version,omitempty" protocol:"min=0"`
}

// BlackboardAck answers BlackboardWrite with the key's new version.
type BlackboardAck struct {
	Key     string `json:"key" protocol:"required"`
	Version int64  `json:"version" protocol:"required"`
}

// BlackboardRead reads a key; answer BlackboardValue.
type BlackboardRead struct {
	CueID string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Key   string `json:"key" protocol:"required"`
}

// BlackboardValue answers BlackboardRead. Value, Version and Author are set
// only when Found.
type BlackboardValue struct {
	Key     string `json:"key" protocol:"required"`
	Found   bool   `json:"found" protocol:"required"`
	Value   any    `json:"value,omitempty"`
	Version int64  `json:"version,omitempty"`
	Author  string `json:"author,omitempty"`
}

// QuestionAsk is a question that bubbles up to the parent, then to the person;
// answer QuestionAnswer. Complexity is shown before anyone opens the question.
type QuestionAsk struct {
	CueID      string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Question   string `json:"question" protocol:"required,nonempty"`
	Complexity string `json:"complexity" protocol:"required,enum=quick|deep"`
	QuestionID string `json:"question_id,omitempty"`
	// Options are the answers to choose from (none: any answer): the
	// person's answer must name one (by number or text).
	Options []string `json:"options,omitempty"`
}

// QuestionAnswer answers QuestionAsk.
type QuestionAnswer struct {
	QuestionID string `json:"question_id,omitempty"`
	Answer     string `json:"answer" protocol:"required"`
}

// MessageSend sends Body to another task of the run, by agent id or task id:
// a sibling directly, any other task through their nearest common ancestor,
// which gets a MessageNotice (without the body when Private). Answer
// MessageSent or DeliveryFailed.
type MessageSend struct {
	CueID   string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	To      string `json:"to" protocol:"required"`
	Body    any    `json:"body" protocol:"required"`
	Private bool   `json:"private,omitempty"` // only the recipient sees the body
}

// MessageSent answers MessageSend: delivered.
type MessageSent struct {
	To string `json:"to,omitempty"`
}

// MessageUser sends Body to the person running orch; the parent is told.
type MessageUser struct {
	CueID string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Body  any    `json:"body" protocol:"required"`
}

// MessageNotice tells a parent that one of its children sent a message, or
// the nearest common ancestor of two tasks that a message between them was
// routed through it (Routed). A private message's notice has no Body.
type MessageNotice struct {
	CueID    string `json:"cue_id,omitempty"` // the recipient's task it is for
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Body     any    `json:"body,omitempty"`
	FromTask string `json:"from_task,omitempty"` // the sender's task id
	ToTask   string `json:"to_task,omitempty"`   // the recipient's task id
	Routed   bool   `json:"routed,omitempty"`    // routed through the notice's recipient (not a sibling message)
	Private  bool   `json:"private,omitempty"`   // a private message: the body is not shown
}

// MessageReceived delivers a message to an agent.
type MessageReceived struct {
	CueID    string `json:"cue_id,omitempty"` // the recipient's task it is for
	From     string `json:"from" protocol:"required"`
	Body     any    `json:"body,omitempty"`
	FromTask string `json:"from_task,omitempty"` // the sender's task id: an answer may name it
	Private  bool   `json:"private,omitempty"`
}

// DeliveryFailed says a message could not be delivered (its recipient ended).
type DeliveryFailed struct {
	Reason string `json:"reason" protocol:"required"`
}

// DiscoveryReport is something noticed, for the parent, without interrupting it.
type DiscoveryReport struct {
	CueID   string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Summary string `json:"summary,omitempty"`
	Body    any    `json:"body,omitempty"`
}

// MemoryWrite keeps something across runs; answer MemoryAck.
type MemoryWrite struct {
	CueID string   `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Key   string   `json:"key" protocol:"required"`
	Text  string   `json:"text" protocol:"required"`
	Tags  []string `json:"tags,omitempty"`
}

// MemoryAck answers MemoryWrite.
type MemoryAck struct {
	Key string `json:"key,omitempty"`
}

// MemorySearch is a full-text search of memory; answer MemoryResults.
type MemorySearch struct {
	CueID string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Query string `json:"query" protocol:"required,nonempty"`
	Limit int    `json:"limit,omitempty" protocol:"min=1"`
}

// MemoryResults answers MemorySearch. Items is always written ([] if nil).
type MemoryResults struct {
	Items []map[string]any `json:"items" protocol:"required"`
}

// StatusUpdate reports a state change of the agent (exception-based: no heartbeats).
type StatusUpdate struct {
	CueID  string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	State  string `json:"state" protocol:"required"`
	Detail string `json:"detail,omitempty"`
}

// StatusUsage reports what this attempt has used so far: credits, and
// optionally its cost and tokens (totals, not increments).
type StatusUsage struct {
	CueID        string  `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Credits      float64 `json:"credits" protocol:"required,min=0"`
	CostUSD      float64 `json:"cost_usd,omitempty" protocol:"min=0"`
	InputTokens  int64   `json:"input_tokens,omitempty" protocol:"min=0"`
	OutputTokens int64   `json:"output_tokens,omitempty" protocol:"min=0"`
}

// EscalationConflict is a conflict decision (seed format).
type EscalationConflict struct {
	CueID              string   `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	ConflictType       string   `json:"conflict_type" protocol:"required,enum=resource|timing|output"`
	CuesInvolved       []string `json:"cues_involved,omitempty"`
	AgentsInvolved     []string `json:"agents_involved,omitempty"`
	ResourceInQuestion string   `json:"resource_in_question,omitempty"`
	ProposedResolution string   `json:"proposed_resolution,omitempty"`
	Winner             string   `json:"winner,omitempty"`
	SuggestedWinner    string   `json:"suggested_winner,omitempty"`
	Reason             string   `json:"reason,omitempty"`
	Severity           string   `json:"severity,omitempty" protocol:"enum=low|medium|high|critical"` // high and critical also wait in the person's inbox
}

// EscalationError reports an error to the hub.
type EscalationError struct {
	CueID    string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Error    string `json:"error" protocol:"required"`
	Detail   any    `json:"detail,omitempty"`
	Severity string `json:"severity,omitempty" protocol:"enum=low|medium|high|critical"` // high and critical also wait in the person's inbox
}

// GuardWarning says a guard noticed something: a repeated message or a flood.
type GuardWarning struct {
	Reason string `json:"reason" protocol:"required"`
	Count  int    `json:"count,omitempty"`
}

// ProtocolError says the hub could not act on a message (named by in_reply_to).
type ProtocolError struct {
	Reason string `json:"reason" protocol:"required"`
}

// AgentsList asks who is at work in the run; answer AgentsListed.
type AgentsList struct {
	CueID string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
}

// AgentsListed answers AgentsList: every task of the run in GO, the asker's
// own included. Agents is always written ([] if nil).
type AgentsListed struct {
	Agents []ListedAgent `json:"agents" protocol:"required"`
}

// ListedAgent is one task in GO, in AgentsListed.
type ListedAgent struct {
	ID             string   `json:"id"`                 // the agent's id
	TaskID         string   `json:"task_id"`            // its task: a cue id, or a child's CUE/1
	CueID          string   `json:"cue_id"`             // the cue the task belongs to
	State          string   `json:"state"`              // "working", or what it last reported (status.report, status.update)
	Provides       []string `json:"provides"`           // the keys its contract provides
	AcceptsHandoff bool     `json:"accepts_handoff"`    // the asker may hand work off to (or spawn) this agent
	Progress       float64  `json:"progress,omitempty"` // its last reported progress, 0..1
}

// BroadcastSend sends Body to every other agent of the run in GO; answer
// BroadcastSent. Each gets a BroadcastNotice.
type BroadcastSend struct {
	CueID string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Body  any    `json:"body" protocol:"required"`
}

// BroadcastSent answers BroadcastSend with the task ids it reached
// (always written, [] if none).
type BroadcastSent struct {
	Recipients []string `json:"recipients" protocol:"required"`
}

// BroadcastNotice delivers a broadcast to an agent.
type BroadcastNotice struct {
	CueID string `json:"cue_id,omitempty"` // the recipient's task it is for
	From  string `json:"from" protocol:"required"`
	Body  any    `json:"body,omitempty"`
}

// StatusRequest asks an agent in GO for its state; answer StatusReport.
type StatusRequest struct {
	CueID string `json:"cue_id,omitempty"` // the task asked about
}

// StatusReport is an agent's state: the answer to StatusRequest, or sent
// unasked when it changes. Progress is 0..1 (a number above 1 is read as a
// percent, up to 100).
type StatusReport struct {
	CueID    string  `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	State    string  `json:"state" protocol:"required,nonempty"`
	Progress float64 `json:"progress,omitempty" protocol:"min=0"`
	Detail   string  `json:"detail,omitempty"`
}

// NotifyMode sets how the notices of the sender's children reach it:
// immediate (each at once), summary (collected, delivered when the child
// ends) or silent (recorded only). Answer NotifyAck.
type NotifyMode struct {
	CueID string `json:"cue_id,omitempty"` // the task it is for, when the agent serves several
	Mode  string `json:"mode" protocol:"required,enum=immediate|summary|silent"`
}

// NotifyAck answers NotifyMode.
type NotifyAck struct {
	Mode string `json:"mode" protocol:"required"`
}

// MessageType implements Body: each body knows its message_type.
func (CoordWarning) MessageType() string       { return TypeCoordWarning }
func (CoordStandby) MessageType() string       { return TypeCoordStandby }
func (CoordGo) MessageType() string            { return TypeCoordGo }
func (CoordStop) MessageType() string          { return TypeCoordStop }
func (AckWarning) MessageType() string         { return TypeAckWarning }
func (AckStandby) MessageType() string         { return TypeAckStandby }
func (TaskComplete) MessageType() string       { return TypeTaskComplete }
func (TaskFailed) MessageType() string         { return TypeTaskFailed }
func (TaskHandoff) MessageType() string        { return TypeTaskHandoff }
func (HandoffResult) MessageType() string      { return TypeHandoffResult }
func (TaskSpawn) MessageType() string          { return TypeTaskSpawn }
func (SpawnAccepted) MessageType() string      { return TypeSpawnAccepted }
func (TaskAnnounce) MessageType() string       { return TypeTaskAnnounce }
func (BlackboardWrite) MessageType() string    { return TypeBlackboardWrite }
func (BlackboardAck) MessageType() string      { return TypeBlackboardAck }
func (BlackboardRead) MessageType() string     { return TypeBlackboardRead }
func (BlackboardValue) MessageType() string    { return TypeBlackboardValue }
func (QuestionAsk) MessageType() string        { return TypeQuestionAsk }
func (QuestionAnswer) MessageType() string     { return TypeQuestionAnswer }
func (MessageSend) MessageType() string        { return TypeMessageSend }
func (MessageSent) MessageType() string        { return TypeMessageSent }
func (MessageUser) MessageType() string        { return TypeMessageUser }
func (MessageNotice) MessageType() string      { return TypeMessageNotice }
func (MessageReceived) MessageType() string    { return TypeMessageReceived }
func (DeliveryFailed) MessageType() string     { return TypeDeliveryFailed }
func (DiscoveryReport) MessageType() string    { return TypeDiscoveryReport }
func (MemoryWrite) MessageType() string        { return TypeMemoryWrite }
func (MemoryAck) MessageType() string          { return TypeMemoryAck }
func (MemorySearch) MessageType() string       { return TypeMemorySearch }
func (MemoryResults) MessageType() string      { return TypeMemoryResults }
func (StatusUpdate) MessageType() string       { return TypeStatusUpdate }
func (StatusUsage) MessageType() string        { return TypeStatusUsage }
func (EscalationConflict) MessageType() string { return TypeEscalationConflict }
func (EscalationError) MessageType() string    { return TypeEscalationError }
func (GuardWarning) MessageType() string       { return TypeGuardWarning }
func (ProtocolError) MessageType() string      { return TypeProtocolError }
func (AgentsList) MessageType() string         { return TypeAgentsList }
func (AgentsListed) MessageType() string       { return TypeAgentsListed }
func (BroadcastSend) MessageType() string      { return TypeBroadcastSend }
func (BroadcastSent) MessageType() string      { return TypeBroadcastSent }
func (BroadcastNotice) MessageType() string    { return TypeBroadcastNotice }
func (StatusRequest) MessageType() string      { return TypeStatusRequest }
func (StatusReport) MessageType() string       { return TypeStatusReport }
func (NotifyMode) MessageType() string         { return TypeNotifyMode }
func (NotifyAck) MessageType() string          { return TypeNotifyAck }
