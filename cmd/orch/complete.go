package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// Shell completion: RUN completes to recent run ids (completeRuns), and the
// argument after it to what that run holds: its cues, the cues waiting for
// GO, its open questions. Errors complete to nothing: a completion never
// prints one.

// completeRunThen completes RUN, then the next argument with next.
func completeRunThen(next func(ctx context.Context, r *store.RunDetail) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return completeRuns(cmd, args, toComplete)
		}
		if len(args) > 1 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		db, err := openReading(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer db.Close()
		ctx := cmd.Context()
		id, err := db.ResolveRun(ctx, args[0])
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		r, err := db.Run(ctx, id)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return next(ctx, r), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeCues offers every cue of the run, child tasks included.
func completeCues(_ context.Context, r *store.RunDetail) []string {
	var out []string
	for _, c := range r.Cues {
		out = append(out, fmt.Sprintf("%s\t%s %s", c.ID, c.State, strings.Join(c.Agents, ",")))
	}
	return out
}

// completeWaitingCues offers the cues that wait for a person's GO: standing
// by in a running run; in a paused run, those stood down to wait (they had
// got as far as an attempt, which the cues behind them had not).
func completeWaitingCues(_ context.Context, r *store.RunDetail) []string {
	var out []string
	for _, c := range r.Cues {
		if c.Parent != "" && c.Kind != "item" || c.Approved || c.State.Final() {
			continue
		}
		waiting := c.State == record.CueStandby
		if r.State == record.RunPaused || r.State == record.RunInterrupted {
			waiting = len(c.Attempts) > 0
		}
		if waiting {
			out = append(out, fmt.Sprintf("%s\twaits for GO (%s)", c.ID, strings.Join(c.Agents, ", ")))
		}
	}
	return out
}
