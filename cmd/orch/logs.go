package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/store"
)

type logsOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run, cue   string
	follow     bool
	tail       int
	timestamps bool
	output     string
	raw        bool // the lines as written, terminal escapes included
	terminal   bool // stdout is a terminal: escapes are shown as ^[ unless raw
}

func newLogsCmd(f *factory, runF func(*logsOptions) error) *cobra.Command {
	opts := &logsOptions{io: f.io, controller: f.Controller}
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
		ValidArgsFunction: completeRunThen(f, completeCues),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run, opts.cue = args[0], ""
			if len(args) == 2 {
				opts.cue = args[1]
			}
			opts.terminal = f.io.outTTY
			if runF != nil {
				return runF(opts)
			}
			return logsRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&opts.follow, "follow", "f", false, "keep printing until the run ends (or pauses)")
	fl.IntVar(&opts.tail, "tail", -1, "only the last N lines of each cue (then, with --follow, what comes)")
	fl.BoolVarP(&opts.timestamps, "timestamps", "t", false, "begin each line with the time it was written")
	fl.BoolVar(&opts.raw, "raw", false, "print the lines' terminal escape sequences as written, also on a terminal")
	outputFlag(cmd, &opts.output, "text", "text, or json: one object a line", textOrJSON)
	return cmd
}

// logsRun prints the run's output lines, of a cue or of all its cues, then
// says which cues that got to GO wrote nothing.
func logsRun(ctx context.Context, opts *logsOptions) error {
	io := opts.io
	if opts.output != "text" && opts.output != "json" {
		return usageError(fmt.Errorf("unknown output %q (want text or json)", opts.output))
	}
	if opts.tail < -1 {
		return usageError(fmt.Errorf("--tail %d: want a number of lines, 0 or more", opts.tail))
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	r, err := ctl.Run(ctx, opts.run)
	if err != nil {
		return err
	}
	id, cue := r.ID, opts.cue
	if cue != "" && !hasCue(r.Cues, cue) {
		return usageError(fmt.Errorf("run %s has no cue %q", id, cue))
	}
	write := logWriter(io.out, opts)
	wrote := map[string]bool{}
	var after int64
	show := func(lines []control.LogLine) error {
		for _, l := range lines {
			if err := write(l); err != nil {
				return err // the reader has gone
			}
			wrote[l.Cue] = true
			after = l.Seq
		}
		return nil
	}
	if opts.tail >= 0 {
		lines, last, err := ctl.LogsTail(ctx, control.LogsRequest{Run: id, Cue: cue, Tail: opts.tail})
		if err == nil {
			err = show(lines)
		}
		if err != nil {
			return err
		}
		if !opts.follow {
			return saySilent(ctx, io.err, ctl, id, cue, opts.tail == 0, wrote)
		}
		after = last
	}
	err = ctl.Follow(ctx, id, opts.follow, func() (bool, error) {
		lines, err := ctl.Logs(ctx, control.LogsRequest{Run: id, Cue: cue, After: after})
		if perr := show(lines); perr != nil {
			return false, perr
		}
		return len(lines) == control.PageSize, err
	})
	if err != nil || ctx.Err() != nil {
		return err
	}
	return saySilent(ctx, io.err, ctl, id, cue, opts.tail == 0, wrote)
}

// logWriter prints one line as text or JSON.
func logWriter(w io.Writer, opts *logsOptions) func(control.LogLine) error {
	if opts.output == "json" {
		enc := json.NewEncoder(w)
		return func(l control.LogLine) error { return enc.Encode(l) }
	}
	return func(l control.LogLine) error {
		stamp := ""
		if opts.timestamps {
			stamp = l.At.Local().Format("2006-01-02T15:04:05.000Z07:00") + " "
		}
		text := l.Line
		if opts.terminal && !opts.raw {
			text = terminalSafe(text)
		}
		_, err := fmt.Fprintf(w, "%s[%s %s#%d %s] %s\n", stamp, l.Cue, l.Agent, l.Attempt, l.Stream, text)
		return err
	}
}

// saySilent tells, on stderr, which cues wrote nothing, so that no output
// is not mistaken for a broken command: every cue that got to GO (or CUE,
// asked for by name, whatever its state). With --tail 0 nothing was asked
// for.
func saySilent(ctx context.Context, w io.Writer, ctl *control.Controller, id, cue string, none bool, wrote map[string]bool) error {
	if none {
		return nil
	}
	r, err := ctl.Run(ctx, id) // again: the cues' states as they are now
	if err != nil {
		return err
	}
	fans := control.FanOuts(r.Cues)
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
