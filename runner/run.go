package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/sched"
)

// Defaults for what a cuelist does not say.
const (
	DefaultMaxParallel    = 4
	DefaultAckTimeout     = 5 * time.Second
	DefaultStandbyTimeout = time.Minute
	DefaultTimeout        = 30 * time.Minute
	DefaultKillGrace      = 5 * time.Second
	MaxLine               = 1 << 20 // the longest protocol line or output line accepted

	commandPoll = 200 * time.Millisecond // how often the owner looks for orch go and orch stop
)

// Options describe one run.
type Options struct {
	Plan     *planner.Plan
	Recorder Recorder
	RunID    string         // empty: a new id
	Inputs   map[string]any // run parameters: the cuelist's inputs after --set
	SpecPath string         // absolute path of the cuelist file, recorded for resume
	SpecHash string
	DBPath   string // absolute path of the database, given to agents as ORCH_DB

	MaxParallel int           // 0: the cuelist's max_parallel, else DefaultMaxParallel
	KillGrace   time.Duration // 0: the cuelist's defaults.kill_grace, else DefaultKillGrace

	// Resume continues a recorded run instead of starting one: completed cues
	// are kept, the others run again.
	Resume *RunRecord

	// Approve is called for a manual cue standing by, when a person can be
	// asked (a terminal). It returns true for GO. Nil: nobody can be asked
	// now; the cue waits for `orch go`, and the run pauses when nothing else
	// can move.
	Approve func(ctx context.Context, cue string, agents []string) bool

	// Owner is the process running the run; its Token is the lease renewed
	// with Recorder.Heartbeat. A zero Owner means this process, a new token.
	Owner Owner

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
	// live progress), in seq order. Events other processes commit to the
	// run (an agent's orch bb set) are not seen: their seqs are the gaps.
	// Calls are serialized; it must not block.
	Observe func(Event)
}

// Result is how a run ended.
type Result struct {
	RunID   string
	State   RunState
	Reason  string
	Waiting []string     // manual cues waiting for GO when the run paused
	Cues    []CueOutcome // the plan's cues as the run left them, in plan order
}

// CueOutcome is where a run left one of its plan's cues.
type CueOutcome struct {
	ID     string
	State  CueState
	Reason string
}

// result is the run's outcome, with every plan cue's (what orch run prints
// needs no read of the store).
func (r *run) result(state RunState, reason string, waiting []string) *Result {
	res := &Result{RunID: r.id, State: state, Reason: r.redact.Text(reason), Waiting: waiting, Cues: make([]CueOutcome, len(r.plan.Order))}
	for i, c := range r.plan.Order {
		st, why := r.core.State(i)
		res.Cues[i] = CueOutcome{ID: c.ID, State: CueState(st), Reason: r.redact.Text(why)}
	}
	return res
}

// NewRunID returns a fresh run id: 12 hex digits, so a short prefix is unique.
func NewRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// run is the I/O shell of one run: it feeds the scheduler core (core)
// what happens, records what the core decides, then carries it out with the
// attempts, the store and the observer. Its fields are grouped by concern,
// each group a type of its own that says which goroutines touch it.
type run struct {
	opts Options
	plan *planner.Plan
	id   string
	host *host // what its attempts see of it

	scheduling
	recording
	agents
	requests
	usage
}

// scheduling is the loop's: the core and what the loop knows of attempts.
type scheduling struct {
	core     *sched.Core  // the scheduling: cue phases, budgets, locks, retries, limits
	atts     [][]*attempt // the attempt running for each cue's target, by plan position
	reports  chan report  // attempts and prompts report here
	parallel int
	running  int       // attempt goroutines not yet reported finished
	polledAt time.Time // when the store was last asked for commands
}

