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
	res := &Result{RunID: r.id, State: state, Reason: r.redact.Text(reason), Waiting: waiting, Cues: make([]CueOutcome, len(r.cues))}
	for i, c := range r.cues {
		res.Cues[i] = CueOutcome{ID: c.cue.ID, State: c.state, Reason: r.redact.Text(c.reason)}
	}
	return res
}

// NewRunID returns a fresh run id: 12 hex digits, so a short prefix is unique.
func NewRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// run is the state of one run, owned by its loop goroutine.
type run struct {
	opts        Options
	plan        *planner.Plan
	rec         Recorder
	id          string
	cues        []*cueRun // in plan order
	byID        map[string]*cueRun
	reports     chan report
	parallel    int
	grace       time.Duration
	workDir     string // ORCH_OUTPUT files
	redact      *Redactor
	active      sync.WaitGroup // attempt goroutines
	observeMu   sync.Mutex
	running     int             // attempt goroutines not yet reported finished
	inGo        int             // cues in GO
	prepared    int             // cues in WARNING or STANDBY
	asking      map[string]bool // manual cues being asked about at the terminal
	declined    map[string]bool // manual cues a person said no to: they wait for orch go
	stopping    bool            // attempts ending now were stopped, not failed
	cascade     bool            // the whole run is being stopped: agents get no grace beyond the kill grace
	beatAt      time.Time       // when the lease was last tried
	beatOK      time.Time       // when it was last renewed
	sweeper     *proc.Sweeper
	locks       *locks
	procsMu     sync.Mutex
	procs       map[string]*agentProcess // jsonl agents\' processes, by agent
	allProcs    []*agentProcess          // every agent process started, to wait for at the end
	envMu       sync.Mutex
	envCache    map[string][]string // per agent: orch\'s environment and the agent\'s env
	pending     []Event             // decided, not yet committed
	actions     []func()            // to do once pending is committed
	goes        []func()            // GO orders, carried out after the actions (see flush)
	wakeAt      time.Time
	sleepers    map[*cueRun]bool // cues to look at again when the loop wakes
	touched     *cueQueue        // cues to step in the next advance
	waitWarn    *cueQueue        // cues ready for WARNING but out of budget
	waitGo      *cueQueue        // cues standing by for a free GO slot
	live        map[*cueRun]bool // cues between WARNING and their end
	finals      int              // cues in a final state
	unapproved  int              // manual cues not yet approved nor ended
	withOutputs planner.CueSet   // completed cues that produced outputs
	polledAt    time.Time        // when the store was last asked for commands
	broken      brokenRecord     // a recorder failure: the run cannot go on

	tree      *tree     // the tasks: cues' agents and their children
	root      *os.Root  // the project, for handoff artifacts
	began     time.Time // when this process started or continued the run (max_duration)
	usageMu   sync.Mutex
	credits   float64                       // the run's credits so far (status.usage)
	exhausted atomic.Pointer[ExhaustedData] // the limit the run ran out of: no more GO
	limitHit  chan struct{}                 // tells the loop that exhausted was set
	qmu       sync.Mutex
	questions map[string]*question // open questions, by id
	asked     int                  // questions asked in the run so far (q1, q2, ...)
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
	r := &run{opts: opts, plan: p, rec: opts.Recorder, id: opts.RunID, byID: map[string]*cueRun{},
		reports: make(chan report, 64), asking: map[string]bool{}, declined: map[string]bool{}}
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
	n := len(p.Order)
	r.touched, r.waitWarn, r.waitGo = newCueQueue(n), newCueQueue(n), newCueQueue(n)
	r.live, r.sleepers = map[*cueRun]bool{}, map[*cueRun]bool{}
	r.withOutputs = p.NewCueSet()
	r.sweeper = proc.NewSweeper(r.id, r.noteOrphan)
	r.locks = newLocks()
	r.tree = newTree()
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
	r.procs = map[string]*agentProcess{}
	for i, c := range p.Order {
		cr := &cueRun{pos: i, cue: c, state: CuePending}
		for _, id := range c.Agents {
			cr.targets = append(cr.targets, &target{agentID: id, agent: p.Agents[id]})
		}
		r.cues = append(r.cues, cr)
		r.byID[c.ID] = cr
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
	r.began = time.Now()
	if rec := r.opts.Resume; rec != nil {
		r.credits, r.asked = rec.Credits, rec.Questions
		r.restoreTasks(rec)
		RemoveWorkDirs(r.id, r.workDir)
		if killed := proc.KillLeftovers(r.id); len(killed) > 0 {
			r.emit(Event{Type: EvNote, Reason: fmt.Sprintf("stopped %d process(es) left running by the run's previous owner: pids %v", len(killed), killed)})
		}
		r.emit(Event{Type: EvRunState, State: string(RunRunning), Reason: fmt.Sprintf("continued by process %d on %s", os.Getpid(), host)})
		for id, c := range rec.Cues {
			if cr := r.byID[id]; cr != nil {
				r.restore(cr, c)
			}
		}
		r.count()
		return r.flush(ctx)
	}
	data := RunStartedData{Cuelist: r.plan.Cuelist.ID, SpecPath: r.opts.SpecPath, SpecHash: r.opts.SpecHash, Root: r.opts.ProjectRoot,
		Inputs: r.opts.Inputs, OwnerPID: r.opts.Owner.PID, OwnerHost: r.opts.Owner.Host, OwnerToken: r.opts.Owner.Token}
	for _, c := range r.cues {
		data.Cues = append(data.Cues, CueInfo{ID: c.cue.ID, Agents: c.cue.Agents})
	}
	r.count()
	return r.record(ctx, Event{Type: EvRunStarted, Data: data})
}

// restore takes a cue back to where the recorded run left it. Completed and
// skipped cues are kept; a failed or blocked one stays so; everything else
// runs again, except a cue that was in GO when the owner died and is not
// idempotent: it is interrupted until a person says orch go. Attempt numbers
// continue, and each agent's failed attempts count against its max_attempts,
// so a crash never buys an agent more tries (an attempt the crash
// interrupted is not its failure, and does not count).
func (r *run) restore(cr *cueRun, c CueRecord) {
	cr.attempts, cr.approved = c.Attempts, c.Approved
	for _, a := range c.Running {
		r.emit(Event{Type: EvAttemptEnded, Cue: cr.cue.ID, Agent: a.Agent, Attempt: a.Number, State: string(AttemptInterrupted),
			Reason: "its run's owner stopped while it ran", Data: AttemptEndedData{Class: "interrupted"}})
	}
	switch c.State {
	case CueCompleted, CueSkipped, CueFailed, CueBlocked:
		cr.state, cr.reason, cr.outputs = c.State, c.Reason, r.redact.Restore(c.Outputs)
		if len(c.Outputs) > 0 {
			r.withOutputs.Add(cr.cue)
		}
		return
	case CueInterrupted:
		cr.state = CueInterrupted // still waiting for orch go (unless it came: approved)
	case CueGo:
		if !cr.cue.IsIdempotent() {
			cr.approved = false
			r.setState(context.Background(), cr, CueInterrupted, "it was in GO when its run's owner stopped, and it is not idempotent: orch go "+r.id+" "+cr.cue.ID+" runs it again")
		}
	}
	// A cue recorded in WARNING, STANDBY or GO (and not interrupted above)
	// starts over: recorded pending, so that the store never shows it being
	// prepared by nobody (say, while the resumed run pauses).
	if cr.state != CueInterrupted && c.State != CuePending && c.State != CueInterrupted {
		r.setState(context.Background(), cr, CuePending, "its run's owner stopped; it starts over")
	}
	for _, t := range cr.targets {
		t.tries = c.AgentAttempts[t.agent.ID]
		for t.tries >= maxAttempts(t.agent) {
			listed := r.plan.Agents[t.agentID]
			if t.fallbacks >= len(listed.Fallback) {
				t.phase = tFailed
				break
			}
			next := r.plan.Agents[listed.Fallback[t.fallbacks]]
			t.fallbacks++
			t.agent, t.tries = next, c.AgentAttempts[next.ID]
		}
	}
	for _, t := range cr.targets {
		if t.phase == tFailed {
			r.emit(Event{Type: EvCueState, Cue: cr.cue.ID, State: string(CueFailed),
				Reason: fmt.Sprintf("%s: no attempts left (all failed before the run was resumed)", t.agentID)})
			cr.state = CueFailed
			break
		}
	}
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

// count sets the counters from the cues' states and touches every cue, once,
// when the run starts.
func (r *run) count() {
	for _, c := range r.cues {
		switch {
		case c.state.Final():
			r.finals++
		case (c.cue.Manual() || c.state == CueInterrupted) && !c.approved:
			r.unapproved++
		}
		r.touch(c)
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
		if r.stuck() {
			return r.pause(ctx)
		}
		wait := time.Hour
		if !r.wakeAt.IsZero() {
			wait = max(time.Until(r.wakeAt), 0)
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
			r.wakeAt = time.Time{}
			for c := range r.sleepers {
				r.touch(c)
			}
			clear(r.sleepers)
		case <-ctx.Done():
			timer.Stop()
			return r.stopped(ctx, "interrupted by a signal")
		case <-r.limitHit:
		case <-r.broken.done: // an attempt or the output log could not be recorded
		}
		timer.Stop()
	}
}

// outOfLimits ends a run that ran out of max_credits or max_duration: no
// new GO was given since (step checks), everything is stopped, and the run
// fails naming the limit.
func (r *run) outOfLimits(ctx context.Context, d *ExhaustedData) (*Result, error) {
	r.emit(Event{Type: EvExhausted, Reason: fmt.Sprintf("%s reached: %s of %s", d.Limit, d.Used, d.Max), Data: *d})
	return r.halt(ctx, fmt.Sprintf("limit %s reached (%s of %s used)", d.Limit, d.Used, d.Max), RunFailed)
}

// finished reports whether every cue has reached a final state.
func (r *run) finished() bool { return r.finals == len(r.cues) && r.running == 0 }

func (r *run) finish(ctx context.Context) (*Result, error) {
	state, reason := RunCompleted, ""
	var failed []string
	for _, c := range r.cues {
		if c.state == CueFailed {
			failed = append(failed, c.cue.ID)
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
	var waiting []string
	for _, c := range r.cues {
		if !c.state.Final() && (c.cue.Manual() || c.state == CueInterrupted) && !c.approved {
			waiting = append(waiting, c.cue.ID)
		}
	}
	r.stopAll(ctx, "the run is paused")
	reason := "waiting for GO: " + join(waiting)
	if len(waiting) == 0 {
		reason = "nothing can move"
	}
	for _, c := range r.cues {
		if !c.state.Final() && c.state != CuePending && c.state != CueInterrupted {
			r.setState(ctx, c, CuePending, "stood down while the run is paused")
		}
	}
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
	for _, c := range r.cues {
		if !c.state.Final() {
			r.endCue(ctx, c, CueStopped, "the run was stopped: "+why)
		}
	}
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
	r.stopping = true
	for _, c := range r.cues {
		for _, t := range c.targets {
			if t.att != nil {
				t.att.stop(why)
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
