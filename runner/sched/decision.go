package sched

import (
	"time"

	"github.com/orch-cli/orch/spec"
)

// State is a cue's state; the values are those the runner records.
type State string

const (
	Pending     State = "pending"
	Warning     State = "warning"
	Standby     State = "standby"
	Go          State = "go"
	Completed   State = "completed"
	Failed      State = "failed"
	Blocked     State = "blocked"     // a dependency failed, was skipped or blocked
	Skipped     State = "skipped"     // a condition did not hold
	Stopped     State = "stopped"     // the run was stopped
	Interrupted State = "interrupted" // in flight when the owner died
)

// Final reports whether a cue in state s is over.
func (s State) Final() bool {
	switch s {
	case Completed, Failed, Blocked, Skipped, Stopped:
		return true
	}
	return false
}

// AttemptState is how an attempt ended, as recorded.
type AttemptState string

const (
	AttemptCompleted AttemptState = "completed"
	AttemptFailed    AttemptState = "failed"
	AttemptStopped   AttemptState = "stopped"
	// AttemptPaused: prepared for a manual GO, its process stopped because
	// the run paused for that GO (Core.Park); the cue's next preparation
	// starts it again under its number, and it is the one that gets the GO.
	AttemptPaused AttemptState = "paused"
)

// Kind says what a Decision is.
type Kind uint8

const (
	// CueState: record cue Cue in State with Reason (and Outputs when
	// completed).
	CueState Kind = iota + 1
	// StartAttempt: start attempt number Attempt of Agent for target
	// Target of cue Cue (Fallback: Agent replaced the agent listed). It
	// sends WARNING, unless Config.Trivial(Agent), saying when GO is
	// expected (Until: see estimatedGo). Again: the attempt was paused
	// (AttemptPaused) and is prepared again under its number.
	StartAttempt
	// SendStandby and SendGo: order the attempt of the target to go on.
	SendStandby
	SendGo
	// StopAttempt: stop the attempt of the target, saying Reason.
	StopAttempt
	// AttemptEnded: record the end of the target's attempt Attempt of
	// Agent, in AttemptState with Reason and Class.
	AttemptEnded
	// AttemptInterrupted: record that attempt Attempt of agent Key (Agent:
	// nil if the plan no longer has it), running
	// when the run's owner stopped, ended with it (a resume).
	AttemptInterrupted
	// Cooldown: record that Agent cools down until Until (Reason: why).
	Cooldown
	// Retry: the target's attempt Attempt of Agent failed (Reason,
	// Class); retry N of Max comes after Delay (Until, when set: the
	// retry waits for the end of the agent's cooldown, past its backoff).
	Retry
	// Fallback: the target's Agent Reason; To takes over.
	Fallback
	// Export: write Key = Value to the blackboard as Agent, now (a cue
	// completing exports its outputs before it is recorded completed).
	Export
	// Conflict: cue Cue waits for Subject, held by the cues Holders (plan
	// positions, in plan order) up to Capacity.
	Conflict
	// ManualGo: record that cue Cue got its GO (Reason: from whom).
	ManualGo
	// AskForGo: ask a person for the manual cue's GO; answer with
	// ApprovalAnswered.
	AskForGo
	// CooldownCleared: record that Agent's cooldown ended at Until because
	// its attempt at cue Cue succeeded (docs/design.md#fallback-chains: RecordSuccess).
	CooldownCleared
	// Expand: for_each cue Cue fans out into Items (their ids; Values, the
	// items, in order), which are cues of the core from now on, at the
	// positions after every cue before them. Recorded before any item's
	// GO; Restored: the record has it already (a resumed run). Reason, when
	// set, is a note (the list is empty).
	Expand
	// StartMerge: record attempt Attempt of MergeAgent at cue Cue, then
	// merge Sources for merge MergeID (the cue's position, or ResultMerge)
	// and report with Merged (merge.go).
	StartMerge
	// ResolveMerge: record and start attempt Attempt of resolver Agent at
	// cue Cue, in merge MergeID's worktree (attempt N), given Problem;
	// its end is reported with ResolverEnded.
	ResolveMerge
	// AskMerge: ask the person about Problem of merge MergeID (attempt
	// Attempt); the answer comes with MergeAnswered or MergeUnanswered.
	AskMerge
	// ContinueMerge: check the resolution of merge MergeID (attempt
	// Attempt; Agent: the resolver, nil for the person) and go on merging;
	// report with Merged.
	ContinueMerge
	// MergeEnded: record the end of merge MergeID's attempt Attempt at cue
	// Cue, in AttemptState with Class and Reason; Key: the commit it ended
	// at.
	MergeEnded
	// StopMerge: stop merge MergeID's work (git, a resolver, a question).
	StopMerge
)

// Decision is one thing the core decided. Which fields are set depends on
// Kind (see there). The runner records it, then acts on it.
type Decision struct {
	Kind         Kind
	Cue          int // plan position
	Target       int // index of the target agent in the cue's agents
	Attempt      int
	Agent        *spec.Agent
	State        State
	AttemptState AttemptState
	Reason       string
	Class        string
	Fallback     bool
	Again        bool
	To           *spec.Agent
	Until        time.Time
	Delay        time.Duration
	N, Max       int
	Outputs      map[string]any
	Key          string
	Value        any
	Subject      Subject
	Capacity     int
	Holders      []int
	Items        []string
	Values       []any
	Restored     bool
	MergeID      int           // merge decisions: the merge (a cue's position, or ResultMerge)
	Sources      []MergeSource // StartMerge
	Problem      *MergeProblem // ResolveMerge, AskMerge
}

// Subject is something cues hold while in GO: a resource (one unit per
// claim), an agent (one of its concurrency slots: kind "timing") or an
// output target.
type Subject struct{ Kind, Name string }
