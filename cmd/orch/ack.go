package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

func newAckCmd(io *streams) *cobra.Command {
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
		ValidArgsFunction: completeRunThen(openEscalationIDs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, _, id string) error {
				return ackEscalation(ctx, io, db, id, args[1], retriedBy())
			})
		},
	}
	return cmd
}

// ackEscalation records that by acknowledged escalation eid of run id.
// Acknowledging one twice says so and records nothing more.
func ackEscalation(ctx context.Context, io *streams, db *store.DB, id, eid, by string) error {
	es, err := db.Escalation(ctx, id, eid)
	if errors.Is(err, store.ErrNoEscalation) {
		return noEscalation(ctx, db, id, eid)
	}
	if err != nil {
		return err
	}
	if !es.AckedAt.IsZero() {
		fmt.Fprintf(io.out, "%s was already acknowledged by %s\n", es.ID, es.AckedBy)
		return nil
	}
	if err := db.Append(ctx, record.Event{RunID: id, Type: record.EvEscalationAcked, Cue: es.Cue, Agent: es.Agent,
		Data: record.EscalationAckedData{ID: es.ID, By: by}}); err != nil {
		return err
	}
	fmt.Fprintf(io.out, "%s acknowledged: [%s] from %s (%s): %s\n", es.ID, es.Severity, es.Agent, es.Cue, oneLine(es.Text, 100))
	return nil
}

// noEscalation is the usage error for an id the run has no high or
// critical escalation by: it names the open ones.
func noEscalation(ctx context.Context, db *store.DB, id, eid string) error {
	open, err := db.Escalations(ctx, id, true)
	if err != nil {
		return err
	}
	if len(open) == 0 {
		return usageError(fmt.Errorf("run %s has no high or critical escalation %q, and none waits to be acknowledged", id, eid))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run %s has no high or critical escalation %q; not yet acknowledged:", id, eid)
	for _, es := range open {
		fmt.Fprintf(&b, "\n  %s [%s] %s (%s): %s", es.ID, es.Severity, es.Agent, es.Cue, oneLine(es.Text, 80))
	}
	return usageError(errors.New(b.String()))
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
