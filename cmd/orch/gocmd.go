package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

func newGoCmd(io *streams) *cobra.Command {
	var output string
	var allowSpecChange bool
	cmd := &cobra.Command{
		Use:   "go RUN CUE",
		Short: "Say GO for a manual cue",
		Long: `Say GO for a cue marked go: manual.

If the run's owner is still running (it is doing other work while the cue
stands by), the GO reaches it through the run database. If the run is
paused (orch run exited 3 because nothing else could move), orch go
continues the run itself, in the foreground, until it ends or pauses again.`,
		Example: `  orch go last CUE-300
  orch go 3f9a CUE-300 --output json`,
		Args:              argsBetween(2, 2),
		ValidArgsFunction: completeRunThen(completeWaitingCues),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := proc.Supported(); err != nil {
				return err
			}
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, dbFile, id string) error {
				return goCue(cmd.Context(), io, db, dbFile, id, args[1], output, allowSpecChange)
			})
		},
	}
	outputFlag(cmd, &output, "text", "text or json (when the run continues here)", textOrJSON)
	cmd.Flags().BoolVar(&allowSpecChange, "allow-spec-change", false, "continue even if the cuelist's files changed since the run started")
	return cmd
}

func goCue(ctx context.Context, io *streams, db *store.DB, dbFile, id, cue, output string, allowSpecChange bool) error {
	r, err := db.Run(ctx, id)
	if err != nil {
		return err
	}
	var c *store.CueDetail
	for i := range r.Cues {
		if r.Cues[i].ID == cue {
			c = &r.Cues[i]
		}
	}
	switch {
	case c == nil:
		return usageError(fmt.Errorf("run %s has no cue %q", id, cue))
	case c.Parent != "":
		return usageError(fmt.Errorf("%s is a child task (a %s of %s), started and stopped by its parent: orch go is for the cuelist's cues", cue, c.Kind, c.Parent))
	case c.State.Final():
		return usageError(fmt.Errorf("cue %s of run %s is already %s", cue, id, c.State))
	case r.State.Ended():
		return usageError(fmt.Errorf("run %s is %s: nothing waits for GO", id, r.State))
	}
	if r.State == runner.RunRunning { // a live owner: it picks the GO up
		if _, err := db.AddCommand(ctx, runner.Command{RunID: id, Kind: "go", Cue: cue}); err != nil {
			return err
		}
		fmt.Fprintf(io.out, "GO for %s sent to run %s (owner: pid %d on %s)\n", cue, id, r.OwnerPID, r.OwnerHost)
		return nil
	}
	if err := db.Append(ctx, runner.Event{RunID: id, Type: runner.EvManualGo, Cue: cue, Reason: "orch go"}); err != nil {
		return err
	}
	return continueRun(ctx, io, db, dbFile, id, output, allowSpecChange)
}

// continueRun takes over a recorded run and runs it in the foreground: the
// lease is claimed (only one process continues a run), the cuelist is
// compiled again from its file (refused if the files changed, unless
// allowed), completed cues are kept, the others run.
func continueRun(ctx context.Context, io *streams, db *store.DB, dbFile, id, output string, allowSpecChange bool) error {
	host, _ := os.Hostname()
	me := runner.Owner{PID: os.Getpid(), Host: host, Token: runner.NewRunID() + runner.NewRunID()}
	if err := db.ClaimRun(ctx, id, me); err != nil {
		return err
	}
	rec, err := db.LoadRun(ctx, id)
	if err != nil {
		return err
	}
	set, p, diags, err := planner.Compile(rec.Started.SpecPath, rec.Started.Cuelist, spec.LoadOptions{Root: rec.Started.Root})
	if err != nil {
		release(db, id)
		return fmt.Errorf("run %s: cannot load its cuelist: %w", id, err)
	}
	if p == nil {
		release(db, id)
		return fmt.Errorf("run %s: its cuelist %s no longer validates (orch validate %s shows why; %d problem(s))", id, rec.Started.SpecPath, rec.Started.SpecPath, len(diags))
	}
	if h := specHash(set); h != rec.Started.SpecHash && !allowSpecChange {
		release(db, id)
		return usageError(fmt.Errorf("run %s: its cuelist's files changed since the run started (%s); continue anyway with --allow-spec-change", id, rec.Started.SpecPath))
	}
	if err := checkCommands(p); err != nil {
		release(db, id)
		return fmt.Errorf("run %s: %w", id, err)
	}
	p = lighten(set, p)
	root := rec.Started.Root
	if root == "" { // recorded by an orch from before handoffs
		root = filepath.Dir(rec.Started.SpecPath)
	}
	ro := runner.Options{Plan: p, Recorder: db, RunID: id, Inputs: rec.Started.Inputs, SpecPath: rec.Started.SpecPath,
		SpecHash: rec.Started.SpecHash, DBPath: dbFile, Resume: rec, Owner: me, ProjectRoot: root}
	return execute(ctx, io, db, ro, output)
}

// release gives a claimed run back (it is left as it was: resumable).
func release(db *store.DB, id string) {
	_ = db.Append(context.Background(), runner.Event{RunID: id, Type: runner.EvRunState, State: string(runner.RunInterrupted),
		Reason: "not continued: its cuelist could not be used"})
}
