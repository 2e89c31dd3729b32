package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/store"
)

type ackOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	run, id    string
}

func newAckCmd(f *factory, runF func(*ackOptions) error) *cobra.Command {
	opts := &ackOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "ack RUN ID",
		Short: "Acknowledge a high or critical escalation an agent sent",
		Long: `Acknowledge escalation ID (e42: orch status RUN lists those not yet
acknowledged, orch serve's page shows them in its inbox). An escalation
never blocks its agent: acknowledging one only records that you saw it
(an escalation/acknowledged event, in orch events), and takes it out of
orch status's list and the inbox. It works on a run in any state.`,
		Example: `  orch ack last e42
  orch status 3f9a --output json | jq -r '.escalations[] | select(.acknowledged_at == null) | .id'`,
		Args:              argsBetween(2, 2),
		ValidArgsFunction: completeRunThen(f, openEscalationIDs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run, opts.id = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return ackRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func ackRun(ctx context.Context, opts *ackOptions) error {
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	res, err := ctl.Ack(ctx, control.AckRequest{Run: opts.run, ID: opts.id})
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.io.out, res.Message)
	return nil
}

func openEscalationIDs(ctx context.Context, r *store.RunDetail) []string {
	var out []string
	for _, es := range r.Escalations {
		if es.AckedAt.IsZero() {
			out = append(out, fmt.Sprintf("%s\t[%s] %s: %s", es.ID, es.Severity, es.Agent, oneLine(es.Text, 60)))
		}
	}
	return out
}
