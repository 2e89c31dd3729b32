package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

func newResumeCmd(io *streams) *cobra.Command {
	var show display
	var allowSpecChange bool
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Continue a run whose owner died (or that was paused or stopped)",
		Long: `Continue a run in the foreground: an interrupted run (its orch process died,
even by kill -9), a paused one, or a stopped one.

Cues whose completion was recorded never run again. A cue that was in GO
when the owner died runs again (at least once) unless it is marked
idempotent: false: then it stays interrupted until orch go RUN CUE. Attempt
numbers continue and count against each agent's max_attempts. Processes the
dead owner left running are stopped first. Of two orch resume of one run at
once, exactly one proceeds; the other exits 1 and says which process has it.
A cuelist whose files changed since the run started is refused unless
--allow-spec-change. (orch retry continues a run too, and runs its failed
cues again, with the specs as they are now.)`,
		Example: `  orch resume last
  orch resume 3f9a --allow-spec-change`,
		Args:              argsBetween(1, 1),
		ValidArgsFunction: completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, dbFile, id string) error {
				if handled, err := handOverRecorded(cmd, io, db, id, nil, nil, func(flags []string) []string {
					return append(append([]string{"resume"}, flags...), "--", id)
				}); handled {
					return err
				}
				if err := proc.Supported(); err != nil {
					return err
				}
				r, err := db.Run(ctx, id)
				if err != nil {
					return err
				}
				switch r.State {
				case record.RunCompleted, record.RunFailed:
					return usageError(fmt.Errorf("run %s is %s: there is nothing to resume (orch run starts a new one)", id, r.State))
				case record.RunRunning:
					return fmt.Errorf("run %s is running: process %d on %s owns it", id, r.OwnerPID, r.OwnerHost)
				}
				return continueRun(ctx, io, db, dbFile, id, show, allowSpecChange)
			})
		},
	}
	show.flags(cmd, "text or json")
	cmd.Flags().BoolVar(&allowSpecChange, "allow-spec-change", false, "continue even if the cuelist's files changed since the run started")
	return cmd
}

func newStopCmd(io *streams) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "stop RUN [CUE]",
		Short: "Stop a run, or one of its cues: its agents and everything they started",
		Long: `Stop a run from another shell. Its owner gets the stop through the run
database and cascades it: coord.stop to protocol agents, SIGTERM to every
agent's process group, SIGKILL after the grace period; the run ends stopped
and its owner exits 130. A run whose owner is gone is marked stopped here,
after the processes it left are killed. orch resume continues a stopped run.

With a CUE, only that cue stops, with every task it handed off or spawned
(and theirs): the cue ends stopped ("stopped by USER"), its dependents are
blocked, and the rest of the run goes on; the run ends failed, naming the
stopped cue (orch retry runs it again). It says how many tasks were stopped,
child tasks included. The run must be running.`,
		Example: `  orch stop last
  orch stop 3f9a --wait 1m
  orch stop last RESEARCH`,
		Args:              argsBetween(1, 2),
		ValidArgsFunction: completeRunThen(completeStoppableCues),
		RunE: func(cmd *cobra.Command, args []string) error {
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, dbFile, id string) error {
				if handled, err := handOverRecorded(cmd, io, db, id, nil, nil, func(flags []string) []string {
					return append(append(append([]string{"stop"}, flags...), "--", id), args[1:]...)
				}); handled {
					return err
				}
				if len(args) == 2 {
					return stopCue(ctx, io, db, id, args[1], wait)
				}
				return stopRun(ctx, io, db, id, wait)
			})
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the owner to stop the run")
	return cmd
}

func stopRun(ctx context.Context, io *streams, db *store.DB, id string, wait time.Duration) error {
	r, err := db.Run(ctx, id)
	if err != nil {
		return err
	}
	if r.State.Ended() {
		fmt.Fprintf(io.out, "run %s is already %s\n", id, r.State)
		return nil
	}
	if r.State == record.RunRunning {
		if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "stop", Arg: fmt.Sprintf("from process %d", os.Getpid())}); err != nil {
			return err
		}
		deadline := time.Now().Add(wait)
		for time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			if r, err = db.Run(ctx, id); err != nil {
				return err
			}
			if r.State != record.RunRunning {
				break
			}
		}
		if r.State == record.RunStopped {
			fmt.Fprintf(io.out, "run %s stopped\n", id)
			return nil
		}
		if r.State == record.RunRunning {
			return fmt.Errorf("run %s: its owner (process %d on %s) did not stop it within %s", id, r.OwnerPID, r.OwnerHost, wait)
		}
	}
	// No live owner: take the run over, stop what it left, and mark it stopped.
	host, _ := os.Hostname()
	if err := db.ClaimRun(ctx, id, record.Owner{PID: os.Getpid(), Host: host, Token: record.NewRunID()}); err != nil {
		var owned *store.OwnedError
		if errors.As(err, &owned) {
			return fmt.Errorf("%w; try again", err)
		}
		return err
	}
	killed := proc.KillLeftovers(id)
	runner.RemoveWorkDirs(id, "")
	var events []record.Event
	if len(killed) > 0 {
		events = append(events, record.Event{RunID: id, Type: record.EvNote, Reason: fmt.Sprintf("orch stop killed %d process(es) left by the run's owner", len(killed))})
	}
	for _, c := range r.Cues {
		for _, a := range c.Attempts {
			if a.State == record.AttemptRunning {
				events = append(events, record.Event{RunID: id, Type: record.EvAttemptEnded, Cue: c.ID, Agent: a.Agent, Attempt: a.Number,
					State: string(record.AttemptStopped), Reason: "orch stop: its run's owner was gone",
					Data: record.AttemptEndedData{Class: "stopped"}})
			}
		}
		if !c.State.Final() {
			events = append(events, record.Event{RunID: id, Type: record.EvCueState, Cue: c.ID, State: string(record.CueStopped), Reason: "orch stop"})
		}
	}
	events = append(events, record.Event{RunID: id, Type: record.EvRunState, State: string(record.RunStopped), Reason: "orch stop"})
	if err := db.Append(ctx, events...); err != nil {
		return err
	}
	fmt.Fprintf(io.out, "run %s stopped\n", id)
	return nil
}
