package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
)

type retryOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run        string
	show       display
	rerun      []string
	from       string
	dryRun     bool
}

func newRetryCmd(f *factory, runF func(*retryOptions) error) *cobra.Command {
	opts := &retryOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "retry RUN",
		Short: "Run a run's failed cues again, keeping what completed",
		Long: `Continue a run that failed, was stopped or was interrupted, in the
foreground, under the same run id: completed cues keep their outputs and do
not run again; failed, blocked, skipped and stopped cues run again, with the
specs as they are on disk now (fix the cause, then orch retry). Their
attempt numbers continue, and each agent has its max_attempts again.

A completed cue whose own definition changed since it ran (its cue entry,
or the spec of one of its agents) is kept, and orch retry says so: --rerun
CUE runs it again; --from CUE runs that cue and every cue downstream of it
again. A cue that was in GO when its run's owner died and is not idempotent
waits for orch go, as with orch resume, unless --rerun or --from names it.
--dry-run prints what would run and what is kept, and why, and changes
nothing. A run whose owner is still running is refused: orch stop it first.`,
		Example: `  orch retry last
  orch retry last --dry-run
  orch retry 3f9a --rerun BUILD --rerun TEST
  orch retry 3f9a --from BUILD --stream`,
		Args:              argsBetween(1, 1),
		ValidArgsFunction: completeRuns(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run = args[0]
			if runF != nil {
				return runF(opts)
			}
			return retryRun(cmd.Context(), opts)
		},
	}
	opts.show.flags(cmd, "text or json")
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.rerun, "rerun", nil, "run this completed cue again too (repeatable)")
	fl.StringVar(&opts.from, "from", "", "run this cue and every cue downstream of it again")
	fl.BoolVar(&opts.dryRun, "dry-run", false, "print what would run and what is kept, and why; change nothing")
	for _, name := range []string{"rerun", "from"} {
		_ = cmd.RegisterFlagCompletionFunc(name, completeRunThen(f, completeCues))
	}
	return cmd
}

// retryRun decides which cues run again, then (unless --dry-run) continues
// the run in the foreground, having printed what runs and what is kept.
func retryRun(ctx context.Context, opts *retryOptions) error {
	if err := opts.show.check(); err != nil {
		return err
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	res, err := ctl.Retry(ctx, control.RetryRequest{Run: opts.run, Rerun: opts.rerun, From: opts.from, DryRun: opts.dryRun})
	if err != nil {
		return err
	}
	if opts.dryRun {
		return printRetryPlan(opts.io, res.Plan, opts.show.output, true)
	}
	if opts.show.output == "text" {
		_ = printRetryPlan(opts.io, res.Plan, "text", false)
	}
	return executeRun(ctx, opts.io, res.Execution, opts.show)
}

// printRetryPlan shows the plan: a line per cue, what happens to it and why.
func printRetryPlan(io *streams, rp *control.RetryPlan, output string, dry bool) error {
	if output == "json" {
		return writeJSON(io.out, rp)
	}
	verb := "retrying"
	if dry {
		verb = "orch retry would continue"
	}
	fmt.Fprintf(io.out, "%s run %s (%s): %d cue(s) run again, %d completed kept\n", verb, rp.Run, rp.State, len(rp.Rerun), rp.Kept)
	tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
	for _, c := range rp.Cues {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Action, c.ID, c.Why)
	}
	_ = tw.Flush()
	if rp.Unknown && rp.Kept > 0 {
		fmt.Fprintln(io.out, "  (this run was recorded by an orch that did not keep each cue's definition: completed cues are taken as unchanged)")
	}
	return nil
}
