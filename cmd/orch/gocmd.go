package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

func newGoCmd(io *streams) *cobra.Command {
	var show display
	var allowSpecChange bool
	wait := 10 * time.Second
	cmd := &cobra.Command{
		Use:   "go RUN CUE",
		Short: "Say GO for a manual cue",
		Long: `Say GO for a cue marked go: manual.

If the run's owner is still running (it is doing other work while the cue
stands by), the GO reaches it through the run database: orch go waits up to
--wait for the owner to take it and says what happened. A run stopped (or
ended) before it could act on the GO is an error (exit 1), saying so; an
owner that has not taken the GO by then still will, and orch go exits 0.
If the run is paused (orch run exited 3 because nothing else could move),
orch go continues the run itself, in the foreground, until it ends or
pauses again.`,
		Example: `  orch go last CUE-300
  orch go 3f9a CUE-300 --output json`,
		Args:              argsBetween(2, 2),
		ValidArgsFunction: completeRunThen(completeWaitingCues),
		RunE: func(cmd *cobra.Command, args []string) error {
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, dbFile, id string) error {
				check := func() error { _, err := goCheck(ctx, db, id, args[1]); return err }
				if handled, err := handOverRecorded(cmd, io, db, id, nil, check, func(flags []string) []string {
					return append(append([]string{"go"}, flags...), "--", id, args[1])
				}); handled {
					return err
				}
				if err := proc.Supported(); err != nil {
					return err
				}
				return goCue(cmd.Context(), io, db, dbFile, id, args[1], show, allowSpecChange, wait)
			})
		},
	}
	show.flags(cmd, "text or json (when the run continues here)")
	cmd.Flags().BoolVar(&allowSpecChange, "allow-spec-change", false, "continue even if the cuelist's files changed since the run started")
	cmd.Flags().DurationVar(&wait, "wait", wait, "how long to wait for a running run's owner to take the GO")
	return cmd
}

func goCue(ctx context.Context, io *streams, db *store.DB, dbFile, id, cue string, show display, allowSpecChange bool, wait time.Duration) error {
	r, err := goCheck(ctx, db, id, cue)
	if err != nil {
		return err
	}
	if r.State == record.RunRunning { // a live owner: it picks the GO up
		cmdID, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "go", Cue: cue})
		if err != nil {
			return err
		}
		return goTaken(ctx, io, db, r, cue, cmdID, wait)
	}
	if err := db.Append(ctx, record.Event{RunID: id, Type: record.EvManualGo, Cue: cue, Reason: "orch go"}); err != nil {
		return err
	}
	return continueRun(ctx, io, db, dbFile, id, show, allowSpecChange)
}

