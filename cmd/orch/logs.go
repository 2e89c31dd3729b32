package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/store"
)

type logsOptions struct {
	follow     bool
	tail       int
	timestamps bool
	output     string
	raw        bool // the lines as written, terminal escapes included
	terminal   bool // stdout is a terminal: escapes are shown as ^[ unless raw
}

func newLogsCmd(io *streams) *cobra.Command {
	opts := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs RUN [CUE]",
		Short: "Print what a run's agents wrote (stderr, and stdout of plain agents)",
		Long: `Print the lines a run's agents wrote, of every cue (child tasks included)
or of CUE, in the order they came, each as [CUE AGENT#ATTEMPT STREAM] LINE.
A cue that got to GO and wrote nothing is said so on stderr.

On a terminal, control characters in the lines (escape sequences that
would set the window's title, move the cursor or recolour the text) are
shown as ^X (ESC as ^[); --raw prints them as the agent wrote them, as
orch logs always does into a pipe or a file.

--output json prints one object a line: seq (the line's place in the
database, increasing), time, cue, agent, attempt, stream and line.`,
		Example: `  orch logs last
  orch logs last CUE-200 --tail 20
  orch logs 3f9a --follow --timestamps
  orch logs last --output json | jq -r 'select(.stream=="stderr") | .line'
  orch logs last BUILD --raw         # the build's colours, on a terminal`,
		Args:              argsBetween(1, 2),
		ValidArgsFunction: completeRunThen(completeCues),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.output != "text" && opts.output != "json" {
				return usageError(fmt.Errorf("unknown output %q (want text or json)", opts.output))
			}
			if opts.tail < -1 {
				return usageError(fmt.Errorf("--tail %d: want a number of lines, 0 or more", opts.tail))
			}
			opts.terminal = io.outTTY
			return onRunReading(cmd, args[0], func(ctx context.Context, db *store.DB, _, id string) error {
				cue := ""
				if len(args) == 2 {
					cue = args[1]
				}
				return printLogs(ctx, io, db, id, cue, opts)
			})
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&opts.follow, "follow", "f", false, "keep printing until the run ends (or pauses)")
	f.IntVar(&opts.tail, "tail", -1, "only the last N lines of each cue (then, with --follow, what comes)")
	f.BoolVarP(&opts.timestamps, "timestamps", "t", false, "begin each line with the time it was written")
	f.BoolVar(&opts.raw, "raw", false, "print the lines' terminal escape sequences as written, also on a terminal")
	outputFlag(cmd, &opts.output, "text", "text, or json: one object a line", textOrJSON)
	return cmd
}

// printLogs prints the run's output lines, of cue or of all its cues, then
// says which cues that got to GO wrote nothing.
func printLogs(ctx context.Context, io *streams, db *store.DB, id, cue string, opts *logsOptions) error {
	r, err := db.Run(ctx, id)
	if err != nil {
		return err
	}
	if cue != "" && !hasCue(r.Cues, cue) {
		return usageError(fmt.Errorf("run %s has no cue %q", id, cue))
	}
	write := logWriter(io.out, opts)
	wrote := map[string]bool{}
	var after int64
	show := func(lines []store.LogRecord) error {
		for _, l := range lines {
			if err := write(l); err != nil {
				return err // the reader has gone
			}
			wrote[l.Cue] = true
			after = l.ID
		}
		return nil
	}
	if opts.tail >= 0 {
		lines, last, err := db.LogsTail(ctx, id, cue, opts.tail)
		if err == nil {
			err = show(lines)
		}
		if err != nil {
			return err
		}
		if !opts.follow {
			return saySilent(ctx, io.err, db, id, cue, opts.tail == 0, wrote)
		}
		after = last
	}
	err = followRun(ctx, db, id, opts.follow, func() (bool, error) {
		lines, err := db.Logs(ctx, id, cue, after, pageSize)
		if perr := show(lines); perr != nil {
			return false, perr
		}
		return len(lines) == pageSize, err
	})
	if err != nil || ctx.Err() != nil {
		return err
	}
	return saySilent(ctx, io.err, db, id, cue, opts.tail == 0, wrote)
}

// logWriter prints one line as text or JSON.
func logWriter(w io.Writer, opts *logsOptions) func(store.LogRecord) error {
	if opts.output == "json" {
		enc := json.NewEncoder(w)
		return func(l store.LogRecord) error {
			return enc.Encode(logJSON{Seq: l.ID, Time: l.At.UTC().Format(time.RFC3339Nano), Cue: l.Cue,
				Agent: l.Agent, Attempt: l.Attempt, Stream: l.Stream, Line: l.Text})
		}
	}
	return func(l store.LogRecord) error {
		stamp := ""
		if opts.timestamps {
			stamp = l.At.Local().Format("2006-01-02T15:04:05.000Z07:00") + " "
		}
		text := l.Text
		if opts.terminal && !opts.raw {
			text = terminalSafe(text)
		}
		_, err := fmt.Fprintf(w, "%s[%s %s#%d %s] %s\n", stamp, l.Cue, l.Agent, l.Attempt, l.Stream, text)
		return err
	}
}

type logJSON struct {
	Seq     int64  `json:"seq"`
	Time    string `json:"time"`
	Cue     string `json:"cue"`
	Agent   string `json:"agent"`
	Attempt int    `json:"attempt"`
	Stream  string `json:"stream"`
	Line    string `json:"line"`
}

// saySilent tells, on stderr, which cues wrote nothing, so that no output
// is not mistaken for a broken command: every cue that got to GO (or CUE,
// asked for by name, whatever its state). With --tail 0 nothing was asked
// for.
func saySilent(ctx context.Context, w io.Writer, db *store.DB, id, cue string, none bool, wrote map[string]bool) error {
	if none {
		return nil
	}
	r, err := db.Run(ctx, id) // again: the cues' states as they are now
	if err != nil {
		return err
	}
	fans := fanOuts(r.Cues)
	for _, c := range r.Cues {
		asked := c.ID == cue || c.Parent == cue && c.Kind == "item" // a fan-out's lines are its items'
		if wrote[c.ID] || fans[c.ID] != nil || (cue != "" && !asked) || (cue == "" && c.GoAt.IsZero()) || c.Kind == "dropped" {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s: no output (%s)\n", c.ID, whySilent(c)); err != nil {
			return nil // stderr's reader has gone: nothing more to say
		}
	}
	return nil
}

// whySilent says why a cue has no output lines.
func whySilent(c store.CueDetail) string {
	switch {
	case len(c.Attempts) == 0:
		return fmt.Sprintf("it has not run: %s", c.State)
	case c.GoAt.IsZero() && c.State.Final():
		return fmt.Sprintf("it did not get to GO: %s", c.State)
	case len(agentsOf(c)) > 1:
		return "its agents wrote nothing"
	}
	return "its agent wrote nothing"
}

// agentsOf are the agents that made attempts at c.
func agentsOf(c store.CueDetail) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range c.Attempts {
		if !seen[a.Agent] {
			seen[a.Agent] = true
			out = append(out, a.Agent)
		}
	}
	return out
}

func hasCue(cues []store.CueDetail, id string) bool {
	for _, c := range cues {
		if c.ID == id {
			return true
		}
	}
	return false
}
