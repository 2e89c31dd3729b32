package temporal

import (
	"encoding/json"
	"time"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// Names of the workflow, its query and signals, and the activities: the
// contract between orch-temporal, the workers and the histories recorded.
const (
	WorkflowName = "orch.run"
	QueryEvents  = "orch.events"

	SignalGo     = "orch.go"
	SignalAnswer = "orch.answer"
	SignalStop   = "orch.stop"
	SignalBBSet  = "orch.bb-set"

	ActivityPlan    = "orch.plan"
	ActivityWarning = "orch.warning"
	ActivityStandby = "orch.standby"
	ActivityGo      = "orch.go"

	// HandedBack is the type of the error of an activity a stopping worker
	// gave back unfinished (orch worker's drain): its worker was lost.
	HandedBack = "handed-back"
	// WaitingPrefix starts the reason of a run paused for a person's GO;
	// the waiting cues follow, comma-separated.
	WaitingPrefix = "waiting for GO: "
	// DefaultTaskQueue is the task queue of the workflow and of the agents
	// without a placement.
	DefaultTaskQueue = "orch"
	// MaxEventsPerQuery is the most events one orch.events query returns.
	MaxEventsPerQuery = 1000
	// FirstSeq is the seq of the workflow's first event: seq 1 is the
	// run.started the starter records in its own store before the workflow
	// starts, so the workflow's seqs are the store's.
	FirstSeq = 2
)

// RunInput starts the workflow. The plan goes by reference: the cuelist's
// path relative to the workers' --root and the hash of its files, which a
// worker checks before it plans or runs anything.
type RunInput struct {
	RunID       string
	Path        string
	SpecHash    string
	Inputs      map[string]any
	MaxParallel int    // 0: the cuelist's max_parallel, else attempt.DefaultMaxParallel
	TaskQueue   string // the agents' default queue ("": DefaultTaskQueue)
	// ContinueAfter, when set, continues as new after that many events of
	// the run's log in one execution instead of by the history's length
	// (tests: many executions in a short run).
	ContinueAfter int `json:",omitempty"`
	// Carry is what the execution before handed this one (continue.go);
	// nil in a run's first execution.
	Carry *Carry `json:",omitempty"`
	// SearchAttributes: the workflow started with AttrCuelist, AttrRun and
	// AttrState (the namespace has them), and upserts AttrState.
	SearchAttributes bool
	Git              *RunGit // the remote of worktree agents' branches (worktree.go)
	// Memory is what the run's agents may search (memory.go): the
	// submitting store's newest items; on continue-as-new, the run's
	// memory then.
	Memory []record.MemoryItem `json:",omitempty"`
}

// RunResult is how the workflow ended.
type RunResult struct {
	State  string // completed, failed or stopped
	Reason string
	Cues   []record.CueOutcome
}

// PlanDoc is the cuelist and the agents it uses, as a worker loaded them:
// the workflow builds the plan from it (planner.Build is pure), so the plan
// is in the history.
type PlanDoc struct {
	Cuelist *spec.Cuelist
	Agents  []*spec.Agent
}

// PlanInput asks a worker for the plan.
type PlanInput struct {
	Path     string
	SpecHash string
}

// AttemptInput asks a worker to run one phase of an attempt.
type AttemptInput struct {
	RunID    string
	Path     string
	SpecHash string
	Cue      string
	Agent    string
	Attempt  int
	Task     *attempt.Task // orch.go only
	// Try counts the workers the workflow gave this phase (from 1): a later
	// try first kills what a lost worker on this machine may have left.
	Try int
	// Worktree is where a worktree agent's phase starts (worktree.go).
	Worktree *WorktreeInput
	// Child: the attempt serves a handoff's receiver or a spawned agent,
	// Cue its task id (children.go).
	Child *ChildInput `json:",omitempty"`
	// Resolving: the phase is a merge's resolver's, which works in the
	// merge's worktree kept on this worker (merge_resolver.go).
	Resolving *ResolverInput `json:",omitempty"`
}

// AttemptResult is how a phase ended. A failure is a result, not an
// activity error: orch's retry policy decides, not Temporal's.
type AttemptResult struct {
	Failed   bool
	Class    string
	Reason   string
	Outputs  map[string]any
	ExitCode *int
	PID      int
	Log      []LogLine // the last lines of its output (bounded)
	// Worktree is the worktree a worktree agent's GO worked in and the
	// commit it pushed.
	Worktree *record.WorktreeData
	// Messages are the protocol messages of the phase, and MessagesLeftOut
	// how many more it had (wirelog.go).
	Messages        []record.MessageData `json:",omitempty"`
	MessagesLeftOut int                  `json:",omitempty"`
}

// LogLine is one line an agent printed.
type LogLine struct {
	Stream string
	At     time.Time
	Text   string
}

// EventsPage answers orch.events: the events after a seq, and the output
// lines logged with them.
type EventsPage struct {
	Events []record.Event
	Logs   []SeqLogs
	// Values are the values of the blackboard/updated events, by seq.
	Values map[int64]json.RawMessage
	// Memory are the memory writes and deletes the notes record, by seq
	// (memory.go): the follower applies them to the store.
	Memory map[int64]MemoryChange `json:",omitempty"`
	Done   bool                   // the workflow's log is complete: the run is over
	// Earlier, with no events: the events asked for are older than this
	// execution's; the execution of this run id has them (continue-as-new).
	Earlier string `json:",omitempty"`
	// Run and First are the execution that answered (its run id) and the
	// seq of its first event: a follower remembers where each execution's
	// events begin and asks the right one.
	Run   string `json:",omitempty"`
	First int64  `json:",omitempty"`
}

// SeqLogs are output lines of an attempt, logged just before event Seq.
type SeqLogs struct {
	Seq     int64
	Cue     string
	Agent   string
	Attempt int
	Lines   []LogLine
}

// GoSignal, AnswerSignal, StopSignal and BBSetSignal are the signals'
// payloads.
type GoSignal struct {
	Cue string
	By  string
}

type AnswerSignal struct {
	Question string
	Answer   string
	By       string
}

type StopSignal struct {
	Cue string // "": the whole run
	By  string
}

type BBSetSignal struct {
	Key   string
	Value any
	By    string
}
