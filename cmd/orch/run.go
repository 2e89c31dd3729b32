package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

type runOptions struct {
	io          *streams
	controller  func() (*control.Controller, error)
	temporal    temporalRunOptions
	path        string
	cuelist     string
	sets        []string
	maxParallel int
	output      string
	maxFileSize string
	root        string
	stream      bool
	tailLines   int
	notify      []string
	otel        bool
	runID       string // hidden --run-id: the id control chose for a run it starts detached
}

func newRunCmd(f *factory, runF func(*runOptions) error) *cobra.Command {
	opts := &runOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "run CUELIST|DIR",
		Short: "Run a cuelist: every cue through WARNING, STANDBY and GO",
		Long: `Validate and plan a cuelist, then run it: each cue's agents are started and
taken through WARNING -> STANDBY -> GO, with acknowledgements, timeouts,
retries, fallbacks and cooldowns. Everything is recorded in the run
database: --db, else ORCH_DB, else .orch/orch.db in the nearest .orch/
directory from here upwards; with none, a new .orch/ next to the cuelist.
A directory holding one cuelist may be given instead of its file. Before
any cue starts, every agent's program is looked for (in PATH, or in the
agent's workdir for a relative path): one that is missing ends orch there.

On a terminal, a header (run, elapsed, counts) and one line per agent of
each active cue (and child task) are redrawn in place, cut to the
terminal's width; below them a manual cue asks for GO and an agent's
question for the person is prompted, its complexity first (Ctrl-C there
stops the run). A failed attempt shows the last lines its agent printed
(--tail-lines), and so does the summary, the first failure first, with
the cues it blocked. Otherwise each event is a plain
timestamped line; a manual cue waits, and when nothing else can move orch
exits 3 and prints the command that continues the run (orch go RUN CUE);
a question waits for orch answer RUN QID TEXT from another shell while the
run goes on (up to guardrails.question_timeout).

The agents' output is recorded (orch logs) and kept out of the way; with
--stream (-v) each line is printed as it comes, prefixed by its cue and
agent ("BUILD compile | ..."), coloured per cue on a terminal (not with
NO_COLOR). A terminal slower than the agents never holds them up: past a
few thousand waiting lines, lines are counted, not shown, and a note says
how many.

Agents may hand off, spawn, ask, message and share the blackboard during
GO (see the README); handoff artifact paths are relative to --root. A cue
whose dependencies worked in git worktrees starts from the merge of their
branches (its merge: policy handles conflicts), and a completed run's
branches are merged into orch/<run>/result (orch land RUN). A run
that reaches limits.max_credits or limits.max_duration is stopped and fails.

Exit status: 0 completed, 1 failed (or invalid specs, or a limit reached),
2 usage error, 3 paused waiting for a person, 130 interrupted.`,
		Example: `  orch run examples/deploy/cuelist.yaml
  orch run examples/deploy/cuelist.yaml --set release=1.5
  orch run --output json specs/nightly.yaml | jq -c 'select(.type=="cue/state")'
  orch run --max-parallel 8 --db /var/lib/orch/orch.db specs/release.yaml
  orch run examples/handoff/cuelist.yaml      # the tester asks you a question`,
		Args: argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.path = args[0]
			parseTemporalRunFlags(cmd, &opts.temporal)
			if runF != nil {
				return runF(opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	temporalRunFlags(cmd, &opts.temporal)
	fs := cmd.Flags()
	fs.StringArrayVar(&opts.sets, "set", nil, "set a run input declared by the cuelist: --set key=value (repeatable)")
	fs.IntVar(&opts.maxParallel, "max-parallel", 0, "cues in GO at once (default: the cuelist's max_parallel, else 4)")
	fs.StringVarP(&opts.output, "output", "o", "text", "text, or json: every event as one JSON object per line")
	fs.StringVar(&opts.cuelist, "cuelist", "", "the cuelist to run when the file holds several")
	fs.StringVar(&opts.maxFileSize, "max-file-size", "8MiB", "largest spec file read")
	fs.BoolVarP(&opts.stream, "stream", "v", false, "print the agents' output as it comes, each line prefixed by its cue and agent")
	fs.IntVar(&opts.tailLines, "tail-lines", defaultTailLines, "last lines of output shown under each failed attempt (0: none)")
	fs.StringArrayVar(&opts.notify, "notify", nil, notifyUsage)
	fs.BoolVar(&opts.otel, "otel", false, otelUsage)
	fs.StringVar(&opts.runID, "run-id", "", "the new run's id (12 hex digits; for a run started in the background by orch itself)")
	_ = fs.MarkHidden("run-id")
	fs.StringVar(&opts.root, "root", "", "project root: includes stay inside it, handoff artifact paths are relative to it (default: the cuelist's directory)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runRun(ctx context.Context, opts *runOptions) error {
	if engine, err := engineOf(opts.temporal.engine, opts.temporal.engineSet); err != nil {
		return err
	} else if engine == "temporal" {
		return runOnTemporal(opts)
	}
	if err := proc.Supported(); err != nil {
		return err
	}
	show := display{output: opts.output, stream: opts.stream, tailLines: opts.tailLines, notify: opts.notify, otel: opts.otel}
	if err := show.check(); err != nil {
		return err
	}
	compiled, err := compile(opts.io, opts.path, opts.cuelist, opts.maxFileSize, opts.root)
	if err != nil {
		return err
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	x, err := ctl.Start(ctx, control.StartRequest{Compiled: compiled, Root: opts.root, Sets: opts.sets, MaxParallel: opts.maxParallel, RunID: opts.runID})
	if err != nil {
		return err
	}
	if note := elsewhereNote(ctl.Path(), x.Options.DBPath); note != "" {
		fmt.Fprintln(opts.io.err, note)
	}
	return executeRun(ctx, opts.io, x, show)
}

// executeRun carries out a run control handed over (a new one, or one
// continued here) and closes its database.
func executeRun(ctx context.Context, io *streams, x *control.Execution, show display) error {
	defer x.Close()
	return execute(ctx, io, x.DB, x.Options, show)
}

// elsewhereNote is what orch run says when it records in a database that
// the other commands, run from here, would not find (a new .orch/ next to a
// cuelist in another directory): where it is, and how to reach it.
func elsewhereNote(path, dbFile string) string {
	here, err := filepath.Abs(path)
	if err != nil || here == dbFile {
		return ""
	}
	project := filepath.Dir(filepath.Dir(dbFile))
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, project); err == nil && len(rel) < len(project) {
			project = rel
		}
	}
	return fmt.Sprintf("orch: this run is recorded in %s; the other orch commands find it when run in %s (or with --db %s)",
		dbFile, project, dbFile)
}

// execute runs (or continues) a run with progress on the terminal, prints
// the verdict and maps it to the exit status.
func execute(ctx context.Context, io *streams, db *store.DB, ro runner.Options, show display) error {
	if err := show.check(); err != nil {
		return err
	}
	output := show.output
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	color := io.outTTY && os.Getenv("NO_COLOR") == ""
	var prog progress
	tail := storeTail(db, show.tailLines)
	switch {
	case output == "json":
		prog = &jsonProgress{enc: json.NewEncoder(io.out)}
	case io.outTTY:
		prog = newLiveProgress(io.out, terminalLive(io, ro, tail))
	default:
		prog = &plainProgress{w: io.out, tail: tail}
	}
	if ro.Plan.Cuelist.Notify.SummaryQuestions() && output != "json" {
		prog = newSummaryProgress(prog)
	}
	var stream *streamPrinter
	if show.stream {
		stream = newStreamPrinter(prog.printAbove, color, ro.Plan)
		stream.terminal = io.outTTY
		ro.Recorder = streamRecorder{Recorder: ro.Recorder, s: stream}
	}
	bell := io.out // rung when a person is needed, on a terminal
	if !io.outTTY || output == "json" {
		bell = nil
	}
	notices := newNotifier(db, ro.Plan.Cuelist, show.notify, bell)
	tracer := newTracer(io, show.otel, ro.Plan.Cuelist.ID)
	if tracer != nil {
		ro.AgentEnv = tracer.AgentEnv
	}
	events := &seqProgress{db: db, show: func(e record.Event) {
		if e.Type != record.EvCueSpecs || output == "json" { // bookkeeping for orch retry; json is the whole log
			prog.event(e)
		}
		notices.event(e)
		tracer.Event(e)
	}}
	ro.Observe = events.event
	if io.inTTY && io.outTTY && output != "json" {
		ro.Approve = func(ctx context.Context, cue string, agents []string) bool {
			notices.standingBy(cue, agents)
			return prog.ask(ctx, fmt.Sprintf("%s (%s) is standing by. GO?", cue, strings.Join(agents, ", ")))
		}
		ro.Ask = prog.question
	}
	started := time.Now()
	res, err := runner.Run(ctx, ro)
	took := time.Since(started) // the run's, without the wait for its last notices
	if stream != nil {
		stream.close()
	}
	notices.finish()
	events.finish()
	traced := tracer.Finish()
	prog.stop()
	if traced != "" {
		fmt.Fprintln(io.err, "orch: warning: "+traced)
	}
	if err != nil {
		db.Abandon() // what is still queued would wait for the lock again
		return notRecorded(err)
	}
	if output != "json" {
		printVerdict(io, db, ro.Plan, res, took, show.tailLines, ro.Resume != nil)
	}
	switch res.State {
	case record.RunCompleted:
		return nil
	case record.RunPaused:
		return silent(exitPaused)
	case record.RunStopped:
		return silent(exitInterrupted)
	}
	return silent(exitFailed)
}

// notRecorded says what to do about a run that ended because it could not
// be recorded (a full disk, a read-only or damaged database, a lost lease).
func notRecorded(err error) error {
	var re *runner.RecordError
	if !errors.As(err, &re) {
		return err
	}
	kept := "what was recorded is kept"
	next := "once the database can be written again, orch resume " + re.RunID + " continues the run"
	switch {
	case errors.Is(err, record.ErrLeaseLost):
		next = "orch status " + re.RunID + " shows who runs it now"
	case errors.Is(err, store.ErrGone):
		kept = "the run's record went with the file"
		next = "orch run starts the run again"
	case errors.Is(err, store.ErrDamaged):
		kept = "the damaged file cannot be continued from"
		next = "move it and its -wal and -shm files aside (or restore them from a backup): orch run starts the run again"
	}
	return fmt.Errorf("%w\n  every agent was stopped; %s; %s", err, kept, next)
}
