package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

type statusOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run        string // "": the run list
	output     string
	tailLines  int
	watch      bool
	limit      int
	all        bool
	ask        bool
	askCue     string
	askWait    time.Duration
}

func newStatusCmd(f *factory, runF func(*statusOptions) error) *cobra.Command {
	opts := &statusOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "status [RUN]",
		Short: "Show runs, or one run's cues, attempts and reasons",
		Long: `Without RUN: the most recent runs, newest first. With RUN (an id, a unique
prefix of one, or "last"): the run's cues with their state, agents,
attempts, phase times and the reason for anything that did not complete,
and each failed attempt with the last lines its agent printed (--tail-lines);
the git branches its worktree attempts and merges left, and the run's
result branch (orch land RUN brings it into yours).`,
		Example: `  orch status
  orch status last
  orch status 3f9a --output json
  orch status last --watch`,
		Args:              argsBetween(0, 1),
		ValidArgsFunction: completeRuns(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.run = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.output, "output", "o", "text", "text or json")
	fl.BoolVarP(&opts.watch, "watch", "w", false, "redraw every second until the run ends (Ctrl-C to leave)")
	fl.IntVar(&opts.limit, "limit", 20, "runs to list")
	fl.BoolVar(&opts.all, "all", false, "list every run")
	fl.IntVar(&opts.tailLines, "tail-lines", defaultTailLines, "last lines of output shown under each failed attempt (0: none)")
	fl.BoolVar(&opts.ask, "ask", false, "first ask the agents at work for their state (status.request) and wait for their answers (--ask-wait)")
	fl.StringVar(&opts.askCue, "ask-cue", "", "with --ask: ask only this cue's agents (and its children's)")
	fl.DurationVar(&opts.askWait, "ask-wait", 5*time.Second, "with --ask: how long to wait for the answers")
	return cmd
}