// recording is how the run records: decisions pending their commit, the
// observer's order, the lease, a recorder failure. pending, actions, goes
// and the lease times are the loop's; observeMu orders the commits of all
// goroutines; broken may be set by any.
type recording struct {
	rec       Recorder
	redact    *Redactor
	observeMu sync.Mutex
	pending   []Event      // decided, not yet committed
	actions   []func()     // to do once pending is committed
	goes      []func()     // GO orders, carried out after the actions (see flush)
	broken    brokenRecord // a recorder failure: the run cannot go on
	beatAt    time.Time    // when the lease was last tried
	beatOK    time.Time    // when it was last renewed
}

// agents are the run's processes: attempt goroutines, agent processes, the
// sweeper. procs and envCache are shared under their locks.
type agents struct {
	grace    time.Duration
	workDir  string         // ORCH_OUTPUT files
	active   sync.WaitGroup // attempt goroutines
	cascade  bool           // the whole run is being stopped: agents get no grace beyond the kill grace
	sweeper  *proc.Sweeper
	procsMu  sync.Mutex
	procs    map[string]*agentProcess // jsonl agents' processes, by agent
	allProcs []*agentProcess          // every agent process started, to wait for at the end
	envMu    sync.Mutex
	envCache map[string][]string // per agent: orch's environment and the agent's env
}

// requests is the hub's: the task tree and the open questions, shared by
// the attempts' goroutines (tree and questions under their locks).
type requests struct {
	tree      *tree    // the tasks: cues' agents and their children
	root      *os.Root // the project, for handoff artifacts
	qmu       sync.Mutex
	questions map[string]*question // open questions, by id
	asked     int                  // questions asked in the run so far (q1, q2, ...)
}

// usage counts what the run used against its limits (status.usage from
// the attempts' goroutines, max_duration from the loop).
type usage struct {
	usageMu   sync.Mutex
	used      Usage                         // the run's totals so far (what its attempts reported)
	exhausted atomic.Pointer[ExhaustedData] // the limit the run ran out of: no more GO
	limitHit  chan struct{}                 // tells the loop that exhausted was set
}

// Run executes the plan until every cue has ended, the run pauses for a
// person, or ctx is cancelled (then every agent is stopped). A Recorder
// error ends the run with that error: nothing is done that is not recorded.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if err := proc.Supported(); err != nil {
		return nil, err
	}
	proc.BecomeSubreaper()
	r, err := newRun(opts)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(r.workDir)
	defer r.removeWorktrees() // once its agents are gone; the branches stay
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
	r.closeAgents()
	stopWatch()
	r.stopSweeper()
	if err == nil {
		err = r.flushLog(ctx)
	}
	return res, err
}

