package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/record"
)

type eventsOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run        string
	output     string
	follow     bool
	since      int64
}

func newEventsCmd(f *factory, runF func(*eventsOptions) error) *cobra.Command {
	opts := &eventsOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "events RUN",
		Short: "Print a run's event log",
		Long: `Print the append-only event log of a run: every state change, attempt,
protocol message, blackboard write and note, with its sequence number.`,
		Example: `  orch events last
  orch events 3f9a --follow
  orch events last --output json | jq -c 'select(.type=="attempt/ended")'`,
		Args:              argsBetween(1, 1),
		ValidArgsFunction: completeRuns(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run = args[0]
			if runF != nil {
				return runF(opts)
			}
			return eventsRun(cmd.Context(), opts)
		},
	}
	outputFlag(cmd, &opts.output, "text", "text or json (one event per line)", textOrJSON)
	cmd.Flags().BoolVarP(&opts.follow, "follow", "f", false, "keep printing new events until the run ends")
	cmd.Flags().Int64Var(&opts.since, "since", 0, "only events after this sequence number")
	return cmd
}

func eventsRun(ctx context.Context, opts *eventsOptions) error {
	io := opts.io
	if opts.output != "text" && opts.output != "json" {
		return usageError(fmt.Errorf("unknown output %q (want text or json)", opts.output))
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	id, err := ctl.Resolve(ctx, opts.run)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(io.out)
	after := opts.since
	return ctl.Follow(ctx, id, opts.follow, func() (bool, error) {
		events, err := ctl.Events(ctx, control.EventsRequest{Run: id, After: after})
		for _, e := range events {
			var werr error
			if opts.output == "json" {
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
		return len(events) == control.PageSize, err
	})
}
