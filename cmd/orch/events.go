package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/record"
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
			return onRunReading(cmd, args[0], func(ctx context.Context, db *store.DB, dbFile, id string) error {
				enc := json.NewEncoder(io.out)
				after := since
				return followRun(ctx, db, id, follow, func() (bool, error) {
					events, err := db.Events(ctx, id, after, pageSize)
					for _, e := range events {
						var werr error
						if output == "json" {
							if raw, ok := e.Data.(record.RawData); ok { // printed as stored; say why it is not decoded
								fmt.Fprintf(io.err, "orch: event %d of run %s: its data cannot be read: %v\n", e.Seq, id, raw.Err)
							}
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
		if state.Ended() || state == record.RunPaused {
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
