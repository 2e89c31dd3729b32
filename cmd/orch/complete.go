package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// Shell completion: RUN completes to recent run ids (completeRuns), and the
// argument after it to what that run holds: its cues, the cues waiting for
// GO, its open questions. Errors complete to nothing: a completion never
// prints one.

// completeRuns offers recent run ids for shell completion.
func completeRuns(f *factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctl, err := f.Controller()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := ctl.Runs(cmd.Context(), control.RunsRequest{Limit: 50})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := []string{"last\tthe most recent run"}
		for _, r := range list.Runs {
			out = append(out, fmt.Sprintf("%s\t%s %s", r.ID, r.Cuelist, r.State))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeRunThen completes RUN, then the next argument with next.
func completeRunThen(f *factory, next func(ctx context.Context, r *store.RunDetail) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return completeRuns(f)(cmd, args, toComplete)
		}
		if len(args) > 1 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctl, err := f.Controller()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		r, err := ctl.Run(ctx, args[0])
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

// completeStoppableCues completes the plan's cues not yet over.
func completeStoppableCues(_ context.Context, r *store.RunDetail) []string {
	var out []string
	for _, c := range r.Cues {
		if c.Parent == "" && !c.State.Final() {
			out = append(out, fmt.Sprintf("%s\t%s %s", c.ID, c.State, strings.Join(c.Agents, ",")))
		}
	}
	return out
}

// completeQuestions offers the run's open questions asked of the person.
func completeQuestions(ctx context.Context, r *store.RunDetail) []string {
	var out []string
	for _, q := range r.Questions {
		if q.State == store.QuestionOpen && q.To == "person" {
			out = append(out, fmt.Sprintf("%s\t[%s] %s: %s", q.ID, q.Complexity, q.Agent, oneLine(q.Question, 60)))
		}
	}
	return out
}
