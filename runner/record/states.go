package record

import "github.com/orch-cli/orch/runner/sched"

// RunState is the state of a run (docs/design.md#states).
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

// CueState is the state of a cue in a run (docs/design.md#states): the scheduler
// core's, recorded as it decides it. Final reports whether the cue has
// reached a state it never leaves in this run.
type CueState = sched.State

const (
	CuePending     = sched.Pending
	CueWarning     = sched.Warning
	CueStandby     = sched.Standby
	CueGo          = sched.Go
	CueCompleted   = sched.Completed
	CueFailed      = sched.Failed
	CueBlocked     = sched.Blocked     // a dependency failed, was skipped or blocked
	CueSkipped     = sched.Skipped     // a condition did not hold
	CueStopped     = sched.Stopped     // the run was stopped
	CueInterrupted = sched.Interrupted // in flight when the owner died
)

// AttemptState is the state of one attempt of one agent at one cue: the
// core's end of an attempt, or running (recorded at its start), or
// interrupted.
type AttemptState = sched.AttemptState

const (
	AttemptRunning   AttemptState = "running"
	AttemptCompleted              = sched.AttemptCompleted
	AttemptFailed                 = sched.AttemptFailed
	AttemptStopped                = sched.AttemptStopped
	AttemptPaused                 = sched.AttemptPaused // prepared for a manual GO; the run paused: orch go prepares it again
	// AttemptInterrupted: running when its run's owner died; recorded by the
	// process that resumes the run.
	AttemptInterrupted AttemptState = "interrupted"
)

// MergeAgent is the agent of orch's own attempts at a cue that merge
// worktree branches (EvMerge): they are not the cue's agents' attempts.
const MergeAgent = sched.MergeAgent
