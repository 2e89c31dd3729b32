package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// ErrNoMode is in the error for a notification mode orch does not have.
var ErrNoMode = errors.New("want MODE: immediate, summary or silent")

// NotifyModeRequest sets how children's messages reach their parent agent
// in a running run, or in one cue's subtree.
type NotifyModeRequest struct {
	Run  string
	Cue  string // "": the whole run
	Mode string // immediate, summary or silent
}

// NotifyModeResult is a mode sent to the run's owner.
type NotifyModeResult struct {
	Run     string `json:"run"`
	Cue     string `json:"cue,omitempty"`
	Mode    string `json:"mode"`
	Message string `json:"message"`
}

// CheckNotifyMode refuses a mode orch does not have (Invalid).
func CheckNotifyMode(mode string) error {
	switch mode {
	case runner.NotifyImmediate, runner.NotifySummary, runner.NotifySilent:
		return nil
	}
	return &Error{Kind: Invalid, Err: fmt.Errorf("unknown mode %q: %w", mode, ErrNoMode)}
}

// NotifyMode sends the mode to the run's owner through the run database
// (what the person sets wins over the parent agent's own choice).
func (c *Controller) NotifyMode(ctx context.Context, req NotifyModeRequest) (*NotifyModeResult, error) {
	if err := CheckNotifyMode(req.Mode); err != nil {
		return nil, err
	}
	var out *NotifyModeResult
	err := c.writing(ctx, req.Run, func(db *store.DB, id string) error {
		if t, err := onTemporal(ctx, db, id, "orch notify-mode", nil); err != nil || t != nil {
			if err != nil {
				return err
			}
			msg, err := c.handOver(db, id, t, []string{"notify-mode"}, append(nonEmpty(req.Cue), req.Mode)...)
			out = &NotifyModeResult{Run: id, Cue: req.Cue, Mode: req.Mode, Message: msg}
			return err
		}
		state, err := db.RunState(ctx, id)
		if err != nil {
			return err
		}
		if state != record.RunRunning {
			return refusedf("run %s is %s: no orch process is running it to change its notification mode", id, state)
		}
		if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "notify-mode", Cue: req.Cue, Arg: req.Mode}); err != nil {
			return err
		}
		where := "run " + id
		if req.Cue != "" {
			where = "cue " + req.Cue + " of run " + id + " and everything under it"
		}
		out = &NotifyModeResult{Run: id, Cue: req.Cue, Mode: req.Mode, Message: fmt.Sprintf("notification mode %s sent for %s", req.Mode, where)}
		return nil
	})
	return out, err
}

// AskRequest asks the agents at work for their state.
type AskRequest struct {
	Run  string
	Cue  string        // "": every agent in GO; else this cue's (and its children's)
	Wait time.Duration // how long to wait for their answers
}

// AskAgents sends a status request to the run's owner, which sends
// status.request to the agents in GO; then it waits up to req.Wait for
// their status.report to be recorded (none in time: Status shows what was
// reported before).
func (c *Controller) AskAgents(ctx context.Context, req AskRequest) error {
	return c.writing(ctx, req.Run, func(db *store.DB, id string) error {
		state, err := db.RunState(ctx, id)
		if err != nil {
			return err
		}
		if state != record.RunRunning {
			return refusedf("run %s is %s: no agent is at work to ask", id, state)
		}
		before, err := db.EventsOfType(ctx, id, record.EvAgentStatus)
		if err != nil {
			return err
		}
		if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "status-request", Cue: req.Cue}); err != nil {
			return err
		}
		for deadline := time.Now().Add(req.Wait); time.Now().Before(deadline); {
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
		return nil
	})
}
