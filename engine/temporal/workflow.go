package temporal

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// wf is one run's workflow state: the scheduler core, the attempts in
// flight, the blackboard and the event log. It belongs to the workflow's
// main coroutine; callbacks of its selector run there too.
type wf struct {
	ctx   workflow.Context
	in    RunInput
	plan  *planner.Plan
	core  *sched.Core
	queue string

	atts    [][]*flight // the attempt in flight for each cue's target
	running int
	sel     workflow.Selector

	board    map[string]boardEntry
	log      eventLog
	stopWhy  string // orch stop of the whole run
	paused   bool   // waiting for a person: run/state paused was emitted
	timerAt  time.Time
	timerGen int
	lastEnd  AttemptResult    // the attempt end the core's next AttemptEnded decision records
	version  workflow.Version // the run's behaviour (see the version* constants)
	// idleStops are attempts stopped between activities: apply ends them.
	idleStops []*flight
	chain     chain                // continuing as new (continue.go)
	result    *record.ResultBranch // the run's result branch, once a worker pushed it (worktree_wf.go)
	merging   merging              // merges at fan-in (merge_wf.go)
}

// flight is an attempt whose activities the workflow runs.
type flight struct {
	pos, slot, number int
	agent             *spec.Agent
	cancel            workflow.CancelFunc
	actx              workflow.Context
	stopWhy           string
	busy              bool   // one of its activities is running
	lost              int    // how many workers its current phase lost
	interrupt         string // why its cue is interrupted once its GO ends: a child's GO lost its worker
}

type boardEntry struct {
	value   json.RawMessage
	version int64
	author  string
}

// Versions of the workflow's behaviour (doc.go): runs keep the one they
// started with.
const (
	// changeLostWorker: the workflow, not Temporal's retry policy,
	// dispatches an activity again when its worker is lost, noting it on the
	// attempt; a GO of a cue that is not idempotent is interrupted instead.
	changeLostWorker                   = "orch-lost-worker"
	versionLostWorker workflow.Version = 1
)

// Run is the orch.run workflow.
func Run(ctx workflow.Context, in RunInput) (*RunResult, error) {
	w := &wf{ctx: ctx, in: in, board: map[string]boardEntry{}, log: eventLog{next: FirstSeq}}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, w.log.page); err != nil {
		return nil, err
	}
	w.version = workflow.GetVersion(ctx, changeLostWorker, workflow.DefaultVersion, versionLostWorker)
	w.carryIn(in)
	w.queue = in.TaskQueue
	if w.queue == "" {
		w.queue = DefaultTaskQueue
	}
	plan, err := w.loadPlan()
	if err != nil {
		w.emit(record.Event{Type: record.EvRunState, State: string(record.RunFailed), Reason: err.Error()})
		w.log.done = true
		return w.closing(&RunResult{State: string(record.RunFailed), Reason: err.Error()})
	}
	w.plan = plan
	return w.run()
}

