package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/sched"
)

// commandPoll is how often the owner looks for orch go and orch stop.
const commandPoll = 200 * time.Millisecond

// Options describe one run.
type Options struct {
	Plan     *planner.Plan
	Recorder record.Recorder
	RunID    string         // empty: a new id
	Inputs   map[string]any // run parameters: the cuelist's inputs after --set
	SpecPath string         // absolute path of the cuelist file, recorded for resume
	SpecHash string
	DBPath   string // absolute path of the database, given to agents as ORCH_DB

	MaxParallel int           // 0: the cuelist's max_parallel, else DefaultMaxParallel
	KillGrace   time.Duration // 0: the cuelist's defaults.kill_grace, else DefaultKillGrace

	// Resume continues a recorded run instead of starting one: completed cues
	// are kept, the others run again.
	Resume *record.RunRecord

	// Approve is called for a manual cue standing by, when a person can be
	// asked (a terminal). It returns true for GO. Nil: nobody can be asked
	// now; the cue waits for `orch go`, and the run pauses when nothing else
	// can move.
	Approve func(ctx context.Context, cue string, agents []string) bool

	// Owner is the process running the run; its Token is the lease renewed
	// with Recorder.Heartbeat. A zero Owner means this process, a new token.
	Owner record.Owner

	// Ask puts a question that bubbled up to the top to the person, when a
	// person can be asked (a terminal). It runs on its own goroutine and
	// returns the answer, or ok false (ctx ends when the question is answered
	// otherwise, with orch answer, or times out). Nil: questions wait for
	// orch answer.
	Ask func(ctx context.Context, q QuestionPrompt) (answer string, ok bool)

	// ProjectRoot is the directory handoff artifacts are relative to (their
	// paths must stay inside it; their hashes are checked); agents get it as
	// ORCH_ROOT. Empty: the current directory.
	ProjectRoot string

	// Observe sees every event this run commits, once it is committed (for
	// live progress), in seq order, before Run returns. Events other
	// processes commit to the run (an agent's orch bb set) are not seen:
	// their seqs are the gaps. It is called from a goroutine of its own,
	// one call at a time: the run does not wait for it (a slow terminal
	// or a full pipe delays the display, not the agents).
	Observe func(record.Event)

	// StartedWith are more events recorded in a new run's first commit,
	// after its run/started (their RunID is the run's): what the caller
	// records about the run as it starts (orch run: each cue's definition's
	// fingerprint). Observe sees them with the others, so the progress
	// display finds no gap to read back from the store. Not recorded when
	// the run is resumed.
	StartedWith []record.Event

	// AgentEnv returns more environment variables for the processes of one
	// attempt (after the others, so they win): orch run gives each attempt
	// its TRACEPARENT with it. Called as each process starts, from any
	// goroutine; nil: none.
	AgentEnv func(cue, agent string, attempt int) []string
}

// Result is how a run ended.
type Result struct {
	RunID   string
	State   record.RunState
	Reason  string
	Waiting []string            // manual cues waiting for GO when the run paused
	Cues    []record.CueOutcome // the plan's cues as the run left them, in plan order
	// ResultBranch is where the worktree branches of a completed run were
	// merged (nil: none).
	ResultBranch *record.ResultBranch
}

// result is the run's outcome, with every plan cue's (what orch run prints
// needs no read of the store).
func (r *run) result(state record.RunState, reason string, waiting []string) *Result {
	res := &Result{RunID: r.id, State: state, Reason: r.redact.Text(reason), Waiting: waiting, Cues: make([]record.CueOutcome, len(r.plan.Order)),
		ResultBranch: r.resultBranch}
	for i, c := range r.plan.Order {
		st, why := r.core.State(i)
		res.Cues[i] = record.CueOutcome{ID: c.ID, State: record.CueState(st), Reason: r.redact.Text(why)}
	}
	return res
}

