package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/record"
)

// printReported lists what the agents of running cues reported.
func printReported(w io.Writer, st *control.RunStatus) {
	var lines []string
	for i, c := range st.Detail.Cues {
		if rep := st.Cues[i].Reported; rep != nil && c.State == record.CueGo {
			lines = append(lines, fmt.Sprintf("  %s %s: %s (%s)", c.ID, rep.Agent, statusText(rep.State, rep.Progress, rep.Detail), agoText(rep.At)))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "\nreported by the agents at work")
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
}

func agoText(at *string) string {
	if at == nil {
		return "-"
	}
	t, err := time.Parse(time.RFC3339Nano, *at)
	if err != nil {
		return *at
	}
	return ago(t)
}

type notifyModeOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run, cue   string
	mode       string
}

func newNotifyModeCmd(f *factory, runF func(*notifyModeOptions) error) *cobra.Command {
	opts := &notifyModeOptions{io: f.io, controller: f.Controller}
	return &cobra.Command{
		Use:   "notify-mode RUN [CUE] MODE",
		Short: "Set how children's messages reach their parent agent in a running run",
		Long: `Set the notification mode of a running run, or of one cue's subtree (the cue
and every task it handed off or spawned): how a child's messages and
discoveries reach its parent agent.

  immediate  each at once (the default)
  summary    collected, and delivered as one notice when the child ends
  silent     not delivered (they are recorded all the same: orch events)

A parent agent chooses the mode for its own children (notify.mode); what
you set here wins over its choice. The request goes to the run's owner
through the run database, as orch answer does (a run on Temporal gets it
as a signal, through orch-temporal, followed or not). (This is not the
notify: block or --notify, which send notices to you.)`,
		Example: `  orch notify-mode last summary
  orch notify-mode 3f9a CUE-100 silent`,
		Args:              argsBetween(2, 3),
		ValidArgsFunction: completeRuns(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run, opts.cue, opts.mode = args[0], "", args[len(args)-1]
			if len(args) == 3 {
				opts.cue = args[1]
			}
			if runF != nil {
				return runF(opts)
			}
			return notifyModeRun(cmd.Context(), opts)
		},
	}
}

func notifyModeRun(ctx context.Context, opts *notifyModeOptions) error {
	if err := control.CheckNotifyMode(opts.mode); err != nil { // before the database is opened
		return err
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	res, err := ctl.NotifyMode(ctx, control.NotifyModeRequest{Run: opts.run, Cue: opts.cue, Mode: opts.mode})
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.io.out, res.Message)
	return nil
}
