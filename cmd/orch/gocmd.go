package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
)

type goOptions struct {
	io              *streams
	controller      func() (*control.Controller, error)
	run, cue        string
	show            display
	allowSpecChange bool
	wait            time.Duration
	unhandled       []string // flags orch-temporal does not take
}

func newGoCmd(f *factory, runF func(*goOptions) error) *cobra.Command {
	opts := &goOptions{io: f.io, controller: f.Controller, wait: 10 * time.Second}
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
		ValidArgsFunction: completeRunThen(f, completeWaitingCues),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run, opts.cue = args[0], args[1]
			opts.unhandled = unhandledFlags(cmd.Flags())
			if runF != nil {
				return runF(opts)
			}
			return goRun(cmd.Context(), opts)
		},
	}
	opts.show.flags(cmd, "text or json (when the run continues here)")
	cmd.Flags().BoolVar(&opts.allowSpecChange, "allow-spec-change", false, "continue even if the cuelist's files changed since the run started")
	cmd.Flags().DurationVar(&opts.wait, "wait", opts.wait, "how long to wait for a running run's owner to take the GO")
	return cmd
}

func goRun(ctx context.Context, opts *goOptions) error {
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	res, err := ctl.Go(ctx, control.GoRequest{Run: opts.run, Cue: opts.cue, Wait: opts.wait, AllowSpecChange: opts.allowSpecChange, Unhandled: opts.unhandled})
	if err != nil {
		return err
	}
	if res.Execution != nil { // the run was paused: it goes on here
		return executeRun(ctx, opts.io, res.Execution, opts.show)
	}
	printMessage(opts.io, res.Message)
	return nil
}
