package runner

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// RunState is the state of a run (DESIGN §6).
type RunState string

const (
	RunRunning     RunState = "running"
	RunPaused      RunState = "paused"      // waits for a person: manual GO or a question
	RunCompleted   RunState = "completed"   // every cue completed or was skipped
	RunFailed      RunState = "failed"      // a cue failed (or was blocked by one)
	RunStopped     RunState = "stopped"     // stopped by a signal or orch stop
	RunInterrupted RunState = "interrupted" // its owner died; orch resume continues it
)

// Ended reports whether the run will not change any more by itself.
func (s RunState) Ended() bool {
	return s == RunCompleted || s == RunFailed || s == RunStopped
}

// CueState is the state of a cue in a run (DESIGN §6).
type CueState string

const (
	CuePending     CueState = "pending"
	CueWarning     CueState = "warning"
	CueStandby     CueState = "standby"
	CueGo          CueState = "go"
	CueCompleted   CueState = "completed"
	CueFailed      CueState = "failed"
	CueBlocked     CueState = "blocked"     // a dependency failed, was skipped or blocked
	CueSkipped     CueState = "skipped"     // a condition did not hold
	CueStopped     CueState = "stopped"     // the run was stopped
	CueInterrupted CueState = "interrupted" // in flight when the owner died
)

// Final reports whether the cue has reached a state it never leaves in this run.
func (s CueState) Final() bool {
	switch s {
	case CueCompleted, CueFailed, CueBlocked, CueSkipped, CueStopped:
		return true
	}
	return false
}

// AttemptState is the state of one attempt of one agent at one cue.
type AttemptState string

const (
	AttemptRunning   AttemptState = "running"
	AttemptCompleted AttemptState = "completed"
	AttemptFailed    AttemptState = "failed"
	AttemptStopped   AttemptState = "stopped"
	// AttemptInterrupted: running when its run's owner died; recorded by the
	// process that resumes the run.
	AttemptInterrupted AttemptState = "interrupted"
)

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
	// anything is launched. Data: AttemptStartedData.
	EvAttemptStarted = "attempt/started"
	// EvAttemptEnded closes an attempt with State and Reason. Data: AttemptEndedData.
	EvAttemptEnded = "attempt/ended"
	// EvMessage is a protocol message sent to or received from an agent,
	// stored before it is acted on. Data: MessageData.
	EvMessage = "message"
	// EvCooldown puts Agent on cooldown (it holds across runs). Data: CooldownData.
	EvCooldown = "agent/cooldown"
	// EvBlackboard is written by the recorder itself with each blackboard write.
	// Data: BlackboardData.
	EvBlackboard = "blackboard/updated"
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
	// EvUsage records credits an attempt reported (status.usage). Cue, Agent,
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
)

// Question states, in EvQuestionClosed.State (an open question has none).
const (
	QuestionAnswered   = "answered"
	QuestionUnanswered = "unanswered"
	QuestionWithdrawn  = "withdrawn"
)

// TaskStartedData is the data of EvTaskStarted.
type TaskStartedData struct {
	Parent  string         `json:"parent"`             // the parent's task id: a cue id, or a child's id
	Kind    string         `json:"kind"`               // "handoff" or "spawn"
	TaskRef string         `json:"task_ref,omitempty"` // the task_id the sender gave a handoff
	Depth   int            `json:"depth"`              // 1 for a child of a cue's agent
	Chain   []string       `json:"chain"`              // agents from the root to this child, this one last
	Context map[string]any `json:"context,omitempty"`  // the handoff_context, or the spawn's inputs
}

// QuestionData is the data of EvQuestion.
type QuestionData struct {
	ID         string    `json:"id"` // q1, q2, ... in the order asked in the run
	Question   string    `json:"question"`
	Complexity string    `json:"complexity"` // quick or deep
	To         string    `json:"to"`         // "person", or the id of the parent agent it went to
	Deadline   time.Time `json:"deadline"`   // when it becomes unanswered
}

// AnswerData is the data of EvQuestionClosed.
type AnswerData struct {
	ID     string `json:"id"`
	Answer string `json:"answer,omitempty"`
	By     string `json:"by,omitempty"` // "person", or the agent that answered
}

// UsageData is the data of EvUsage.
type UsageData struct {
	Credits  float64 `json:"credits"`   // the attempt's credits so far, as reported
	RunTotal float64 `json:"run_total"` // the run's credits so far
}

// ExhaustedData is the data of EvExhausted.
type ExhaustedData struct {
	Limit string `json:"limit"` // max_credits or max_duration
	Used  string `json:"used"`  // e.g. "1003.5" or "2m0.1s"
	Max   string `json:"max"`
}

// UserMessageData is the data of EvUserMessage.
type UserMessageData struct {
	Kind string          `json:"kind"` // "message" (message.user), "discovery" (discovery.report) or "notice" (a message between root tasks)
	From string          `json:"from"` // the sending agent
	To   string          `json:"to,omitempty"`
	Body json.RawMessage `json:"body,omitempty"`
}

