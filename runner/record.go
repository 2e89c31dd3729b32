// Package runner executes a plan: it starts agent processes, takes every cue
// through WARNING -> STANDBY -> GO, handles timeouts, retries, fallbacks and
// cooldowns, and records everything through a Recorder (runner/store is the
// SQLite one). runner never imports the store: its tests use an in-memory fake.
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
)

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
	SpecPath   string         `json:"spec_path"`   // absolute path of the cuelist file
	SpecHash   string         `json:"spec_hash"`   // sha256 of every loaded spec file, for resume
	Inputs     map[string]any `json:"inputs"`      // the run parameters after --set
	Cues       []CueInfo      `json:"cues"`        // every cue, in plan order: the recorder creates their rows (pending)
	OwnerPID   int            `json:"owner_pid"`   // the orch process running it
	OwnerHost  string         `json:"owner_host"`  // and its host
	OwnerToken string         `json:"owner_token"` // the owner's lease (see Recorder.Heartbeat)
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
// through the store: a manual GO, later a stop or an answer.
type Command struct {
	ID    int64
	RunID string
	Kind  string // "go"
	Cue   string
	Arg   string
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
	BlackboardRead(ctx context.Context, runID, key string) (BlackboardEntry, bool, error)
	Blackboard(ctx context.Context, runID string) (map[string]BlackboardEntry, error)

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
	Cues    map[string]CueRecord
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
