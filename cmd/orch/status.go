package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

type statusOptions struct {
	output    string
	tailLines int
	watch     bool
	limit     int
	all       bool
	ask       bool
	askCue    string
	askWait   time.Duration
}

func newStatusCmd(io *streams) *cobra.Command {
	opts := &statusOptions{}
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
		ValidArgsFunction: completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd, io, opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.output, "output", "o", "text", "text or json")
	f.BoolVarP(&opts.watch, "watch", "w", false, "redraw every second until the run ends (Ctrl-C to leave)")
	f.IntVar(&opts.limit, "limit", 20, "runs to list")
	f.BoolVar(&opts.all, "all", false, "list every run")
	f.IntVar(&opts.tailLines, "tail-lines", defaultTailLines, "last lines of output shown under each failed attempt (0: none)")
	f.BoolVar(&opts.ask, "ask", false, "first ask the agents at work for their state (status.request) and wait for their answers (--ask-wait)")
	f.StringVar(&opts.askCue, "ask-cue", "", "with --ask: ask only this cue's agents (and its children's)")
	f.DurationVar(&opts.askWait, "ask-wait", 5*time.Second, "with --ask: how long to wait for the answers")
	return cmd
}

func runStatus(cmd *cobra.Command, io *streams, opts *statusOptions, args []string) error {
	if opts.output != "text" && opts.output != "json" {
		return usageError(fmt.Errorf("unknown output %q (want text or json)", opts.output))
	}
	db, err := openReading(cmd)
	if errors.Is(err, errNoDatabase) && len(args) == 0 {
		if opts.output == "json" {
			fmt.Fprintln(io.out, "[]")
		} else {
			fmt.Fprintln(io.out, "no runs yet")
		}
		return nil
	}
	if err != nil {
		return openFailed(err)
	}
	defer db.Close()
	ctx := cmd.Context()
	show := func() (bool, error) {
		ended, err := showRuns(ctx, io, db, opts)
		return ended, damaged(dbPath(cmd), err)
	}
	if opts.ask && len(args) == 0 {
		return usageError(errors.New("--ask needs RUN: the run whose agents to ask"))
	}
	if opts.ask {
		if err := askAgents(cmd, args[0], opts.askCue, opts.askWait); err != nil {
			return err
		}
	}
	if len(args) == 1 {
		id, err := resolveRun(ctx, db, args[0])
		if err != nil {
			return damaged(dbPath(cmd), err)
		}
		show = func() (bool, error) {
			ended, err := showRun(ctx, io, db, id, opts)
			return ended, damaged(dbPath(cmd), err)
		}
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
		if err != nil || ended && len(args) == 1 {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// runJSON is one run in `orch status --output json`.
type runJSON struct {
	ID        string  `json:"id"`
	Cuelist   string  `json:"cuelist"`
	State     string  `json:"state"`
	Reason    string  `json:"reason,omitempty"`
	StartedAt *string `json:"started_at"`
	EndedAt   *string `json:"ended_at"`
	Cues      int     `json:"cues"` // the plan's cues (not child tasks)
	Completed int     `json:"completed"`
	Failed    int     `json:"failed"`
	Questions int     `json:"open_questions"`
	Credits   float64 `json:"credits"`
	Used              // what the agents reported they used: the page's cost column
}

func showRuns(ctx context.Context, io *streams, db *store.DB, opts *statusOptions) (bool, error) {
	limit := opts.limit
	if opts.all {
		limit = 0
	}
	runs, total, err := db.Runs(ctx, limit)
	if err != nil {
		return false, err
	}
	if opts.output == "json" {
		out := make([]runJSON, 0, len(runs))
		for _, r := range runs {
			out = append(out, runJSON{ID: r.ID, Cuelist: r.Cuelist, State: string(r.State), Reason: r.Reason,
				StartedAt: timeJSON(r.StartedAt), EndedAt: timeJSON(r.EndedAt), Cues: r.Cues, Completed: r.Completed, Failed: r.Failed,
				Questions: r.OpenQuestions, Credits: r.Used.Credits, Used: usedJSON(r.Used)})
		}
		return false, writeJSON(io.out, out)
	}
	if len(runs) == 0 {
		fmt.Fprintln(io.out, "no runs yet")
		return false, nil
	}
	tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCUELIST\tSTATE\tSTARTED\tTOOK\tCUES")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d done%s\n", r.ID, r.Cuelist, r.State, ago(r.StartedAt), took(r.StartedAt, r.EndedAt), r.Completed, r.Cues,
			plural(r.OpenQuestions, ", %d open question", ", %d open questions"))
	}
	_ = tw.Flush()
	if total > len(runs) {
		fmt.Fprintf(io.out, "... and %d older runs (orch status --all)\n", total-len(runs))
	}
	return false, nil
}

// statusJSON is `orch status RUN --output json` (docs/design.md#status-json).
type statusJSON struct {
	ID        string         `json:"id"`
	Cuelist   string         `json:"cuelist"`
	State     string         `json:"state"`
	Reason    string         `json:"reason,omitempty"`
	StartedAt *string        `json:"started_at"`
	EndedAt   *string        `json:"ended_at"`
	Inputs    any            `json:"inputs"`
	Cues      []cueJSON      `json:"cues"`
	Questions []questionJSON `json:"questions"`
	// Escalations are the high and critical ones; acknowledged_at is null
	// until the person acknowledges one (orch ack).
	Escalations []escalationJSON      `json:"escalations"`
	Conflicts   []record.ConflictData `json:"conflicts"`
	Credits     float64               `json:"credits"`
	Used
	Worktrees []worktreeJSON `json:"worktrees"` // the branches the run's attempts worked on (kept after the run)
	// Result is where a completed run's worktree branches were merged.
	Result  *record.ResultBranch `json:"result,omitempty"`
	Owner   *ownerJSON           `json:"owner,omitempty"`
	Waiting []string             `json:"waiting_for_go,omitempty"`
	Counts  map[string]int       `json:"counts"`
}

// Used is what the agents reported they used (their credits are shown apart).
type Used struct {
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
}

func usedJSON(u record.Usage) Used {
	return Used{CostUSD: u.CostUSD, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
}

type worktreeJSON struct {
	Cue     string `json:"cue"`
	Agent   string `json:"agent"`
	Attempt int    `json:"attempt"`
	Branch  string `json:"branch"`
	Commit  string `json:"commit,omitempty"` // a completed attempt's
}

type ownerJSON struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
}

type cueJSON struct {
	ID        string         `json:"id"`
	State     string         `json:"state"`
	Reason    string         `json:"reason,omitempty"`
	Agents    []string       `json:"agents"`
	After     []string       `json:"after,omitempty"` // the cues it waits for: the run's DAG (none recorded before schema 6)
	WarningAt *string        `json:"warning_at"`
	StandbyAt *string        `json:"standby_at"`
	GoAt      *string        `json:"go_at"`
	EndedAt   *string        `json:"ended_at"`
	Outputs   map[string]any `json:"outputs,omitempty"`
	Attempts  []attemptJSON  `json:"attempts"`
	Parent    string         `json:"parent,omitempty"` // a child task's parent (handoff or spawn)
	Kind      string         `json:"kind,omitempty"`   // handoff or spawn
	Depth     int            `json:"depth"`            // 0 for the plan's cues
	TaskRef   string         `json:"task_ref,omitempty"`
	Credits   float64        `json:"credits"`
	Used
	Reported *reportedJSON `json:"reported,omitempty"` // the state its agent last reported (status.report)
	Items    *itemsJSON    `json:"items,omitempty"`    // a fan-out's (for_each) items: each is a cue with kind item
}

type attemptJSON struct {
	Number    int     `json:"number"`
	Agent     string  `json:"agent"`
	State     string  `json:"state"`
	Reason    string  `json:"reason,omitempty"`
	Class     string  `json:"class,omitempty"`
	ExitCode  *int    `json:"exit_code,omitempty"`
	StartedAt *string `json:"started_at"`
	EndedAt   *string `json:"ended_at"`
	// Tail is a failed attempt's last lines of output (--tail-lines).
	Tail    []string `json:"tail,omitempty"`
	Credits float64  `json:"credits"`
	Used
	WorktreeBranch string `json:"worktree_branch,omitempty"`
	WorktreeCommit string `json:"worktree_commit,omitempty"`
}

func showRun(ctx context.Context, io *streams, db *store.DB, id string, opts *statusOptions) (bool, error) {
	r, err := db.Run(ctx, id)
	if err != nil {
		return false, err
	}
	ended := r.State.Ended() || r.State == record.RunPaused || r.State == record.RunInterrupted
	reported, err := reportedStates(ctx, db, r.ID)
	if err != nil {
		return false, err
	}
	result, err := db.RunResult(ctx, r.ID)
	if err != nil {
		return false, err
	}
	if opts.output == "json" {
		out := statusJSON{ID: r.ID, Cuelist: r.Cuelist, State: string(r.State), Reason: r.Reason, StartedAt: timeJSON(r.StartedAt),
			EndedAt: timeJSON(r.EndedAt), Inputs: r.Inputs, Questions: questionsJSON(r.Questions), Escalations: escalationsJSON(r.Escalations), Conflicts: r.Conflicts,
			Credits: r.Credits, Used: usedJSON(r.Used), Worktrees: []worktreeJSON{}, Result: result, Counts: map[string]int{}}
		if out.Conflicts == nil {
			out.Conflicts = []record.ConflictData{}
		}
		if r.OwnerPID != 0 {
			out.Owner = &ownerJSON{PID: r.OwnerPID, Host: r.OwnerHost}
		}
		fans := fanOuts(r.Cues)
		for _, c := range r.Cues {
			cj := cueJSON{ID: c.ID, Parent: c.Parent, Kind: c.Kind, Depth: c.Depth, TaskRef: c.TaskRef, State: string(c.State), Reason: c.Reason, Agents: c.Agents, After: c.After, WarningAt: timeJSON(c.WarningAt),
				StandbyAt: timeJSON(c.StandbyAt), GoAt: timeJSON(c.GoAt), EndedAt: timeJSON(c.EndedAt), Outputs: c.Outputs, Attempts: []attemptJSON{},
				Credits: c.Used().Credits, Used: usedJSON(c.Used()), Reported: reported[c.ID], Items: fans[c.ID]}
			for _, a := range c.Attempts {
				aj := attemptJSON{Number: a.Number, Agent: a.Agent, State: string(a.State), Reason: a.Reason,
					Class: a.Class, ExitCode: a.ExitCode, StartedAt: timeJSON(a.StartedAt), EndedAt: timeJSON(a.EndedAt),
					Credits: a.Used.Credits, Used: usedJSON(a.Used), WorktreeBranch: a.WorktreeBranch, WorktreeCommit: a.WorktreeCommit}
				if a.WorktreeBranch != "" {
					out.Worktrees = append(out.Worktrees, worktreeJSON{Cue: c.ID, Agent: a.Agent, Attempt: a.Number, Branch: a.WorktreeBranch, Commit: a.WorktreeCommit})
				}
				if a.State == record.AttemptFailed {
					if aj.Tail, err = db.AttemptTail(ctx, r.ID, c.ID, a.Agent, a.Number, opts.tailLines); err != nil {
						return false, err
					}
				}
				cj.Attempts = append(cj.Attempts, aj)
			}
			out.Cues = append(out.Cues, cj)
			if c.Parent == "" { // the counts are of the plan's cues, as in orch status
				out.Counts[string(c.State)]++
			}
		}
		return ended, writeRunJSON(io.out, out)
	}
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
	if result != nil {
		fmt.Fprintf(io.out, "\n%s", resultLine(result))
	}
	fmt.Fprint(io.out, "\n\n")
	tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CUE\tSTATE\tAGENTS\tATTEMPTS\tPREPARE\tGO\tTOOK\tREASON")
	fans := fanOuts(r.Cues)
	for _, row := range cueTree(r.Cues) {
		c := row.cue
		name := c.ID
		if c.Parent != "" {
			name = row.prefix + c.ID + " " + c.Kind
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", name, c.State, strings.Join(c.Agents, ","), len(c.Attempts),
			between(c.WarningAt, c.GoAt), ago0(c.GoAt, r.StartedAt), between(c.GoAt, c.EndedAt), oneLine(fanOutReason(fans[c.ID], c), 80))
	}
	_ = tw.Flush()
	var failed []string
	for _, c := range r.Cues {
		for _, a := range c.Attempts {
			if a.State == record.AttemptFailed {
				failed = append(failed, fmt.Sprintf("  %s attempt %d (%s): %s: %s", c.ID, a.Number, a.Agent, a.Class, oneLine(a.Reason, 100)))
				tail, err := db.AttemptTail(ctx, r.ID, c.ID, a.Agent, a.Number, opts.tailLines)
				if err != nil {
					return false, err
				}
				failed = append(failed, tailBlock("    ", a.Agent, a.Number, tail)...)
			}
		}
	}
	if len(failed) > 0 {
		fmt.Fprintln(io.out, "\nfailed attempts")
		fmt.Fprintln(io.out, strings.Join(failed, "\n"))
	}
	printUsed(io.out, r)
	printWorktrees(io.out, r)
	if len(r.Conflicts) > 0 {
		fmt.Fprintf(io.out, "\nconflicts decided at run time (%d)\n", len(r.Conflicts))
		for _, c := range r.Conflicts {
			fmt.Fprintf(io.out, "  %s %s: %s\n", c.ConflictType, c.ResourceInQuestion, c.Reason)
		}
	}
	printReported(io.out, r, reported)
	printQuestions(io.out, r) // last: what waits for a person is what they look for
	printEscalations(io.out, r)
	return ended, nil
}

// writeRunJSON writes out as writeJSON does, a cue at a time: a run of
// 10,000 cues is megabytes of JSON, and indenting it whole held several
// copies of it at once (orch serve's memory).
func writeRunJSON(w io.Writer, out statusJSON) error {
	cues := out.Cues
	if len(cues) == 0 {
		return writeJSON(w, out)
	}
	out.Cues = []cueJSON{}
	head, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	const mark = "\n  \"cues\": []"
	before, after, ok := bytes.Cut(head, []byte(mark))
	if !ok {
		return fmt.Errorf("writing run %s: no cues in its JSON", out.ID)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(before)
	bw.WriteString("\n  \"cues\": [")
	for i, c := range cues {
		b, err := json.MarshalIndent(c, "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(b)
	}
	bw.WriteString("\n  ]")
	bw.Write(after)
	bw.WriteByte('\n')
	return bw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func timeJSON(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

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
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		return string([]rune(s)[:n-3]) + "..."
	}
	return s
}

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