// run is the I/O shell of one run: it feeds the scheduler core (core)
// what happens, records what the core decides, then carries it out with the
// attempts, the store and the observer. It is the composition of its
// parts, each a type of its own that says which goroutines touch it:
// scheduling (the cores, the loop's), recording (recording.go: pending
// decisions, commit, observer), agents (the processes: agentProc,
// driver.Agents) and requests (how the hub reaches the loop).
type run struct {
	opts Options
	plan *planner.Plan
	id   string

	scheduling
	recording
	agents
	requests
	channels
	merging
}

// scheduling is the loop's: the core and what the loop knows of attempts.
type scheduling struct {
	core     *sched.Core               // the scheduling: cue phases, budgets, locks, retries, limits, credits
	tasks    *sched.Tasks[*attemptRun] // the task tree and the open questions
	atts     [][]*attemptRun           // the attempt running for each cue's target, by plan position
	reports  chan report               // attempts and prompts report here
	parallel int
	running  int          // attempt goroutines not yet reported finished
	polledAt time.Time    // when the store was last asked for commands
	used     record.Usage // the run's totals of what its attempts reported (the core keeps the limits)
}

// agents are the run's processes: attempt goroutines, the agents'
// processes that serve attempt after attempt (host.agents), the sweeper.
// envCache is shared under its lock.
type agents struct {
	host     *host // the run as its attempts and agents see it
	grace    time.Duration
	workDir  string         // ORCH_OUTPUT files
	active   sync.WaitGroup // attempt goroutines
	sweeper  *proc.Sweeper
	envMu    sync.Mutex
	envCache map[string][]string // per agent: orch's environment and the agent's env
}

// requests is how the hub reaches the loop: the hub's requests (about the
// task tree, questions, credits) arrive on hub and are served by the loop,
// which keeps nodes and openQuestions (the I/O side of what sched.Tasks
// decides). root is read-only.
type requests struct {
	hub           chan request
	loopDone      chan struct{} // closed when the loop is over: requests get no answer
	nodes         map[sched.NodeID]*node
	openQuestions map[string]*openQuestion
	root          *os.Root     // the project, for handoff artifacts
	watches       boardWatches // the attempts watching the blackboard
	loopCalls     atomic.Int64 // requests made to the loop (call), counted for tests
}

// Run executes the plan until every cue has ended, the run pauses for a
// person, or ctx is cancelled (then every agent is stopped). A Recorder
// error ends the run with that error: nothing is done that is not recorded.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if err := proc.Supported(); err != nil {
		return nil, err
	}
	if err := driver.Check(opts.Plan); err != nil {
		return nil, err
	}
	proc.BecomeSubreaper()
	r, err := newRun(opts)
	if err != nil {
		return nil, err
	}
	if opts.Observe != nil {
		r.observer = newObserver(opts.Observe)
		defer r.observer.close() // every event shown before Run returns
	}
	defer os.RemoveAll(r.workDir)
	defer r.removeWorktrees() // once its agents are gone; the branches stay
	defer r.storeWaits.cancel(errRunOver)
	defer context.AfterFunc(ctx, r.boundAfterStop)()
	if err := r.start(ctx); err != nil {
		var re *RecordError
		if opts.Resume == nil && errors.As(err, &re) { // there is no run to resume
			return nil, fmt.Errorf("starting run %s: %w", r.id, re.Err)
		}
		return nil, err
	}
	r.sweeper.Start()
	stopWatch := r.watchOutputLog()
	res, err := r.loop(ctx)
	close(r.loopDone)
	r.host.agents.Close()
	r.host.mcp.close()
	stopWatch()
	r.stopSweeper()
	if testHookRunOver != nil {
		testHookRunOver(r)
	}
	if err == nil {
		err = r.flushLog(ctx)
	}
	return res, err
}

// testHookRunOver, set by tests, sees a run once its attempts are over
// (what they left behind in the hub: watches).
var testHookRunOver func(r *run)

