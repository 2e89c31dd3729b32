package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
)

type resumeOptions struct {
	io              *streams
	controller      func() (*control.Controller, error)
	run             string
	show            display
	allowSpecChange bool
	unhandled       []string // flags orch-temporal does not take
}

func newResumeCmd(f *factory, runF func(*resumeOptions) error) *cobra.Command {
	opts := &resumeOptions{io: f.io, controller: f.Controller}
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
		ValidArgsFunction: completeRuns(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run = args[0]
			opts.unhandled = unhandledFlags(cmd.Flags())
			if runF != nil {
				return runF(opts)
			}
			return resumeRun(cmd.Context(), opts)
		},
	}
	opts.show.flags(cmd, "text or json")
	cmd.Flags().BoolVar(&opts.allowSpecChange, "allow-spec-change", false, "continue even if the cuelist's files changed since the run started")
	return cmd
}

func resumeRun(ctx context.Context, opts *resumeOptions) error {
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	stop := temporalResumeProgress(ctx, ctl, opts)
	res, err := ctl.Resume(ctx, control.ResumeRequest{Run: opts.run, AllowSpecChange: opts.allowSpecChange, Unhandled: opts.unhandled})
	stop()
	if err != nil {
		return err
	}
	if res.Execution != nil {
		return executeRun(ctx, opts.io, res.Execution, opts.show)
	}
	printMessage(opts.io, res.Message)
	return nil
}

type stopOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run, cue   string
	wait       time.Duration
	unhandled  []string // flags orch-temporal does not take
}

func newStopCmd(f *factory, runF func(*stopOptions) error) *cobra.Command {
	opts := &stopOptions{io: f.io, controller: f.Controller}
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
		ValidArgsFunction: completeRunThen(f, completeStoppableCues),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run = args[0]
			if len(args) == 2 {
				opts.cue = args[1]
			}
			opts.unhandled = unhandledFlags(cmd.Flags())
			if runF != nil {
				return runF(opts)
			}
			return stopRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.wait, "wait", 30*time.Second, "how long to wait for the owner to stop the run")
	return cmd
}

func stopRun(ctx context.Context, opts *stopOptions) error {
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	res, err := ctl.Stop(ctx, control.StopRequest{Run: opts.run, Cue: opts.cue, Wait: opts.wait, Unhandled: opts.unhandled})
	if err != nil {
		return err
	}
	printMessage(opts.io, res.Message)
	return nil
}