// loadPlan has a worker load the cuelist (checking its hash), then builds
// the plan from what it returned, or takes the one this worker built from
// the same (plancache.go).
func (w *wf) loadPlan() (*planner.Plan, error) {
	actx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{TaskQueue: w.queue,
		StartToCloseTimeout: time.Minute, ScheduleToStartTimeout: 24 * time.Hour,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
	var doc converter.RawValue // a PlanDoc, decoded only when the plan is not kept
	if err := workflow.ExecuteActivity(actx, ActivityPlan, PlanInput{Path: w.in.Path, SpecHash: w.in.SpecHash}).Get(w.ctx, &doc); err != nil {
		return nil, fmt.Errorf("loading the cuelist %s on a worker: %w", w.in.Path, err)
	}
	return plans.plan(doc.Payload())
}

// BuildPlan builds the plan of a loaded PlanDoc, without the planner's
// library graph, as a local run holds it: ordering, reachability and lanes
// are computed from the graph at Build and kept; the graph itself is most
// of a big plan's memory (of a 20,000-cue chain's 51 MB, 35 MB), and a
// worker keeps the plans it built (plancache.go).
func BuildPlan(doc PlanDoc) (*planner.Plan, error) {
	if doc.Cuelist == nil {
		return nil, fmt.Errorf("the worker returned no cuelist")
	}
	for i, c := range doc.Cuelist.Cues {
		c.Index = i
	}
	set := &spec.Set{Agents: doc.Agents, Cuelists: []*spec.Cuelist{doc.Cuelist}}
	p, diags := planner.Build(set, doc.Cuelist)
	if diags.HasErrors() || p == nil {
		return nil, fmt.Errorf("planning cuelist %s: %v", doc.Cuelist.ID, diags)
	}
	return p.WithoutGraph(), nil
}

func (w *wf) run() (*RunResult, error) {
	ctx, p := w.ctx, w.plan
	parallel := attempt.MaxParallel(p.Cuelist, w.in.MaxParallel)
	h := fnv.New64a()
	h.Write([]byte(workflow.GetInfo(ctx).WorkflowExecution.RunID))
	rnd := rand.New(rand.NewPCG(h.Sum64(), 22)) // deterministic on replay: seeded by the workflow's run
	w.core = sched.New(sched.Config{Plan: p, RunID: w.in.RunID, Parallel: parallel, Lookup: boardLookup{w},
		Trivial: trivial, LastBranchOnly: w.lastBranchOnly(), Jitter: func(n time.Duration) time.Duration { return time.Duration(rnd.Int64N(int64(n) + 1)) }})
	w.atts = make([][]*flight, len(p.Order))
	for i, c := range p.Order {
		w.atts[i] = make([]*flight, len(c.Agents))
	}
	w.sel = workflow.NewSelector(ctx)
	w.listen()
	w.begin(workflow.Now(ctx))
	for {
		w.core.Advance(workflow.Now(ctx))
		w.apply()
		if w.stopWhy != "" {
			return w.halt(w.stopWhy, record.RunStopped)
		}
		if w.core.Finished() && w.running == 0 {
			return w.finish()
		}
		if w.continuing() {
			return nil, w.continueAsNew()
		}
		w.core.CheckDuration(workflow.Now(ctx))
		if l := w.core.Exhausted(); l != nil {
			d := record.ExhaustedFor(l)
			w.emit(record.Event{Type: record.EvExhausted, Reason: fmt.Sprintf("%s reached: %s of %s", d.Limit, d.Used, d.Max), Data: d})
			return w.halt(fmt.Sprintf("limit %s reached (%s of %s used)", d.Limit, d.Used, d.Max), record.RunFailed)
		}
		if w.core.Stuck(w.running) && !w.paused {
			w.paused = true
			reason := WaitingPrefix + strings.Join(w.core.Waiting(), ", ")
			if len(w.core.Waiting()) == 0 {
				reason = "nothing can move"
			}
			w.emit(record.Event{Type: record.EvRunState, State: string(record.RunPaused), Reason: reason})
		}
		w.armTimer()
		w.sel.Select(ctx)
	}
}

// trivial: an agent with nothing to do at WARNING and STANDBY (a plain
// agent or a CLI with neither prepare nor ready_check) goes through them
// without an activity, as the local runner does; a jsonl or ACP agent's
// attempt has an activity for each (driver.Trivial). For a plain agent this
// is what it always was, so recorded histories replay unchanged.
func trivial(a *spec.Agent) bool { return driver.Trivial(a) }

// armTimer keeps one timer for the earliest time the core or max_duration
// wants to look again.
func (w *wf) armTimer() {
	now := workflow.Now(w.ctx)
	at := w.core.WakeAt()
	if left, ok := w.core.DurationLeft(now); ok {
		if end := now.Add(max(left, 0)); at.IsZero() || end.Before(at) {
			at = end
		}
	}
	if at.IsZero() || at.Equal(w.timerAt) {
		return
	}
	w.timerAt = at
	w.timerGen++
	gen := w.timerGen
	f := workflow.NewTimer(w.ctx, max(at.Sub(now), time.Millisecond))
	w.sel.AddFuture(f, func(workflow.Future) {
		if gen != w.timerGen { // a later timer replaced it
			return
		}
		w.timerAt = time.Time{}
		w.core.Wake()
	})
}

// resumeFromPause says the run moves again after a person acted.
func (w *wf) resumeFromPause(why string) {
	if w.paused {
		w.paused = false
		w.emit(record.Event{Type: record.EvRunState, State: string(record.RunRunning), Reason: why})
	}
}

// finish ends a run whose cues are all over.
func (w *wf) finish() (*RunResult, error) {
	state, reason := record.RunCompleted, ""
	var failed []string
	for i, c := range w.plan.Order {
		if st, _ := w.core.State(i); st == sched.Failed {
			failed = append(failed, c.ID)
		}
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		state, reason = record.RunFailed, "failed: "+strings.Join(failed, ", ")
	}
	if stopped := w.core.StoppedCues(); len(stopped) > 0 {
		sort.Strings(stopped)
		reason = strings.TrimPrefix(reason+"; stopped: "+strings.Join(stopped, ", "), "; ")
		state = record.RunFailed
	}
	return w.end(state, reason)
}

// halt stops every attempt, waits for them, ends every cue not over and the
// run in state.
func (w *wf) halt(why string, state record.RunState) (*RunResult, error) {
	w.core.Stopping()
	for _, fs := range w.atts {
		for _, f := range fs {
			if f != nil {
				w.stop(f, "the run was stopped: "+why)
			}
		}
	}
	w.apply()
	for w.running > 0 {
		w.sel.Select(w.ctx)
		w.apply()
	}
	w.core.EndAll(sched.Stopped, "the run was stopped: "+why)
	w.apply()
	return w.end(state, why)
}

func (w *wf) end(state record.RunState, reason string) (*RunResult, error) {
	w.emit(record.Event{Type: record.EvRunState, State: string(state), Reason: reason})
	w.log.done = true
	res := &RunResult{State: string(state), Reason: reason}
	for i, c := range w.plan.Order {
		st, why := w.core.State(i)
		res.Cues = append(res.Cues, record.CueOutcome{ID: c.ID, State: record.CueState(st), Reason: why})
	}
	// The follower reads the last events with a query: a query needs a
	// running workflow, so it waits a moment for the follower to catch up.
	_ = workflow.Sleep(w.ctx, followerGrace)
	return w.closing(res)
}

// followerGrace is how long the finished workflow stays queryable.
const followerGrace = 5 * time.Second

func (w *wf) emit(ev record.Event) int64 {
	ev.RunID = w.in.RunID
	ev.At = workflow.Now(w.ctx)
	if ev.Type == record.EvRunState {
		w.stateChanged(ev.State)
	}
	return w.log.add(ev)
}

// boardLookup is what the core reads: the workflow's blackboard, and no
// cooldowns beyond the run's own (cooldowns across runs are the local
// engine's).
type boardLookup struct{ w *wf }

func (l boardLookup) Conditions(cue string, keys []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for _, k := range keys {
		if e, ok := l.w.board[k]; ok {
			out[k] = e.value
		}
	}
	return out, nil
}

func (boardLookup) CooldownUntil(string) time.Time { return time.Time{} }