func newRun(opts Options) (*run, error) {
	p := opts.Plan
	r := &run{opts: opts, plan: p, id: opts.RunID}
	r.reports = make(chan report, 64)
	if r.id == "" {
		r.id = record.NewRunID()
	}
	if r.opts.Owner.Token == "" {
		host, _ := os.Hostname()
		r.opts.Owner = record.Owner{PID: os.Getpid(), Host: host, Token: record.NewRunID() + record.NewRunID()}
	}
	r.parallel = attempt.MaxParallel(p.Cuelist, opts.MaxParallel)
	r.grace = attempt.KillGrace(p.Cuelist, opts.KillGrace)
	dir, err := os.MkdirTemp("", workDirPrefix(r.id))
	if err != nil {
		return nil, fmt.Errorf("creating the run's work directory: %w", err)
	}
	r.workDir = dir
	r.redact = redact.ForPlan(p)
	r.storeWaits.init()
	r.rec = redactingRecorder{Recorder: boundRecorder{Recorder: opts.Recorder, w: &r.storeWaits}, d: r.redact}
	r.runID = r.id
	if opts.Resume != nil { // the recorded inputs were redacted
		r.opts.Inputs = r.redact.Restore(opts.Inputs)
	}
	r.sweeper = proc.NewSweeper(r.id, r.noteOrphan)
	r.tasks = newTasks()
	r.agents.host = &host{id: r.id, plan: p, grace: r.grace, workDir: r.workDir, sweeper: r.sweeper, active: &r.active, hostServices: r, mcp: &mcpEndpoint{},
		agents: driver.NewAgents(driver.Run{ID: r.id, Grace: r.grace, Sweeper: r.sweeper, MessageRate: r.messageRate(), Host: runHost{r}})}
	r.broken.done = make(chan struct{})
	r.hub, r.loopDone = make(chan request), make(chan struct{})
	r.nodes, r.openQuestions = map[sched.NodeID]*node{}, map[string]*openQuestion{}
	if r.opts.ProjectRoot, err = filepath.Abs(opts.ProjectRoot); err != nil {
		return nil, err
	}
	if r.root, err = os.OpenRoot(r.opts.ProjectRoot); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("opening the project root for handoff artifacts: %w", err)
	}
	if agents := usesWorktrees(p); len(agents) > 0 { // refused before anything is recorded or started
		if r.host.worktrees, err = openWorktrees(r.id, r.opts.ProjectRoot, agents); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	r.atts = make([][]*attemptRun, len(p.Order))
	for i, c := range p.Order {
		r.atts[i] = make([]*attemptRun, len(c.Agents))
	}
	return r, nil
}

// workDirPrefix names a run's work directories (ORCH_OUTPUT files) in the
// system's temporary directory: one per process that ran the run.
func workDirPrefix(runID string) string { return "orch-run-" + runID + "-" }

// RemoveWorkDirs removes the work directories that earlier owners of a run
// left behind when they were killed (all of them but keep): for orch resume
// and orch stop of a run whose owner died.
func RemoveWorkDirs(runID, keep string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), workDirPrefix(runID)+"*"))
	for _, d := range dirs {
		if d != keep {
			_ = os.RemoveAll(d)
		}
	}
}

