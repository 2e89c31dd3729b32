package record

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// BlackboardPut is one write of BlackboardWriteMany.
type BlackboardPut struct {
	Key       string
	Value     json.RawMessage
	Author    string // the agent, or "person" for orch bb set outside an agent
	Cue       string // the writer's task, for the event ("" outside a run's agents)
	Attempt   int
	MessageID string // see BlackboardData
	// IfVersion, when set, makes the write conditional: it is stored only
	// if the key is at that version (0: the key does not exist yet), else
	// it is a conflict and nothing is written (blackboard.write's
	// expected_version, orch bb set --if-version).
	IfVersion *int64
}

// Conflicts reports whether the write is conditional (IfVersion) and the
// key is at another version (current, 0: it does not exist): then nothing
// is written. The one rule of every engine's blackboard.
func (p BlackboardPut) Conflicts(current int64) bool {
	return p.IfVersion != nil && *p.IfVersion != current
}

// BlackboardWritten is one stored blackboard write: its version, and the
// blackboard/updated event that records it (seq included).
type BlackboardWritten struct {
	Version int64
	Event   Event
	// Conflict: a conditional write (IfVersion) found the key at another
	// version and stored nothing. Version and Author are the key's current
	// ones (0, "": the key does not exist); Event is the
	// blackboard/conflict event that records the refusal.
	Conflict bool
	Author   string
}

// MemoryItem is one thing kept in memory across runs (memory.write).
type MemoryItem struct {
	Key   string    `json:"key"` // a later write of the same key replaces it
	Text  string    `json:"text"`
	Tags  []string  `json:"tags"`
	Agent string    `json:"agent"`  // who wrote it
	RunID string    `json:"run_id"` // in which run
	At    time.Time `json:"at"`
	// Version counts the writes of the key: 1 for the first; the earlier
	// versions are kept (MemoryHistory).
	Version int64 `json:"version"`
}

// MemoryResults are items as memory.results gives them to an agent.
func MemoryResults(items []MemoryItem) []map[string]any {
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		tags := it.Tags
		if tags == nil {
			tags = []string{}
		}
		out = append(out, map[string]any{"key": it.Key, "text": it.Text, "tags": tags, "agent": it.Agent, "run_id": it.RunID,
			"at": it.At.Format(time.RFC3339Nano), "version": it.Version, "author": it.Agent})
	}
	return out
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

// A run's records are reached through four roles, each a small interface:
// the event log, the blackboard, memory, and control (what another process
// asks of the run, and what the owner needs to keep it). Recorder is all of
// them: the runner holds one; runner/store's *DB is the SQLite one, and a
// reader that needs one role asks for that role alone.
type Recorder interface {
	EventLog
	Board
	Memory
	Control
}

// EventLog is a run's append-only log. Append is synchronous: when it
// returns, the events and their effect on the run's state are committed, so
// a decision is recorded before it is acted on. Implementations batch
// concurrent callers into one transaction.
type EventLog interface {
	Append(ctx context.Context, events ...Event) error
	// Log records a line of agent output without waiting for its commit;
	// Flush waits for everything logged so far.
	Log(line LogLine)
	Flush(ctx context.Context) error
}

// Board is a run's blackboard: keys agents and people write, versioned.
type Board interface {
	BlackboardWrite(ctx context.Context, runID, key string, value json.RawMessage, author string) (version int64, err error)
	// BlackboardWriteMany writes several keys in order, in as few
	// transactions as the recorder can, and returns each write's version
	// and event. Each write is its own: on an error, the writes before it
	// are stored (and returned).
	BlackboardWriteMany(ctx context.Context, runID string, puts []BlackboardPut) ([]BlackboardWritten, error)
	BlackboardRead(ctx context.Context, runID, key string) (BlackboardEntry, bool, error)
	// Blackboard returns the latest version of every key, another process's
	// writes included at once (conditions depend on it). The caller may
	// change the map.
	Blackboard(ctx context.Context, runID string) (map[string]BlackboardEntry, error)
}

// Memory is what agents keep across runs. MemoryWrite keeps an item
// (replacing one with its key); MemorySearch finds items by full-text search
// of their key, text and tags, best first, at most limit (0: 20).
type Memory interface {
	MemoryWrite(ctx context.Context, item MemoryItem) error
	MemorySearch(ctx context.Context, query string, limit int) ([]MemoryItem, error)
	// MemoryDelete forgets the item key and its history; false when there
	// was none. runID is the run asking (its lease is checked), or "".
	MemoryDelete(ctx context.Context, runID, key string) (bool, error)
}

// Control is what the owner of a run needs beside its log: the commands
// other processes send it, its lease, the record it continues from, and the
// agents' cooldowns (which hold across runs).
type Control interface {
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

	// CooldownUntil returns when the agent's cooldown ends (zero: none).
	CooldownUntil(ctx context.Context, agent string) (time.Time, error)
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
	Used          Usage // the run's totals so far (what its attempts reported)
}

// CueRecord is one cue of a recorded run.
type CueRecord struct {
	State         CueState
	Reason        string
	Attempts      int            // the highest attempt number recorded
	AgentAttempts map[string]int // failed attempts per agent: they count against its max_attempts (an interrupted or stopped one does not)
	Running       []AttemptRef   // attempts still recorded as running (in flight when the owner died)
	Paused        []AttemptRef   // attempts recorded paused: prepared for a manual GO when the run paused
	ReachedGo     bool           // GO was sent for the cue in its latest try
	Outputs       map[string]any // of a completed cue
	Approved      bool           // a person said GO
	// Parent, Kind: a child task's or a fan-out item's ("item"); Item is an
	// item's item, and Position orders a fan-out's items as the run made
	// them (item order).
	Parent   string
	Kind     string
	Item     json.RawMessage
	Position int
	// ItemAttempts is, for a fan-out that expands afresh (orch retry), the
	// highest attempt number each of its earlier items used: an item of
	// the same id goes on numbering after it.
	ItemAttempts map[string]int
}

// AttemptRef names one attempt of a cue.
type AttemptRef struct {
	Agent  string
	Number int
}
