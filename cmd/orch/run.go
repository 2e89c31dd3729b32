package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

type runOptions struct {
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
}

func newRunCmd(io *streams) *cobra.Command {
	opts := &runOptions{}
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
			if engine, err := engineOf(cmd); err != nil {
				return err
			} else if engine == "temporal" {
				return runOnTemporal(cmd, io, opts)
			}
			if err := proc.Supported(); err != nil {
				return err
			}
			return runRun(cmd, io, opts)
		},
	}
	f := cmd.Flags()
	f.String("engine", "local", "local, or temporal: run on Temporal through orch-temporal (default $ORCH_ENGINE)")
	f.String("temporal-address", "", "--engine temporal: the Temporal frontend (default $TEMPORAL_ADDRESS, else 127.0.0.1:7233)")
	f.String("temporal-namespace", "", "--engine temporal: the namespace (default $TEMPORAL_NAMESPACE, else default)")
	f.String("task-queue", "orch", "--engine temporal: the task queue of the workflow and of agents without a placement")
	f.Bool("detach", false, "--engine temporal: start the run, print its id and how to follow it, and exit")
	f.StringArrayVar(&opts.sets, "set", nil, "set a run input declared by the cuelist: --set key=value (repeatable)")
	f.IntVar(&opts.maxParallel, "max-parallel", 0, "cues in GO at once (default: the cuelist's max_parallel, else 4)")
	f.StringVarP(&opts.output, "output", "o", "text", "text, or json: every event as one JSON object per line")
	f.StringVar(&opts.cuelist, "cuelist", "", "the cuelist to run when the file holds several")
	f.StringVar(&opts.maxFileSize, "max-file-size", "8MiB", "largest spec file read")
	f.BoolVarP(&opts.stream, "stream", "v", false, "print the agents' output as it comes, each line prefixed by its cue and agent")
	f.IntVar(&opts.tailLines, "tail-lines", defaultTailLines, "last lines of output shown under each failed attempt (0: none)")
	f.StringArrayVar(&opts.notify, "notify", nil, notifyUsage)
	f.BoolVar(&opts.otel, "otel", false, otelUsage)
	f.StringVar(&opts.root, "root", "", "project root: includes stay inside it, handoff artifact paths are relative to it (default: the cuelist's directory)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runRun(cmd *cobra.Command, io *streams, opts *runOptions) error {
	show := display{output: opts.output, stream: opts.stream, tailLines: opts.tailLines, notify: opts.notify, otel: opts.otel}
	if err := show.check(); err != nil {
		return err
	}
	set, p, err := compile(io, opts.path, opts.cuelist, opts.maxFileSize, opts.root)
	if err != nil {
		return err
	}
	if err := checkCommands(p); err != nil {
		return err
	}
	inputs, err := runInputs(p.Cuelist, opts.sets)
	if err != nil {
		return usageError(err)
	}
	db, dbFile, err := openRunDB(cmd, opts.path)
	if err != nil {
		return err
	}
	if note := elsewhereNote(cmd, dbFile); note != "" {
		fmt.Fprintln(io.err, note)
	}
	defer db.Close()
	specPath, root := runPaths(opts.path, opts.root, p)
	hash := specHash(set)
	rec := specRecorder{Recorder: db, hashes: cueSpecHashes(p)}
	p = lighten(set, p)
	ro := runner.Options{Plan: p, Recorder: rec, Inputs: inputs, SpecPath: specPath, SpecHash: hash,
		DBPath: dbFile, MaxParallel: opts.maxParallel, ProjectRoot: root}
	return execute(cmd.Context(), io, db, ro, show)
}

// runPaths returns the cuelist file recorded for the run (what orch resume
// compiles again) and its project root: --root, else the directory given
// (everything was loaded from inside it), else the cuelist file's directory.
func runPaths(path, root string, p *planner.Plan) (specPath, projectRoot string) {
	specPath, _ = filepath.Abs(path)
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		specPath, projectRoot = p.Cuelist.Doc.File.Abs, specPath
	} else {
		projectRoot = filepath.Dir(specPath)
	}
	if root != "" {
		projectRoot = root
	}
	return specPath, projectRoot
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
		printVerdict(io, db, ro.Plan, res, took, show.tailLines)
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

// runInputs applies --set key=value to the cuelist's inputs. Only declared
// inputs may be set; a value takes the type of the declared default.
func runInputs(cl *spec.Cuelist, sets []string) (map[string]any, error) {
	inputs := map[string]any{}
	for k, v := range cl.Inputs {
		inputs[k] = v
	}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--set %q: use --set key=value", s)
		}
		def, declared := cl.Inputs[k]
		if !declared {
			names := make([]string, 0, len(cl.Inputs))
			for n := range cl.Inputs {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("--set %s: cuelist %s has no input %q (its inputs: %s)", s, cl.ID, k, orNone(names))
		}
		val, err := typedLike(def, v)
		if err != nil {
			return nil, fmt.Errorf("--set %s: %v", s, err)
		}
		inputs[k] = val
	}
	return inputs, nil
}

func typedLike(def any, v string) (any, error) {
	switch def.(type) {
	case int64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer (the default is one)", v)
		}
		return n, nil
	case float64:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number (the default is one)", v)
		}
		return n, nil
	case bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false (the default is a boolean)", v)
		}
		return b, nil
	}
	return v, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// lighten frees what a run no longer needs once its plan is built: the
// spec's YAML trees and the plan's library graph are most of the memory of a
// big cuelist, and the run holds its plan to the end. It returns the plan
// to run: a copy without the graph (the plan itself is never changed).
func lighten(set *spec.Set, p *planner.Plan) *planner.Plan {
	set.ReleaseSources()
	return p.WithoutGraph()
}

// specHash fingerprints every loaded spec file, so a continued run can tell
// that its cuelist changed.
func specHash(set *spec.Set) string { return set.Hash() }