// start records the run (or, resuming, restores the recorded cue states).
func (r *run) start(ctx context.Context) error {
	host, _ := os.Hostname()
	began := time.Now()
	r.core = sched.New(sched.Config{Plan: r.plan, RunID: r.id, Parallel: r.parallel, CanAsk: r.opts.Approve != nil, Trivial: driver.Trivial,
		Lookup: lookup{r: r, ctx: ctx}})
	if rec := r.opts.Resume; rec != nil {
		r.used = rec.Used
		r.core.RestoreUsage(rec.Used.Credits, rec.Used.CostUSD)
		r.restoreTasks(rec)
		RemoveWorkDirs(r.id, r.workDir)
		if killed := proc.KillLeftovers(r.id); len(killed) > 0 {
			r.emit(record.Event{Type: record.EvNote, Reason: fmt.Sprintf("stopped %d process(es) left running by the run's previous owner: pids %v", len(killed), killed)})
		}
		r.emit(record.Event{Type: record.EvRunState, State: string(record.RunRunning), Reason: fmt.Sprintf("continued by process %d on %s", os.Getpid(), host)})
		for _, c := range r.plan.Order { // a fan-out's items are restored with it
			if cr, ok := rec.Cues[c.ID]; ok {
				r.restore(c.ID, cr, rec)
			}
		}
		r.core.Begin(began)
		r.apply(ctx, nil)
		return r.flush(ctx)
	}
	data := record.RunStartedData{Cuelist: r.plan.Cuelist.ID, SpecPath: r.opts.SpecPath, SpecHash: r.opts.SpecHash, Root: r.opts.ProjectRoot,
		Inputs: r.opts.Inputs, OwnerPID: r.opts.Owner.PID, OwnerHost: r.opts.Owner.Host, OwnerToken: r.opts.Owner.Token}
	for _, c := range r.plan.Order {
		data.Cues = append(data.Cues, record.CueInfo{ID: c.ID, Agents: c.Agents, After: c.WaitsFor(), Manual: c.Manual()})
	}
	r.core.Begin(began)
	events := append([]record.Event{{Type: record.EvRunStarted, Data: data}}, r.opts.StartedWith...)
	return r.record(ctx, events...)
}

// restore gives the core a recorded cue (see sched.Core.Restore), with
// its items when it fanned out.
func (r *run) restore(id string, c record.CueRecord, run *record.RunRecord) {
	rec := r.recorded(c)
	if r.plan.ByID[id].ForEach != nil {
		rec.Items, rec.ItemAttempts = r.recordedItems(id, run), c.ItemAttempts
	}
	r.core.Restore(id, rec)
}

// recorded is a cue record as the core takes it back.
func (r *run) recorded(c record.CueRecord) sched.Recorded {
	rec := sched.Recorded{State: sched.State(c.State), Reason: c.Reason, Attempts: c.Attempts, AgentAttempts: c.AgentAttempts,
		Outputs: r.redact.Restore(c.Outputs), Approved: c.Approved}
	for _, a := range c.Running {
		rec.Running = append(rec.Running, sched.Running{Agent: a.Agent, Number: a.Number})
	}
	for _, a := range c.Paused {
		rec.Paused = append(rec.Paused, sched.Running{Agent: a.Agent, Number: a.Number})
	}
	return rec
}

// restoreTasks closes what the run's previous owner left open of its child
// tasks and questions: children in flight ended with it (their parents run
// again and start new ones, numbered after them), and open questions are
// withdrawn (an agent that asks again gets a new one).
func (r *run) restoreTasks(rec *record.RunRecord) {
	var ids []string
	for id, c := range rec.Cues {
		if !strings.Contains(id, "/") {
			continue
		}
		ids = append(ids, id)
		for _, a := range c.Running {
			r.emit(record.Event{Type: record.EvAttemptEnded, Cue: id, Agent: a.Agent, Attempt: a.Number, State: string(record.AttemptInterrupted),
				Reason: "its run's owner stopped while it ran", Data: record.AttemptEndedData{Class: "interrupted"}})
		}
		if !c.State.Final() && c.State != record.CueInterrupted {
			r.emit(record.Event{Type: record.EvCueState, Cue: id, State: string(record.CueInterrupted), Reason: "its run's owner stopped while it ran; its parent runs again"})
		}
	}
	r.tasks.Continue(ids, rec.Questions)
	for _, id := range rec.OpenQuestions {
		r.emit(record.Event{Type: record.EvQuestionClosed, State: record.QuestionWithdrawn, Reason: "its run's owner stopped; an agent that asks again gets a new question",
			Data: record.AnswerData{ID: id}})
	}
}