func newRun(opts Options) (*run, error) {
	p := opts.Plan
	r := &run{opts: opts, plan: p, id: opts.RunID}
	r.reports = make(chan report, 64)
	if r.id == "" {
		r.id = NewRunID()
	}
	if r.opts.Owner.Token == "" {
		host, _ := os.Hostname()
		r.opts.Owner = Owner{PID: os.Getpid(), Host: host, Token: NewRunID() + NewRunID()}
	}
	r.parallel = opts.MaxParallel
	if r.parallel <= 0 {
		r.parallel = p.Cuelist.MaxParallel
	}
	if r.parallel <= 0 {
		r.parallel = DefaultMaxParallel
	}
	r.grace = opts.KillGrace
	if r.grace <= 0 {
		r.grace = p.Cuelist.Defaults.KillGrace.D()
	}
	if r.grace <= 0 {
		r.grace = DefaultKillGrace
	}
	dir, err := os.MkdirTemp("", workDirPrefix(r.id))
	if err != nil {
		return nil, fmt.Errorf("creating the run's work directory: %w", err)
	}
	r.workDir = dir
	r.redact = RedactorFor(p)
	r.rec = redactingRecorder{Recorder: opts.Recorder, d: r.redact}
	if opts.Resume != nil { // the recorded inputs were redacted
		r.opts.Inputs = r.redact.Restore(opts.Inputs)
	}
	r.sweeper = proc.NewSweeper(r.id, r.noteOrphan)
	r.tree = newTree()
	r.host = &host{id: r.id, plan: p, grace: r.grace, workDir: r.workDir, sweeper: r.sweeper, active: &r.active, tree: r.tree, hostServices: r}
	r.limitHit = make(chan struct{}, 1)
	r.broken.done = make(chan struct{})
	r.questions = map[string]*question{}
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
	r.procs = map[string]*agentProcess{}
	r.atts = make([][]*attempt, len(p.Order))
	for i, c := range p.Order {
		r.atts[i] = make([]*attempt, len(c.Agents))
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
	r.core = sched.New(sched.Config{Plan: r.plan, RunID: r.id, Parallel: r.parallel, CanAsk: r.opts.Approve != nil, Trivial: trivial,
		Lookup: lookup{r: r, ctx: ctx}})
	if rec := r.opts.Resume; rec != nil {
		r.used, r.asked = rec.Used, rec.Questions
		r.restoreTasks(rec)
		RemoveWorkDirs(r.id, r.workDir)
		if killed := proc.KillLeftovers(r.id); len(killed) > 0 {
			r.emit(Event{Type: EvNote, Reason: fmt.Sprintf("stopped %d process(es) left running by the run's previous owner: pids %v", len(killed), killed)})
		}
		r.emit(Event{Type: EvRunState, State: string(RunRunning), Reason: fmt.Sprintf("continued by process %d on %s", os.Getpid(), host)})
		for id, c := range rec.Cues {
			r.restore(id, c)
		}
		r.core.Begin(began)
		r.apply(ctx, nil)
		return r.flush(ctx)
	}
	data := RunStartedData{Cuelist: r.plan.Cuelist.ID, SpecPath: r.opts.SpecPath, SpecHash: r.opts.SpecHash, Root: r.opts.ProjectRoot,
		Inputs: r.opts.Inputs, OwnerPID: r.opts.Owner.PID, OwnerHost: r.opts.Owner.Host, OwnerToken: r.opts.Owner.Token}
	for _, c := range r.plan.Order {
		data.Cues = append(data.Cues, CueInfo{ID: c.ID, Agents: c.Agents})
	}
	r.core.Begin(began)
	return r.record(ctx, Event{Type: EvRunStarted, Data: data})
}

// restore gives the core a recorded cue (see sched.Core.Restore).
func (r *run) restore(id string, c CueRecord) {
	rec := sched.Recorded{State: sched.State(c.State), Reason: c.Reason, Attempts: c.Attempts, AgentAttempts: c.AgentAttempts,
		Outputs: r.redact.Restore(c.Outputs), Approved: c.Approved}
	for _, a := range c.Running {
		rec.Running = append(rec.Running, sched.Running{Agent: a.Agent, Number: a.Number})
	}
	r.core.Restore(id, rec)
}

// restoreTasks closes what the run's previous owner left open of its child
// tasks and questions: children in flight ended with it (their parents run
// again and start new ones, numbered after them), and open questions are
// withdrawn (an agent that asks again gets a new one).
func (r *run) restoreTasks(rec *RunRecord) {
	var ids []string
	for id, c := range rec.Cues {
		if !strings.Contains(id, "/") {
			continue
		}
		ids = append(ids, id)
		for _, a := range c.Running {
			r.emit(Event{Type: EvAttemptEnded, Cue: id, Agent: a.Agent, Attempt: a.Number, State: string(AttemptInterrupted),
				Reason: "its run's owner stopped while it ran", Data: AttemptEndedData{Class: "interrupted"}})
		}
		if !c.State.Final() && c.State != CueInterrupted {
			r.emit(Event{Type: EvCueState, Cue: id, State: string(CueInterrupted), Reason: "its run's owner stopped while it ran; its parent runs again"})
		}
	}
	r.tree.continueNumbering(ids)
	for _, id := range rec.OpenQuestions {
		r.emit(Event{Type: EvQuestionClosed, State: QuestionWithdrawn, Reason: "its run's owner stopped; an agent that asks again gets a new question",
			Data: AnswerData{ID: id}})
	}
}

// emit queues events to commit with the next flush. The loop batches what
// one iteration decides into one transaction.
func (r *run) emit(events ...Event) {
	now := time.Now().UTC()
	for i := range events {
		events[i].RunID = r.id
		if events[i].At.IsZero() {
			events[i].At = now
		}
	}
	r.pending = append(r.pending, events...)
}

// then queues an action (starting an attempt, an order to an agent) to run
// once the events queued before it are committed: a decision is recorded
// before it is acted on.
func (r *run) then(action func()) { r.actions = append(r.actions, action) }

// thenGo queues a GO order to an attempt, carried out after the other
// actions (see flush).
func (r *run) thenGo(order func()) { r.goes = append(r.goes, order) }

// flush commits the queued events in one transaction, carries out the
// queued actions, then shows the events. If the commit fails, nothing is
// acted on and the run ends with the error. The display comes after the
// actions because it is not a decision: a GO reaches its agent without
// waiting for lines written to a terminal or a CI log.
func (r *run) flush(ctx context.Context) error {
	events, actions, goes := r.pending, r.actions, r.goes
	r.pending, r.actions, r.goes = nil, nil, nil
	if r.broken.get() != nil {
		// The run is ending: what is still decided is recorded if it can
		// be, and nothing new is started (stopAll stops what runs).
		actions, goes = nil, nil
	}
	return r.commit(ctx, events, func() {
		for _, act := range actions {
			act()
		}
		for _, order := range goes {
			order()
		}
	})
}

// record emits events and commits them at once.
func (r *run) record(ctx context.Context, events ...Event) error {
	r.emit(events...)
	return r.flush(ctx)
}

// publish commits events and shows them to the observer; attempts call it
// from their own goroutines for notes.
func (r *run) publish(ctx context.Context, events ...Event) error {
	return r.commit(ctx, events, nil)
}

// commit records events, runs act once they are recorded, then shows them
// to the observer. The observer's lock is held from the commit on, so the
// observer sees events in the order they were recorded (their seq order).
func (r *run) commit(ctx context.Context, events []Event, act func()) error {
	if len(events) > 0 {
		if r.opts.Observe != nil {
			r.observeMu.Lock()
			defer r.observeMu.Unlock()
		}
		// A decision is committed even while the run is being stopped.
		// One that is not recorded is not acted on, and the run ends.
		if err := r.rec.Append(context.WithoutCancel(ctx), events...); err != nil {
			return r.recordFailed(err)
		}
	}
	if act != nil {
		act()
	}
	if r.opts.Observe != nil {
		for _, e := range events {
			r.opts.Observe(e)
		}
	}
	return nil
}

// writeBoard stores blackboard writes and shows their events, in order with
// the run's other events (see commit).
func (r *run) writeBoard(ctx context.Context, puts []BlackboardPut) ([]BlackboardWritten, error) {
	if r.opts.Observe != nil {
		r.observeMu.Lock()
		defer r.observeMu.Unlock()
	}
	written, err := r.rec.BlackboardWriteMany(context.WithoutCancel(ctx), r.id, puts)
	if r.opts.Observe != nil {
		for _, w := range written {
			r.opts.Observe(w.Event)
		}
	}
	if err != nil { // the runner sends only valid writes: the store failed
		return written, r.recordFailed(err)
	}
	return written, nil
}

// loop is the run's single owner of state: it starts what can start, then
// waits for an attempt to report, a timer, or cancellation.
func (r *run) loop(ctx context.Context) (*Result, error) {
	for {
		r.advance(ctx)
		_ = r.flush(ctx)
		if err := r.broken.get(); err != nil {
			return nil, r.abandon(ctx, err)
		}
		if r.finished() {
			return r.finish(ctx)
		}
		r.checkDuration()
		if d := r.exhausted.Load(); d != nil {
			return r.outOfLimits(ctx, d)
		}
		if time.Since(r.polledAt) >= commandPoll {
			r.polledAt = time.Now()
			if err := r.renewLease(ctx); err != nil {
				return nil, r.abandon(ctx, err)
			}
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
		wait = min(wait, commandPoll) // orch go and orch stop arrive through the store
		if left, ok := r.durationLeft(); ok {
			wait = max(min(wait, left), 0)
		}
		timer := time.NewTimer(wait)
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
		case <-timer.C:
			r.core.Wake()
		case <-ctx.Done():
			timer.Stop()
			return r.stopped(ctx, "interrupted by a signal")
		case <-r.limitHit:
		case <-r.broken.done: // an attempt or the output log could not be recorded
		}
		timer.Stop()
	}
}

// outOfLimits ends a run that ran out of max_credits, max_cost_usd or max_duration: no
// new GO was given since (step checks), everything is stopped, and the run
// fails naming the limit.
func (r *run) outOfLimits(ctx context.Context, d *ExhaustedData) (*Result, error) {
	r.emit(Event{Type: EvExhausted, Reason: fmt.Sprintf("%s reached: %s of %s", d.Limit, d.Used, d.Max), Data: *d})
	return r.halt(ctx, fmt.Sprintf("limit %s reached (%s of %s used)", d.Limit, d.Used, d.Max), RunFailed)
}

// finished reports whether every cue has reached a final state.
func (r *run) finished() bool { return r.core.Finished() && r.running == 0 }

func (r *run) finish(ctx context.Context) (*Result, error) {
	state, reason := RunCompleted, ""
	var failed []string
	for i, c := range r.plan.Order {
		if st, _ := r.core.State(i); st == sched.Failed {
			failed = append(failed, c.ID)
		}
	}
	if len(failed) > 0 {
		state, reason = RunFailed, "failed: "+join(failed)
	}
	r.active.Wait()
	if err := r.record(ctx, Event{Type: EvRunState, State: string(state), Reason: reason}); err != nil {
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
	r.stopAll(ctx, "the run is paused")
	reason := "waiting for GO: " + join(waiting)
	if len(waiting) == 0 {
		reason = "nothing can move"
	}
	r.core.StandDown("stood down while the run is paused")
	r.apply(ctx, nil)
	if err := r.record(ctx, Event{Type: EvRunState, State: string(RunPaused), Reason: reason}); err != nil {
		return nil, err
	}
	if err := r.flushLog(ctx); err != nil {
		return nil, err
	}
	return r.result(RunPaused, reason, waiting), nil
}

// stopped is the cascade stop (a signal, or orch stop): every agent is told
// and stopped with its whole process group, unfinished cues are marked
// stopped and the run ends stopped.
func (r *run) stopped(ctx context.Context, why string) (*Result, error) {
	return r.halt(ctx, why, RunStopped)
}

// halt stops everything as stopped does and ends the run in state.
func (r *run) halt(ctx context.Context, why string, state RunState) (*Result, error) {
	r.cascade = true
	// Every attempt is told before the agents are closed: an attempt that
	// saw its agent's process closed first would end with "the run ended"
	// and never tell its agent why (coord.stop, recorded).
	r.haltAttempts("the run was stopped: " + why)
	agentsGone := make(chan struct{})
	go func() { r.closeAgents(); close(agentsGone) }() // at the same time as the attempts
	r.stopAll(ctx, "the run was stopped: "+why)
	<-agentsGone
	r.core.EndAll(sched.Stopped, "the run was stopped: "+why)
	r.apply(ctx, nil)
	if err := r.record(ctx, Event{Type: EvRunState, State: string(state), Reason: why}); err != nil {
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
		r.handle(ctx, <-r.reports)
		_ = r.flush(ctx)
	}
	r.active.Wait()
}

// haltAttempts tells every attempt still running to stop, without waiting.
func (r *run) haltAttempts(why string) {
	r.core.Stopping()
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
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += id
	}
	return out
}
