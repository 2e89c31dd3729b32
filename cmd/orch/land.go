package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/store"
)

func newLandCmd(io *streams) *cobra.Command {
	var output string
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
		ValidArgsFunction: completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			return onRunReading(cmd, args[0], func(ctx context.Context, db *store.DB, _, id string) error {
				return landRun(ctx, io, db, id, output)
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text, or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func landRun(ctx context.Context, io *streams, db *store.DB, id, output string) error {
	root, err := runRoot(ctx, db, id)
	if err != nil {
		return err
	}
	repo, branch, err := runner.ResultBranchOf(ctx, root, id)
	if err != nil {
		return err
	}
	res, err := runner.Land(ctx, repo, id, branch)
	if err != nil {
		return err
	}
	if output == "json" {
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

// runRoot is the project root a run recorded: its repository holds its
// branches.
func runRoot(ctx context.Context, db *store.DB, id string) (string, error) {
	rec, err := db.LoadRun(ctx, id)
	if err != nil {
		return "", err
	}
	if rec.Started.Root == "" {
		return "", fmt.Errorf("run %s recorded no project root (an older orch): its repository is not known", id)
	}
	return rec.Started.Root, nil
}

func newCleanCmd(io *streams) *cobra.Command {
	var output, olderThan string
	var dryRun bool
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
		ValidArgsFunction: completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			var age time.Duration
			switch {
			case len(args) == 1 && olderThan != "":
				return usageError(fmt.Errorf("orch clean takes a RUN or --older-than, not both"))
			case len(args) == 0 && olderThan == "":
				return usageError(fmt.Errorf("orch clean needs a RUN or --older-than (such as 7d)"))
			case olderThan != "":
				d, err := parseAge(olderThan)
				if err != nil {
					return usageError(fmt.Errorf("--older-than %s: %v", olderThan, err))
				}
				age = d
			}
			db, err := openReading(cmd)
			if err != nil {
				return openFailed(err)
			}
			defer db.Close()
			ctx := cmd.Context()
			var ids []string
			if len(args) == 1 {
				id, err := resolveRun(ctx, db, args[0])
				if err != nil {
					return damaged(dbPath(cmd), err)
				}
				ids = []string{id}
			} else if ids, err = endedBefore(ctx, db, time.Now().Add(-age)); err != nil {
				return damaged(dbPath(cmd), err)
			}
			return cleanRuns(ctx, io, db, ids, len(args) == 1, dryRun, output)
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "every run that finished longer ago than this (7d, 12h, 2w, 90m)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list the branches, delete nothing")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text, or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// cleaned is what orch clean did for one run.
type cleaned struct {
	Run      string   `json:"run"`
	Repo     string   `json:"repository"`
	Branches []string `json:"branches"`
	Deleted  bool     `json:"deleted"` // false with --dry-run
}

func cleanRuns(ctx context.Context, io *streams, db *store.DB, ids []string, named, dryRun bool, output string) error {
	out := []cleaned{}
	for _, id := range ids {
		r, err := db.Run(ctx, id)
		if err != nil {
			return err
		}
		if !r.State.Ended() {
			if named {
				return fmt.Errorf("run %s is %s and may go on (orch resume, orch go, orch retry): its branches are kept", id, r.State)
			}
			continue
		}
		root, err := runRoot(ctx, db, id)
		if err != nil {
			return err
		}
		repo, branches, err := runner.RunBranches(ctx, root, id)
		if err != nil {
			return err
		}
		c := cleaned{Run: id, Repo: repo, Branches: branches}
		if c.Branches == nil {
			c.Branches = []string{}
		}
		if !dryRun {
			if err := runner.DeleteBranches(ctx, repo, id, branches); err != nil {
				return err
			}
			c.Deleted = true
		}
		out = append(out, c)
	}
	if output == "json" {
		return writeJSON(io.out, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(io.out, "no finished run to clean")
	}
	for _, c := range out {
		verb := "deleted"
		if dryRun {
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

// endedBefore lists the runs that finished before t.
func endedBefore(ctx context.Context, db *store.DB, t time.Time) ([]string, error) {
	runs, _, err := db.Runs(ctx, 0)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range runs {
		if r.State.Ended() && !r.EndedAt.IsZero() && r.EndedAt.Before(t) {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
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