// loop is the run's single owner of state: it starts what can start, then
// waits for an attempt to report, a timer, or cancellation.
func (r *run) loop(ctx context.Context) (*Result, error) {
	// One timer for the whole loop, set again each time round: a new one per
	// wait was two allocations per decision. (Since Go 1.23 a stopped timer's
	// channel holds nothing stale, so Reset needs no draining.)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		r.advance(ctx)
		_ = r.flush(ctx)
		if err := r.broken.get(); err != nil {
			return nil, r.abandon(ctx, err)
		}
		if r.finished() {
			return r.finish(ctx)
		}
		r.core.CheckDuration(time.Now())
		if l := r.core.Exhausted(); l != nil {
			return r.outOfLimits(ctx, record.ExhaustedFor(l))
		}
		if time.Since(r.polledAt) >= commandPoll {
			r.polledAt = time.Now()
			if err := r.renewLease(ctx); err != nil {
				return nil, r.abandon(ctx, err)
			}
			r.pollBoard() // another process's board writes, for the watchers
			stop, moved := r.commands(ctx)
			if stop != "" {
				return r.stopped(ctx, stop)
			}
			if moved {
				continue // `orch go` arrived: advance again at once
			}
		}
		if r.core.Stuck(r.running) {
			return r.pause(ctx)
		}
		wait := time.Hour
		if at := r.core.WakeAt(); !at.IsZero() {
			wait = max(time.Until(at), 0)
		}
		if at := r.tasks.NextDeadline(); !at.IsZero() { // a question due
			wait = max(min(wait, time.Until(at)), 0)
		}
		wait = min(wait, commandPoll) // orch go and orch stop arrive through the store
		if left, ok := r.core.DurationLeft(time.Now()); ok {
			wait = max(min(wait, left), 0)
		}
		timer.Reset(wait)
		select {
		case rep := <-r.reports:
			r.handle(ctx, rep)
			for more := true; more; { // take whatever else has arrived: one commit for all
				select {
				case rep := <-r.reports:
					r.handle(ctx, rep)
				default:
					more = false
				}
			}
		case req := <-r.hub:
			req.serveOn(ctx, r)
		case <-timer.C:
			r.core.Wake()
			r.expireQuestions(time.Now())
		case <-ctx.Done():
			return r.stopped(ctx, "interrupted by a signal")
		case <-r.broken.done: // an attempt or the output log could not be recorded
		}
		timer.Stop()
	}
}

// outOfLimits ends a run that ran out of max_credits, max_cost_usd or max_duration: no
// new GO was given since (step checks), everything is stopped, and the run
// fails naming the limit.
func (r *run) outOfLimits(ctx context.Context, d record.ExhaustedData) (*Result, error) {
	r.emit(record.Event{Type: record.EvExhausted, Reason: fmt.Sprintf("%s reached: %s of %s", d.Limit, d.Used, d.Max), Data: d})
	return r.halt(ctx, fmt.Sprintf("limit %s reached (%s of %s used)", d.Limit, d.Used, d.Max), record.RunFailed)
}

// finished reports whether every cue has reached a final state.
func (r *run) finished() bool { return r.core.Finished() && r.running == 0 }

