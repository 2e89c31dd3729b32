package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/store"
)

func newEventsCmd(io *streams) *cobra.Command {
	var output string
	var follow bool
	var since int64
	cmd := &cobra.Command{
		Use:   "events RUN",
		Short: "Print a run's event log",
		Long: `Print the append-only event log of a run: every state change, attempt,
protocol message, blackboard write and note, with its sequence number.`,
		Example: `  orch events last
  orch events 3f9a --follow
  orch events last --output json | jq -c 'select(.type=="attempt/ended")'`,
		Args:              argsBetween(1, 1),
		ValidArgsFunction: completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return usageError(fmt.Errorf("unknown output %q (want text or json)", output))
			}
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, dbFile, id string) error {
				enc := json.NewEncoder(io.out)
				after := since
				return followRun(ctx, db, id, follow, func() (bool, error) {
					events, err := db.Events(ctx, id, after, pageSize)
					for _, e := range events {
						var werr error
						if output == "json" {
							werr = enc.Encode(e)
						} else {
							_, werr = fmt.Fprintf(io.out, "%6d %s %s\n", e.Seq, e.At.Local().Format("15:04:05.000"), describeEvent(e))
						}
						if werr != nil { // the reader has gone: nobody reads on
							return false, werr
						}
						after = e.Seq
					}
					return len(events) == pageSize, err
				})
			})
		},
	}
	outputFlag(cmd, &output, "text", "text or json (one event per line)", textOrJSON)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events until the run ends")
	cmd.Flags().Int64Var(&since, "since", 0, "only events after this sequence number")
	return cmd
}

func newLogsCmd(io *streams) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs RUN [CUE]",
		Short: "Print what a run's agents wrote (stderr, and stdout of plain agents)",
		Example: `  orch logs last
  orch logs last CUE-200
  orch logs 3f9a --follow`,
		Args:              argsBetween(1, 2),
		ValidArgsFunction: completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, dbFile, id string) error {
				cue := ""
				if len(args) == 2 {
					cue = args[1]
					r, err := db.Run(ctx, id)
					if err != nil {
						return err
					}
					if !hasCue(r.Cues, cue) {
						return usageError(fmt.Errorf("run %s has no cue %q", id, cue))
					}
				}
				var after int64
				return followRun(ctx, db, id, follow, func() (bool, error) {
					lines, err := db.Logs(ctx, id, cue, after, pageSize)
					for _, l := range lines {
						if _, err := fmt.Fprintf(io.out, "[%s %s#%d %s] %s\n", l.Cue, l.Agent, l.Attempt, l.Stream, l.Text); err != nil {
							return false, err // the reader has gone
						}
						after = l.ID
					}
					return len(lines) == pageSize, err
				})
			})
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the run ends")
	return cmd
}

func hasCue(cues []store.CueDetail, id string) bool {
	for _, c := range cues {
		if c.ID == id {
			return true
		}
	}
	return false
}

// pageSize is how many rows events and logs read at a time.
const pageSize = 1000

// followRun calls read (which prints the next page and reports whether it
// was full) until nothing is left. With --follow it goes on every 200 ms
// until the run ends or pauses — then reads once more, for what was written
// meanwhile — or the person leaves with Ctrl-C. Polling reads the run's
// state alone, not its cues.
func followRun(ctx context.Context, db *store.DB, id string, follow bool, read func() (full bool, err error)) error {
	last := !follow
	for {
		full, err := read()
		if err != nil {
			return ifNotLeft(ctx, err)
		}
		if full {
			continue
		}
		if last {
			return nil
		}
		state, err := db.RunState(ctx, id)
		if err != nil {
			return ifNotLeft(ctx, err)
		}
		if state.Ended() || state == runner.RunPaused {
			last = true
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ifNotLeft is err, unless the person left with Ctrl-C (the context ended):
// that is how --follow ends, and it is not a failure.
func ifNotLeft(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
