package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// usedText says what the agents reported they used: "$0.42, 1200 in / 300
// out tokens" (the parts reported).
func usedText(u record.Usage) string {
	var parts []string
	if u.CostUSD > 0 {
		parts = append(parts, record.FormatUSD(u.CostUSD))
	}
	if u.InputTokens > 0 || u.OutputTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d in / %d out tokens", u.InputTokens, u.OutputTokens))
	}
	return strings.Join(parts, ", ")
}

// printUsed lists what each cue's agents reported they used, when any did.
func printUsed(w io.Writer, r *store.RunDetail) {
	if r.Used == (record.Usage{}) {
		return
	}
	fmt.Fprintf(w, "\nused (as the agents reported): %s\n", usedAndCredits(r.Used))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CUE\tCOST\tINPUT TOKENS\tOUTPUT TOKENS\tCREDITS")
	for _, c := range r.Cues {
		u := c.Used()
		if u == (record.Usage{}) {
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%s\n", c.ID, record.FormatUSD(u.CostUSD), u.InputTokens, u.OutputTokens, strconv.FormatFloat(u.Credits, 'f', -1, 64))
	}
	_ = tw.Flush()
}

// usedAndCredits is usedText with the credits, when there are some.
func usedAndCredits(u record.Usage) string {
	s := usedText(u)
	if u.Credits > 0 {
		s = strings.TrimPrefix(s+", "+strconv.FormatFloat(u.Credits, 'f', -1, 64)+" credits", ", ")
	}
	return s
}

// printWorktrees lists the git branches the run's attempts worked on
// (workspace: worktree): they are kept after the run.
func printWorktrees(w io.Writer, r *store.RunDetail) {
	var lines []string
	for _, c := range r.Cues {
		for _, a := range c.Attempts {
			if a.WorktreeBranch == "" {
				continue
			}
			commit := "no commit"
			if a.WorktreeCommit != "" {
				commit = "commit " + shortSHA(a.WorktreeCommit)
			}
			lines = append(lines, fmt.Sprintf("  %s  %s attempt %d (%s), %s", a.WorktreeBranch, c.ID, a.Number, a.Agent, commit))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "\nworktree branches")
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