func (r *run) finish(ctx context.Context) (*Result, error) {
	state, reason := record.RunCompleted, ""
	var failed []string
	for i, c := range r.plan.Order {
		if st, _ := r.core.State(i); st == sched.Failed {
			failed = append(failed, c.ID)
		}
	}
	if len(failed) > 0 {
		state, reason = record.RunFailed, "failed: "+join(failed)
	}
	if stopped := r.core.StoppedCues(); len(stopped) > 0 { // by orch stop RUN CUE: the run did not do all it was for
		reason = strings.TrimPrefix(reason+"; stopped: "+join(stopped), "; ")
		state = record.RunFailed
	}
	if why := r.core.ResultFailure(); why != "" { // its cues completed, their branches do not merge
		state, reason = record.RunFailed, "the run's result could not be merged: "+why
	}
	r.waitActive(ctx)
	if err := r.record(ctx, record.Event{Type: record.EvRunState, State: string(state), Reason: reason}); err != nil {
		return nil, err
	}
	if err := r.flushLog(ctx); err != nil {
		return nil, err
	}
	return r.result(state, reason, nil), nil
}

// pause ends the process's part of a run that waits for a person: manual
// cues stand down (their agents are stopped) and the run is paused; `orch go`
// continues it.
func (r *run) pause(ctx context.Context) (*Result, error) {
	waiting := r.core.Waiting()
	r.core.Park() // the attempts prepared for a GO are stopped, paused: they get the GO
	r.stopAll(ctx, "the run is paused")
	reason := "waiting for GO: " + join(waiting)
	if len(waiting) == 0 {
		reason = "nothing can move"
	}
	r.core.StandDown("stood down while the run is paused")
	r.apply(ctx, nil)
	if err := r.record(ctx, record.Event{Type: record.EvRunState, State: string(record.RunPaused), Reason: reason}); err != nil {
		return nil, err
	}
	if err := r.flushLog(ctx); err != nil {
		return nil, err
	}
	return r.result(record.RunPaused, reason, waiting), nil
}

// stopped is the cascade stop (a signal, or orch stop): every agent is told
// and stopped with its whole process group, unfinished cues are marked
// stopped and the run ends stopped.
func (r *run) stopped(ctx context.Context, why string) (*Result, error) {
	return r.halt(ctx, why, record.RunStopped)
}

// halt stops everything as stopped does and ends the run in state.
func (r *run) halt(ctx context.Context, why string, state record.RunState) (*Result, error) {
	// Every attempt is told before the agents are closed: an attempt that
	// saw its agent's process closed first would end with "the run ended"
	// and never tell its agent why (coord.stop, recorded).
	r.haltAttempts("the run was stopped: " + why)
	agentsGone := make(chan struct{})
	go func() { r.host.agents.Halt(); close(agentsGone) }() // at the same time as the attempts
	r.stopAll(ctx, "the run was stopped: "+why)
	<-agentsGone
	r.core.EndAll(sched.Stopped, "the run was stopped: "+why)
	r.apply(ctx, nil)
	if err := r.record(ctx, record.Event{Type: record.EvRunState, State: string(state), Reason: why}); err != nil {
		return nil, err
	}
	if err := r.flushLog(ctx); err != nil {
		return nil, err
	}
	return r.result(state, why, nil), nil
}

// stopAll stops every attempt still running and waits for them to report.
func (r *run) stopAll(ctx context.Context, why string) {
	r.haltAttempts(why)
	_ = r.flush(ctx)
	for r.running > 0 {
		select {
		case rep := <-r.reports:
			r.handle(ctx, rep)
		case req := <-r.hub:
			req.serveOn(ctx, r)
		}
		_ = r.flush(ctx)
	}
	r.waitActive(ctx)
}

// haltAttempts tells every attempt still running to stop, without waiting.
func (r *run) haltAttempts(why string) {
	r.core.Stopping()
	r.haltMerges(why)
	for _, atts := range r.atts {
		for _, a := range atts {
			if a != nil {
				a.stop(why)
			}
		}
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("runner: cannot encode %T: %v", v, err)) // our own types always encode
	}
	return b
}

func join(ids []string) string {
	sort.Strings(ids)
	return strings.Join(ids, ", ")
}

// CheckDrivers refuses a plan with an agent whose protocol orch has no
// driver for (driver.Check).
func CheckDrivers(p *planner.Plan) error { return driver.Check(p) }