// goTaken waits up to wait for the owner of run r to take the GO for cue
// (command cmdID) and act on it, and says what happened: a stop that reached
// the run (or the cue) in the same moment wins over the GO, and orch go says
// so instead of "sent".
func goTaken(ctx context.Context, io *streams, db *store.DB, r *store.RunDetail, cue string, cmdID int64, wait time.Duration) error {
	sent := fmt.Sprintf("GO for %s sent to run %s (owner: pid %d on %s)", cue, r.ID, r.OwnerPID, r.OwnerHost)
	deadline := time.Now().Add(wait)
	for {
		cmds, err := db.Commands(ctx, r.ID)
		if err != nil {
			return err
		}
		taken := !slices.ContainsFunc(cmds, func(c record.Command) bool { return c.ID == cmdID })
		now, err := db.Run(ctx, r.ID)
		if err != nil {
			return err
		}
		var state record.CueState
		for _, c := range now.Cues {
			if c.ID == cue {
				state = c.State
			}
		}
		waiting := state == record.CuePending || state == record.CueWarning || state == record.CueStandby
		switch {
		case state == record.CueStopped || waiting && now.State != record.RunRunning:
			why := string(now.State)
			if now.Reason != "" {
				why += ": " + now.Reason
			}
			return fmt.Errorf("the GO for %s did not take effect: run %s is %s and %s is %s", cue, r.ID, why, cue, state)
		case taken && !waiting:
			fmt.Fprintln(io.out, sent)
			return nil
		case time.Now().After(deadline):
			if taken {
				fmt.Fprintf(io.out, "%s; %s is still %s (its turn has not come)\n", sent, cue, state)
			} else {
				fmt.Fprintln(io.out, sent+"; the owner has not taken it yet, and will")
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// goCheck refuses a GO for a cue that cannot take one (none by that name, a
// child task, a cue already over, a run that ended) and returns the run.
func goCheck(ctx context.Context, db *store.DB, id, cue string) (*store.RunDetail, error) {
	r, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	var c *store.CueDetail
	for i := range r.Cues {
		if r.Cues[i].ID == cue {
			c = &r.Cues[i]
		}
	}
	switch {
	case c == nil:
		return nil, usageError(fmt.Errorf("run %s has no cue %q", id, cue))
	case c.Parent != "" && c.Kind != "item": // a fan-out's item waits for GO as a cue does
		return nil, usageError(fmt.Errorf("%s is a child task (a %s of %s), started and stopped by its parent: orch go is for the cuelist's cues", cue, c.Kind, c.Parent))
	case c.State.Final():
		return nil, usageError(fmt.Errorf("cue %s of run %s is already %s", cue, id, c.State))
	case r.State.Ended():
		return nil, usageError(fmt.Errorf("run %s is %s: nothing waits for GO", id, r.State))
	}
	return r, nil
}

// continueRun takes over a recorded run and runs it in the foreground: the
// lease is claimed (only one process continues a run), the cuelist is
// compiled again from its file (refused if the files changed, unless
// allowed), completed cues are kept, the others run.
func continueRun(ctx context.Context, io *streams, db *store.DB, dbFile, id string, show display, allowSpecChange bool) error {
	me := newOwner()
	if err := db.ClaimRun(ctx, id, me); err != nil {
		return err
	}
	rec, err := db.LoadRun(ctx, id)
	if err != nil {
		return err
	}
	set, p, changed, err := continuable(rec, allowSpecChange)
	if err != nil {
		release(db, id)
		return err
	}
	if changed { // the cues still to run run as they are now: orch retry compares with that
		hashes := map[string]string{}
		for cue, h := range cueSpecHashes(p) {
			if rec.Cues[cue].State != record.CueCompleted {
				hashes[cue] = h
			}
		}
		if err := db.Append(ctx, cueSpecsEvent(id, hashes)); err != nil {
			release(db, id)
			return err
		}
	}
	return continueWith(ctx, io, db, dbFile, rec, set, p, me, show)
}

// continuable compiles a recorded run's cuelist again and refuses to
// continue the run with it when its files changed since the run started
// (unless allowed) or an agent's command is not found.
func continuable(rec *record.RunRecord, allowSpecChange bool) (*spec.Set, *planner.Plan, bool, error) {
	set, p, err := compileRecorded(rec)
	if err != nil {
		return nil, nil, false, err
	}
	changed := specHash(set) != rec.Started.SpecHash
	if changed && !allowSpecChange {
		return nil, nil, false, usageError(fmt.Errorf("run %s: its cuelist's files changed since the run started (%s); continue anyway with --allow-spec-change (or orch retry %s)", rec.ID, rec.Started.SpecPath, rec.ID))
	}
	if err := checkCommands(p); err != nil {
		return nil, nil, false, fmt.Errorf("run %s: %w", rec.ID, err)
	}
	return set, p, changed, nil
}

// newOwner is this process as a run's owner, with a fresh lease token.
func newOwner() record.Owner {
	host, _ := os.Hostname()
	return record.Owner{PID: os.Getpid(), Host: host, Token: record.NewRunID() + record.NewRunID()}
}

// compileRecorded compiles a recorded run's cuelist again, from its file as
// it is now.
func compileRecorded(rec *record.RunRecord) (*spec.Set, *planner.Plan, error) {
	set, p, diags, err := planner.Compile(rec.Started.SpecPath, rec.Started.Cuelist, spec.LoadOptions{Root: rec.Started.Root})
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: cannot load its cuelist: %w", rec.ID, err)
	}
	if p == nil {
		return nil, nil, fmt.Errorf("run %s: its cuelist %s no longer validates (orch validate %s shows why; %d problem(s))", rec.ID, rec.Started.SpecPath, rec.Started.SpecPath, len(diags))
	}
	return set, p, nil
}

// continueWith runs a claimed run from rec (cues as the runner is to take
// them up) with the plan p, in the foreground.
func continueWith(ctx context.Context, io *streams, db *store.DB, dbFile string, rec *record.RunRecord, set *spec.Set, p *planner.Plan, me record.Owner, show display) error {
	p = lighten(set, p)
	root := rec.Started.Root
	if root == "" { // recorded by an orch from before handoffs
		root = filepath.Dir(rec.Started.SpecPath)
	}
	ro := runner.Options{Plan: p, Recorder: db, RunID: rec.ID, Inputs: rec.Started.Inputs, SpecPath: rec.Started.SpecPath,
		SpecHash: rec.Started.SpecHash, DBPath: dbFile, Resume: rec, Owner: me, ProjectRoot: root}
	return execute(ctx, io, db, ro, show)
}

// release gives a claimed run back (it is left as it was: resumable).
func release(db *store.DB, id string) {
	_ = db.Append(context.Background(), record.Event{RunID: id, Type: record.EvRunState, State: string(record.RunInterrupted),
		Reason: "not continued: its cuelist could not be used"})
}
