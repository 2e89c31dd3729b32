package temporal

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// A workflow's history has a limit (51,200 events on a default server) and
// a run spends about six events per cue: a long run continues as new, a
// fresh execution of the same workflow id, carrying what it needs. It does
// so at a quiet point: once its history is long enough it holds back new
// WARNINGs (sched.Core.Hold), lets the attempts running end, handles every
// signal that came meanwhile, then hands the core, the blackboard and the
// event log's next seq to the next execution (Carry). Followers keep one
// seq numbering across the chain: an execution asked for events older than
// its first says which execution has them (EventsPage.Earlier).

// changeContinueAsNew: runs started since continue as new when their
// history grows long.
const changeContinueAsNew = "orch-continue-as-new"

// When an execution starts draining to continue as new: at
// continueAfterEvents history events or continueAfterBytes of history, or
// when the server suggests it, once the execution has continueMinEvents
// (so that a large plan, alone past the server's size, cannot make every
// execution continue at once). After a drain given up (a person must act
// first), it tries again drainRetryEvents later.
const (
	continueAfterEvents = 20_000
	continueAfterBytes  = 20 << 20
	continueMinEvents   = 2_000
	drainRetryEvents    = 1_000
)

// Carry is what one execution of a run hands the next.
type Carry struct {
	Core    sched.Carried
	Board   map[string]CarriedEntry `json:",omitempty"`
	NextSeq int64                   // the seq of the next execution's first event
	Paused  bool                    `json:",omitempty"` // run/state paused was the last run state emitted
	Gen     int                     // the executions before the next one
	Used    record.Usage            // what the run's agents reported they used
	Tasks   []string                `json:",omitempty"` // the child tasks' ids so far: later ones get new ids
}

// CarriedEntry is a blackboard key carried.
type CarriedEntry struct {
	Value   json.RawMessage
	Version int64
	Author  string `json:",omitempty"`
}

// chain is the workflow's part in continuing as new.
type chain struct {
	version  workflow.Version
	draining bool
	// notBefore: no drain starts before this progress (history events, or
	// the log's events under RunInput.ContinueAfter).
	notBefore int
	gen       int
	collab    *collab // its usage totals go on
}

// carryIn takes what the execution before handed on (none: the run's
// first execution).
func (w *wf) carryIn(in RunInput) {
	w.chain.version = workflow.GetVersion(w.ctx, changeContinueAsNew, workflow.DefaultVersion, 1)
	w.log.run = workflow.GetInfo(w.ctx).WorkflowExecution.RunID
	k := in.Carry
	if k == nil {
		return
	}
	w.chain.gen = k.Gen
	w.log.next, w.log.prev = k.NextSeq, workflow.GetInfo(w.ctx).ContinuedExecutionRunID
	w.paused = k.Paused
	for key, e := range k.Board {
		w.board[key] = boardEntry{value: e.Value, version: e.Version, author: e.Author}
	}
}

// begin starts the core: a run's first execution afresh, a later one where
// the one before left it.
func (w *wf) begin(now time.Time) {
	if k := w.in.Carry; k != nil {
		w.core.Resume(k.Core)
		w.core.Begin(now)
		w.core.Resumed(k.Core.Began)
		return
	}
	w.core.Begin(now)
}

// progress is how far this execution went: its history's events, or under
// RunInput.ContinueAfter the log's events it emitted.
func (w *wf) progress() int {
	if w.in.ContinueAfter > 0 {
		return len(w.log.events)
	}
	return workflow.GetInfo(w.ctx).GetCurrentHistoryLength()
}

// continueDue says whether this execution should drain to continue as new.
func (w *wf) continueDue() bool {
	if w.chain.version < 1 || w.worktrees() && w.mergeVersion() < versionMerge {
		return false
	}
	n := w.progress()
	if n < w.chain.notBefore {
		return false
	}
	if w.in.ContinueAfter > 0 {
		return n >= w.in.ContinueAfter
	}
	info := workflow.GetInfo(w.ctx)
	return n >= continueAfterEvents || info.GetCurrentHistorySize() >= continueAfterBytes ||
		info.GetContinueAsNewSuggested() && n >= continueMinEvents
}

// worktrees: the run has worktree agents. Such a run started before
// versionMerge does not continue as new (the core's merges were not
// carried then); since, the branches its cues left are carried in their
// outputs and its merges in sched.Carried.Merges.
func (w *wf) worktrees() bool {
	for _, a := range w.plan.Agents {
		if a.Workspace == "worktree" {
			return true
		}
	}
	return false
}

// continuing is the loop's look at the chain: true when the run is at a
// quiet point after a drain, with no signal waiting, and continues as new.
// A drain that cannot end without a person (a manual cue standing by) is
// given up, and tried again later.
func (w *wf) continuing() bool {
	if !w.chain.draining {
		if !w.continueDue() {
			return false
		}
		w.chain.draining = true
		w.core.Hold()
	}
	if w.running == 0 && len(w.idleStops) == 0 && w.core.Quiet() && workflow.AllHandlersFinished(w.ctx) {
		return !w.sel.HasPending() // a signal first: the loop handles it and looks again
	}
	if w.core.Stuck(w.running) {
		w.chain.draining = false
		w.chain.notBefore = w.progress() + max(drainRetryEvents, w.in.ContinueAfter)
		w.core.Release()
		w.core.Advance(workflow.Now(w.ctx))
		w.apply()
	}
	return false
}

// continueAsNew ends this execution, handing the run to the next.
func (w *wf) continueAsNew() error {
	gen := w.chain.gen + 1
	w.emit(record.Event{Type: record.EvNote, Reason: fmt.Sprintf("the workflow's history reached %d events: the run continues in execution %d of workflow %s (continue-as-new)",
		workflow.GetInfo(w.ctx).GetCurrentHistoryLength(), gen+1, workflow.GetInfo(w.ctx).WorkflowExecution.ID)})
	k := &Carry{Core: w.core.Carry(), NextSeq: w.log.next, Paused: w.paused, Gen: gen}
	if c := w.chain.collab; c != nil {
		k.Used = c.used
		k.Tasks = c.kids.ids
	}
	if len(w.board) > 0 {
		k.Board = make(map[string]CarriedEntry, len(w.board))
		for key, e := range w.board {
			k.Board[key] = CarriedEntry{Value: e.value, Version: e.version, Author: e.author}
		}
	}
	in := w.in
	in.Carry = k
	if c := w.chain.collab; c != nil {
		in.Memory = c.memoryNow() // the snapshot and the run's writes
	}
	return workflow.NewContinueAsNewError(w.ctx, WorkflowName, in)
}
