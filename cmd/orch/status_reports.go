package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// reportedJSON is the state an agent last reported for a cue or task
// (status.report, status.update), in orch status --output json.
type reportedJSON struct {
	Agent    string  `json:"agent"`
	State    string  `json:"state"`
	Progress float64 `json:"progress,omitempty"` // 0..1
	Detail   string  `json:"detail,omitempty"`
	At       *string `json:"at"`
}

// reportedStates is the last reported state of each cue or task of a run.
func reportedStates(ctx context.Context, db *store.DB, runID string) (map[string]*reportedJSON, error) {
	events, err := db.EventsOfType(ctx, runID, record.EvAgentStatus)
	if err != nil {
		return nil, err
	}
	out := map[string]*reportedJSON{}
	for _, e := range events {
		d, _ := e.Data.(record.StatusData)
		out[e.Cue] = &reportedJSON{Agent: e.Agent, State: e.State, Progress: d.Progress, Detail: d.Detail, At: timeJSON(e.At)}
	}
	return out, nil
}

// printReported lists what the agents of running cues reported.
func printReported(w io.Writer, r *store.RunDetail, reported map[string]*reportedJSON) {
	var lines []string
	for _, c := range r.Cues {
		if rep := reported[c.ID]; rep != nil && c.State == record.CueGo {
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

// askAgents is orch status RUN --ask: a status-request command for the
// run's owner, which sends status.request to the agents in GO (of cue and
// its subtree when cue is set); then it waits up to wait for their
// status.report to be recorded.
func askAgents(cmd *cobra.Command, ref, cue string, wait time.Duration) error {
	return onRun(cmd, ref, func(ctx context.Context, db *store.DB, _, id string) error {
		state, err := db.RunState(ctx, id)
		if err != nil {
			return err
		}
		if state != record.RunRunning {
			return fmt.Errorf("run %s is %s: no agent is at work to ask", id, state)
		}
		before, err := db.EventsOfType(ctx, id, record.EvAgentStatus)
		if err != nil {
			return err
		}
		if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "status-request", Cue: cue}); err != nil {
			return err
		}
		for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			if now, err := db.EventsOfType(ctx, id, record.EvAgentStatus); err == nil && len(now) > len(before) {
				time.Sleep(200 * time.Millisecond) // the other agents' answers, a moment behind
				return nil
			}
		}
		return nil // none answered in time: the status shows what was reported before
	})
}

var errNoMode = errors.New("want MODE: immediate, summary or silent")

func newNotifyModeCmd(io *streams) *cobra.Command {
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
through the run database, as orch answer does. (This is not the notify:
block or --notify, which send notices to you.)`,
		Example: `  orch notify-mode last summary
  orch notify-mode 3f9a CUE-100 silent`,
		Args:              argsBetween(2, 3),
		ValidArgsFunction: completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			cue, mode := "", args[len(args)-1]
			if len(args) == 3 {
				cue = args[1]
			}
			switch mode {
			case runner.NotifyImmediate, runner.NotifySummary, runner.NotifySilent:
			default:
				return usageError(fmt.Errorf("unknown mode %q: %w", mode, errNoMode))
			}
			return onRun(cmd, args[0], func(ctx context.Context, db *store.DB, _, id string) error {
				state, err := db.RunState(ctx, id)
				if err != nil {
					return err
				}
				if state != record.RunRunning {
					return fmt.Errorf("run %s is %s: no orch process is running it to change its notification mode", id, state)
				}
				if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "notify-mode", Cue: cue, Arg: mode}); err != nil {
					return err
				}
				where := "run " + id
				if cue != "" {
					where = "cue " + cue + " of run " + id + " and everything under it"
				}
				fmt.Fprintf(io.out, "notification mode %s sent for %s\n", mode, where)
				return nil
			})
		},
	}
}
