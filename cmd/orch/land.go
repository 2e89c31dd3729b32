package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
)

type landOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run        string
	output     string
}

func newLandCmd(f *factory, runF func(*landOptions) error) *cobra.Command {
	opts := &landOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "land RUN",
		Short: "Bring a run's result branch into the branch checked out",
		Long: `Bring the result of a completed run — orch/<run>/result, the merge of
the worktree branches its cues left — into the branch checked out in the
run's repository: a fast-forward when the branch has not moved since the
run started, else a merge commit (yours: your git identity and hooks).

It refuses, changing nothing, when the working tree has changes to tracked
files (commit or stash them first), when no branch is checked out, or when
the result does not merge cleanly into the branch (it names the files; each
cue's branch is still there, orch/<run>/*, to merge by hand). orch status
RUN says where the result is and how far ahead it is.`,
		Example: `  orch land last
  orch land 3f9a2b --output json
  git log --oneline main..orch/3f9a2b1c4d5e/result   # what it brings, before landing`,
		Args:              argsBetween(1, 1),
		ValidArgsFunction: completeRuns(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run = args[0]
			if runF != nil {
				return runF(opts)
			}
			return landRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "text", "text, or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func landRun(ctx context.Context, opts *landOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	res, err := ctl.Land(ctx, opts.run)
	if err != nil {
		return err
	}
	io, id, branch := opts.io, res.Run, res.Result
	if opts.output == "json" {
		return writeJSON(io.out, res)
	}
	switch res.How {
	case "up-to-date":
		fmt.Fprintf(io.out, "run %s's result %s is already in %s\n", id, branch, res.Into)
	case "fast-forward":
		fmt.Fprintf(io.out, "landed run %s: %s fast-forwarded to %s (%s), now at %s\n", id, res.Into, branch, countOf(res.Commits, "commit"), shortSHA(res.Commit))
	default:
		fmt.Fprintf(io.out, "landed run %s: merged %s into %s (%s), merge commit %s\n", id, branch, res.Into, countOf(res.Commits, "commit"), shortSHA(res.Commit))
	}
	return nil
}

type cleanOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run        string
	output     string
	olderThan  string
	dryRun     bool
}

func newCleanCmd(f *factory, runF func(*cleanOptions) error) *cobra.Command {
	opts := &cleanOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "clean [RUN]",
		Short: "Delete the git branches of finished runs",
		Long: `Delete the branches a finished run (completed, failed or stopped) left in
its repository — orch/<run>/<cue>/<attempt>, the merges' orch/<run>/<cue>/merge,
the result orch/<run>/result — and whatever is left of its worktrees. With
--older-than, of every run that finished longer ago than that (7d, 12h,
2w, or a Go duration). A run that may still go on (running, paused,
interrupted) keeps its branches. Land a result (orch land) before you
clean its run: the branches are deleted whether merged or not.`,
		Example: `  orch clean last
  orch clean --older-than 7d --dry-run
  orch clean --older-than 2w --output json`,
		Args:              argsBetween(0, 1),
		ValidArgsFunction: completeRuns(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run = ""
			if len(args) == 1 {
				opts.run = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return cleanRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.olderThan, "older-than", "", "every run that finished longer ago than this (7d, 12h, 2w, 90m)")
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "list the branches, delete nothing")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "text", "text, or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func cleanRun(ctx context.Context, opts *cleanOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	var age time.Duration
	switch {
	case opts.run != "" && opts.olderThan != "":
		return usageError(fmt.Errorf("orch clean takes a RUN or --older-than, not both"))
	case opts.run == "" && opts.olderThan == "":
		return usageError(fmt.Errorf("orch clean needs a RUN or --older-than (such as 7d)"))
	case opts.olderThan != "":
		d, err := parseAge(opts.olderThan)
		if err != nil {
			return usageError(fmt.Errorf("--older-than %s: %v", opts.olderThan, err))
		}
		age = d
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	out, err := ctl.Clean(ctx, control.CleanRequest{Run: opts.run, OlderThan: age, DryRun: opts.dryRun})
	if err != nil {
		return err
	}
	io := opts.io
	if opts.output == "json" {
		return writeJSON(io.out, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(io.out, "no finished run to clean")
	}
	for _, c := range out {
		verb := "deleted"
		if opts.dryRun {
			verb = "would delete"
		}
		if len(c.Branches) == 0 {
			fmt.Fprintf(io.out, "run %s: no branch left in %s\n", c.Run, c.Repo)
			continue
		}
		fmt.Fprintf(io.out, "run %s: %s %s in %s: %s\n", c.Run, verb, countOf(len(c.Branches), "branch"), c.Repo, strings.Join(c.Branches, " "))
	}
	return nil
}

// parseAge reads an age: Nd (days), Nw (weeks), or a Go duration (12h, 90m).
func parseAge(s string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("want a number of days (7d), weeks (2w) or a duration (12h)")
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a number of days (7d), weeks (2w) or a duration (12h)")
	}
	return d, nil
}

// countOf is n and word, in the plural unless n is 1 (0 included).
func countOf(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "ch") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