func statusRun(ctx context.Context, opts *statusOptions) error {
	io := opts.io
	if opts.output != "text" && opts.output != "json" {
		return usageError(fmt.Errorf("unknown output %q (want text or json)", opts.output))
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	_, err = ctl.Reader()
	if errors.Is(err, control.ErrNoDatabase) && opts.run == "" {
		if opts.output == "json" {
			fmt.Fprintln(io.out, "[]")
		} else {
			fmt.Fprintln(io.out, "no runs yet")
		}
		return nil
	}
	if err != nil {
		return err
	}
	show := func() (bool, error) { return false, showRuns(ctx, io, ctl, opts) }
	if opts.ask && opts.run == "" {
		return usageError(errors.New("--ask needs RUN: the run whose agents to ask"))
	}
	if opts.ask {
		if err := ctl.AskAgents(ctx, control.AskRequest{Run: opts.run, Cue: opts.askCue, Wait: opts.askWait}); err != nil {
			return err
		}
	}
	if opts.run != "" {
		id, err := ctl.Resolve(ctx, opts.run)
		if err != nil {
			return err
		}
		show = func() (bool, error) { return showRun(ctx, io, ctl, id, opts) }
	}
	if !opts.watch {
		_, err := show()
		return err
	}
	for {
		if io.outTTY {
			fmt.Fprint(io.out, "\x1b[H\x1b[2J") // redraw from the top
		}
		ended, err := show()
		if ctx.Err() != nil || outputGone(io.out) {
			return nil // Ctrl-C, or the reader has gone: how --watch is left
		}
		if err != nil || ended && opts.run != "" {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

func showRuns(ctx context.Context, io *streams, ctl *control.Controller, opts *statusOptions) error {
	list, err := ctl.Runs(ctx, control.RunsRequest{Limit: opts.limit, All: opts.all})
	if err != nil {
		return err
	}
	if opts.output == "json" {
		return writeJSON(io.out, list.Runs)
	}
	if len(list.Runs) == 0 {
		fmt.Fprintln(io.out, "no runs yet")
		return nil
	}
	tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCUELIST\tSTATE\tSTARTED\tTOOK\tCUES")
	for _, rs := range list.Runs {
		r := rs.Summary
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d done%s\n", r.ID, r.Cuelist, r.State, ago(r.StartedAt), took(r.StartedAt, r.EndedAt), r.Completed, r.Cues,
			plural(r.OpenQuestions, ", %d open question", ", %d open questions"))
	}
	_ = tw.Flush()
	if list.Total > len(list.Runs) {
		fmt.Fprintf(io.out, "... and %d older runs (orch status --all)\n", list.Total-len(list.Runs))
	}
	return nil
}

// showRun prints one run's status; ended says it is not moving on by
// itself (over, paused or interrupted).
func showRun(ctx context.Context, io *streams, ctl *control.Controller, id string, opts *statusOptions) (bool, error) {
	st, err := ctl.Status(ctx, control.StatusRequest{Run: id, TailLines: opts.tailLines})
	if err != nil {
		return false, err
	}
	if opts.output == "json" {
		return st.Halted(), st.WriteJSON(io.out)
	}
	r := st.Detail
	fmt.Fprintf(io.out, "run %s  cuelist %s  %s", r.ID, r.Cuelist, r.State)
	if r.Reason != "" {
		fmt.Fprintf(io.out, ": %s", r.Reason)
	}
	fmt.Fprintf(io.out, "\nstarted %s, took %s", r.StartedAt.Local().Format("2006-01-02 15:04:05"), took(r.StartedAt, r.EndedAt))
	if r.Credits > 0 {
		fmt.Fprintf(io.out, ", %s credits used", strconv.FormatFloat(r.Credits, 'f', -1, 64))
	}
	if u := r.Used; u.CostUSD > 0 || u.InputTokens > 0 || u.OutputTokens > 0 {
		fmt.Fprintf(io.out, ", %s", usedText(u))
	}
	if st.Result != nil {
		fmt.Fprintf(io.out, "\n%s", resultLine(st.Result))
	}
	fmt.Fprint(io.out, "\n\n")
	tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CUE\tSTATE\tAGENTS\tATTEMPTS\tPREPARE\tGO\tTOOK\tREASON")
	items := map[string]*control.Items{}
	for _, c := range st.Cues {
		items[c.ID] = c.Items
	}
	for _, row := range cueTree(r.Cues) {
		c := row.cue
		name := c.ID
		if c.Parent != "" {
			name = row.prefix + c.ID + " " + c.Kind
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", name, c.State, strings.Join(c.Agents, ","), ownAttempts(c),
			between(c.WarningAt, c.GoAt), ago0(c.GoAt, r.StartedAt), between(c.GoAt, c.EndedAt), oneLine(fanOutReason(items[c.ID], c), 80))
	}
	_ = tw.Flush()
	printOutputs(io.out, r)
	var failed []string
	for i, c := range r.Cues {
		for j, a := range c.Attempts {
			if a.State == record.AttemptFailed {
				failed = append(failed, fmt.Sprintf("  %s attempt %d (%s): %s: %s", c.ID, a.Number, a.Agent, a.Class, oneLine(a.Reason, 100)))
				failed = append(failed, tailBlock("    ", a.Agent, a.Number, st.Cues[i].Attempts[j].Tail)...)
			}
		}
	}
	if len(failed) > 0 {
		fmt.Fprintln(io.out, "\nfailed attempts")
		fmt.Fprintln(io.out, strings.Join(failed, "\n"))
	}
	printAttemptNotes(io.out, st)
	printUsed(io.out, r)
	printWorktrees(io.out, r)
	if len(r.Conflicts) > 0 {
		fmt.Fprintf(io.out, "\nconflicts decided at run time (%d)\n", len(r.Conflicts))
		for _, c := range r.Conflicts {
			fmt.Fprintf(io.out, "  %s %s: %s\n", c.ConflictType, c.ResourceInQuestion, c.Reason)
		}
	}
	printReported(io.out, st)
	printQuestions(io.out, r) // last: what waits for a person is what they look for
	printEscalations(io.out, r)
	return st.Halted(), nil
}

// ownAttempts counts the attempts of a cue's agents: orch's merges of
// worktree branches at the cue are attempts there too, but not the cue's.
func ownAttempts(c *store.CueDetail) int {
	n := 0
	for _, a := range c.Attempts {
		if a.Agent != record.MergeAgent {
			n++
		}
	}
	return n
}

// writeJSON writes v as every command prints JSON: indented.
func writeJSON(w io.Writer, v any) error { return control.WriteJSON(w, v) }

func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return shortDuration(time.Since(t).Round(time.Second)) + " ago"
}

// ago0 is when t happened relative to the run's start ("+1.2s").
func ago0(t, start time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return "+" + shortDuration(t.Sub(start))
}

func took(start, end time.Time) string {
	if start.IsZero() {
		return "-"
	}
	if end.IsZero() {
		return shortDuration(time.Since(start)) + " so far"
	}
	return shortDuration(end.Sub(start))
}

func between(a, b time.Time) string {
	if a.IsZero() || b.IsZero() {
		return "-"
	}
	return shortDuration(b.Sub(a))
}

// oneLine puts s on one line of at most n characters (runes).
func oneLine(s string, n int) string { return control.OneLine(s, n) }

// plural formats n with one or many, and is empty for 0.
func plural(n int, one, many string) string {
	switch n {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(one, n)
	}
	return fmt.Sprintf(many, n)
}