// Event is one entry of a run's append-only log. The recorder assigns Seq,
// contiguous per run, when it commits the event.
type Event struct {
	RunID   string          `json:"run_id"`
	Seq     int64           `json:"seq"`
	At      time.Time       `json:"at"`
	Type    string          `json:"type"`
	Cue     string          `json:"cue,omitempty"`
	Agent   string          `json:"agent,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
	State   string          `json:"state,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// RunStartedData is the data of EvRunStarted.
type RunStartedData struct {
	Cuelist    string         `json:"cuelist"`
	SpecPath   string         `json:"spec_path"`      // absolute path of the cuelist file
	SpecHash   string         `json:"spec_hash"`      // sha256 of every loaded spec file, for resume
	Inputs     map[string]any `json:"inputs"`         // the run parameters after --set
	Root       string         `json:"root,omitempty"` // the project root of handoff artifacts (absolute)
	Cues       []CueInfo      `json:"cues"`           // every cue, in plan order: the recorder creates their rows (pending)
	OwnerPID   int            `json:"owner_pid"`      // the orch process running it
	OwnerHost  string         `json:"owner_host"`     // and its host
	OwnerToken string         `json:"owner_token"`    // the owner's lease (see Recorder.Heartbeat)
}

// CueInfo describes a cue when the run starts.
type CueInfo struct {
	ID     string   `json:"id"`
	Agents []string `json:"agents"`
}

// CueStateData is the optional data of EvCueState.
type CueStateData struct {
	Outputs map[string]any `json:"outputs,omitempty"` // with completed: the cue's merged outputs
}

// AttemptStartedData is the data of EvAttemptStarted.
type AttemptStartedData struct {
	Fallback bool `json:"fallback,omitempty"` // the agent replaces one that failed
}

// AttemptEndedData is the data of EvAttemptEnded.
type AttemptEndedData struct {
	Class    string         `json:"class,omitempty"`     // failure class: exit:N, timeout, malfunction, signal, contract, stopped
	ExitCode *int           `json:"exit_code,omitempty"` // when the process exited
	PID      int            `json:"pid,omitempty"`
	Outputs  map[string]any `json:"outputs,omitempty"`
}

// MessageData is the data of EvMessage.
type MessageData struct {
	Direction string          `json:"direction"` // "out" (orch to agent) or "in"
	Type      string          `json:"message_type"`
	ID        string          `json:"id,omitempty"`
	InReplyTo string          `json:"in_reply_to,omitempty"`
	Body      json.RawMessage `json:"body"` // the whole message as sent or received
}

// ConflictData is the data of EvConflict, in the seeds' escalation.conflict form.
type ConflictData struct {
	ConflictType       string   `json:"conflict_type"` // resource, timing or output
	CuesInvolved       []string `json:"cues_involved"`
	AgentsInvolved     []string `json:"agents_involved"`
	ResourceInQuestion string   `json:"resource_in_question"`
	Capacity           int      `json:"capacity"`
	ProposedResolution string   `json:"proposed_resolution"` // the arbitration strategy
	Winner             string   `json:"winner"`              // the cue holding it
	SuggestedWinner    string   `json:"suggested_winner"`    // the winner's agent
	Reason             string   `json:"reason"`
}

// CooldownData is the data of EvCooldown.
type CooldownData struct {
	Until time.Time `json:"until"`
}

// BlackboardData is the data of EvBlackboard.
type BlackboardData struct {
	Key     string `json:"key"`
	Version int64  `json:"version"`
	// MessageID is the blackboard.write the write carries out, if an agent
	// sent one: the event is that message's record (and, with Version, its
	// blackboard.ack's), so that a flood of writes costs one event each.
	MessageID string `json:"message_id,omitempty"`
}

// BlackboardPut is one write of BlackboardWriteMany.
type BlackboardPut struct {
	Key       string
	Value     json.RawMessage
	Author    string // the agent, or "person" for orch bb set outside an agent
	Cue       string // the writer's task, for the event ("" outside a run's agents)
	Attempt   int
	MessageID string // see BlackboardData
}

// BlackboardWritten is one stored blackboard write: its version, and the
// blackboard/updated event that records it (seq included).
type BlackboardWritten struct {
	Version int64
	Event   Event
}

// MemoryItem is one thing kept in memory across runs (memory.write).
type MemoryItem struct {
	Key   string    `json:"key"` // a later write of the same key replaces it
	Text  string    `json:"text"`
	Tags  []string  `json:"tags"`
	Agent string    `json:"agent"`  // who wrote it
	RunID string    `json:"run_id"` // in which run
	At    time.Time `json:"at"`
}

// LogLine is one line an agent printed: stderr, or stdout of a plain process.
type LogLine struct {
	RunID   string
	Cue     string
	Agent   string
	Attempt int
	Stream  string // "stdout" or "stderr"
	At      time.Time
	Text    string
}

// BlackboardEntry is one key of a run's blackboard, at its latest version.
type BlackboardEntry struct {
	Key     string          `json:"key"`
	Value   json.RawMessage `json:"value"`
	Version int64           `json:"version"`
	Author  string          `json:"author"`
	At      time.Time       `json:"at"`
}

// Command is a request from another orch process to the run's owner, passed
// through the store: a manual GO, a stop, or an answer to a question.
type Command struct {
	ID    int64
	RunID string
	Kind  string // "go", "stop" or "answer"
	Cue   string // go: the cue; answer: the question id (q3)
	Arg   string // stop: the reason; answer: the answer
	At    time.Time
}

// Recorder persists a run. Append is synchronous: when it returns, the events
// and their effect on the run's state are committed, so a decision is recorded
// before it is acted on. Implementations batch concurrent callers into one
// transaction.
type Recorder interface {
	Append(ctx context.Context, events ...Event) error
	// Log records a line of agent output without waiting for its commit;
	// Flush waits for everything logged so far.
	Log(line LogLine)
	Flush(ctx context.Context) error

	BlackboardWrite(ctx context.Context, runID, key string, value json.RawMessage, author string) (version int64, err error)
	// BlackboardWriteMany writes several keys in order, in as few
	// transactions as the recorder can, and returns each write's version
	// and event. Each write is its own: on an error, the writes before it
	// are stored (and returned).
	BlackboardWriteMany(ctx context.Context, runID string, puts []BlackboardPut) ([]BlackboardWritten, error)
	BlackboardRead(ctx context.Context, runID, key string) (BlackboardEntry, bool, error)
	Blackboard(ctx context.Context, runID string) (map[string]BlackboardEntry, error)
	// BlackboardAtCommit returns the board as of the recorder's latest
	// commit, or later: what a GO committed just before carries. It may
	// answer from memory, where Blackboard reads anew (a condition must see
	// another process's write at once). The caller must not change the map.
	BlackboardAtCommit(ctx context.Context, runID string) (map[string]BlackboardEntry, error)

	// MemoryWrite keeps an item across runs (replacing one with its key);
	// MemorySearch finds items by full-text search of their key, text and
	// tags, best first, at most limit (0: 20).
	MemoryWrite(ctx context.Context, item MemoryItem) error
	MemorySearch(ctx context.Context, query string, limit int) ([]MemoryItem, error)

	// CooldownUntil returns when the agent's cooldown ends (zero: none).
	CooldownUntil(ctx context.Context, agent string) (time.Time, error)

	// Commands returns the run's commands not yet done, oldest first;
	// CommandDone marks one done.
	Commands(ctx context.Context, runID string) ([]Command, error)
	CommandDone(ctx context.Context, id int64) error

	// LoadRun reads what is needed to continue a run: its start data and the
	// state of each cue, with the outputs of completed ones.
	LoadRun(ctx context.Context, runID string) (*RunRecord, error)

	// Heartbeat renews the owner's lease on the run; ErrLeaseLost says another
	// process has taken the run over and this one must stop.
	Heartbeat(ctx context.Context, runID, ownerToken string) error
}

// The lease: a run's owner renews it every HeartbeatEvery; past LeaseTTL
// without a heartbeat (or, on the owner's host, once its process is gone)
// the owner is dead and the run is interrupted.
const (
	HeartbeatEvery = time.Second
	LeaseTTL       = 5 * time.Second
)

// ErrLeaseLost is returned by Heartbeat when the run has another owner.
var ErrLeaseLost = errors.New("another process owns the run now")

// Owner identifies the process that owns a run.
type Owner struct {
	PID   int
	Host  string
	Token string
}

// RunRecord is a run as recorded, for continuing it.
type RunRecord struct {
	ID      string
	State   RunState
	Reason  string
	Started RunStartedData
	Cues    map[string]CueRecord // the plan's cues and the child tasks (ids with "/")
	// Questions is how many questions the run has recorded (the next is
	// q<Questions+1>); OpenQuestions are those still open, to withdraw.
	Questions     int
	OpenQuestions []string
	Credits       float64 // the run's credits so far (status.usage)
}

// CueRecord is one cue of a recorded run.
type CueRecord struct {
	State         CueState
	Reason        string
	Attempts      int            // the highest attempt number recorded
	AgentAttempts map[string]int // failed attempts per agent: they count against its max_attempts (an interrupted or stopped one does not)
	Running       []AttemptRef   // attempts still recorded as running (in flight when the owner died)
	ReachedGo     bool           // GO was sent for the cue in its latest try
	Outputs       map[string]any // of a completed cue
	Approved      bool           // a person said GO
}

// AttemptRef names one attempt of a cue.
type AttemptRef struct {
	Agent  string
	Number int
}
