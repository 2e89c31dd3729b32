package control

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// GoRequest says GO for a manual cue.
type GoRequest struct {
	Run, Cue string
	// Wait is how long to wait for a running run's owner to take the GO.
	Wait time.Duration
	// AllowSpecChange continues a run with no owner even if its cuelist's
	// files changed since it started.
	AllowSpecChange bool
	// Detach continues a run with no live owner in a detached orch (else
	// the result holds an Execution for the caller to run).
	Detach *Detach
	// Unhandled: options the Temporal engine does not take (see Engine).
	Unhandled []string
}

// GoResult is what a GO did: sent to a live owner (Message says whether
// it took it), handed over to orch-temporal, or — the run had no owner —
// the run to continue: an Execution, or Detached.
type GoResult struct {
	Run      string    `json:"run"`
	Cue      string    `json:"cue"`
	Message  string    `json:"message"`
	Detached *Detached `json:"detached,omitempty"`

	Execution *Execution `json:"-"`
}

// Go says GO for a manual cue. If the run's owner is running (doing other
// work while the cue stands by), the GO reaches it through the run
// database, and Go waits up to req.Wait for the owner to take it: a run
// stopped (or ended) before it could act on the GO is Refused; an owner
// that has not taken it by then still will. A run with no owner (paused:
// nothing else could move) is continued: by the caller (Execution), or in
// a detached orch (Detach).
func (c *Controller) Go(ctx context.Context, req GoRequest) (*GoResult, error) {
	db, id, err := c.writerOn(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	res, err := c.goCue(ctx, db, id, req)
	if res == nil || res.Execution == nil {
		db.Close()
	}
	return res, c.damaged(err)
}

func (c *Controller) goCue(ctx context.Context, db *store.DB, id string, req GoRequest) (*GoResult, error) {
	out := &GoResult{Run: id, Cue: req.Cue}
	if t, err := onTemporal(ctx, db, id, "orch go", req.Unhandled); err != nil || t != nil {
		if err == nil {
			c.catchUp(ctx, db, id) // the cue's state as the workflow has it, not as last followed
			_, err = goCheck(ctx, db, id, req.Cue)
		}
		if err == nil {
			out.Message, err = c.handOver(db, id, t, []string{"go"}, req.Cue)
		}
		return out, err
	}
	if req.Detach == nil {
		if err := proc.Supported(); err != nil {
			return nil, &Error{Kind: Unsupported, Err: err}
		}
	}
	r, err := goCheck(ctx, db, id, req.Cue)
	if err != nil {
		return nil, err
	}
	switch {
	case r.State == record.RunRunning: // a live owner: it picks the GO up
		cmdID, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "go", Cue: req.Cue})
		if err != nil {
			return nil, err
		}
		out.Message, err = goTaken(ctx, db, r, req.Cue, cmdID, req.Wait)
		return out, err
	case req.Detach != nil:
		rec, err := db.LoadRun(ctx, id)
		if err == nil {
			_, _, _, err = continuable(rec, req.AllowSpecChange)
		}
		if err != nil {
			return nil, refusedWhenDetached(req.Detach, err)
		}
		args := []string{"go", id, req.Cue}
		if req.AllowSpecChange {
			args = []string{"go", "--allow-spec-change", id, req.Cue}
		}
		if out.Detached, err = c.detach(req.Detach, db.Path(), id, args...); err != nil {
			return nil, err
		}
		out.Message = out.Detached.message(id)
		return out, nil
	}
	if err := db.Append(ctx, record.Event{RunID: id, Type: record.EvManualGo, Cue: req.Cue, Reason: "orch go"}); err != nil {
		return nil, err
	}
	if out.Execution, err = continueRun(ctx, db, id, req.AllowSpecChange); err != nil {
		return nil, err
	}
	return out, nil
}

// goTaken waits up to wait for the owner of run r to take the GO for cue
// (command cmdID) and act on it, and says what happened: a stop that reached
// the run (or the cue) in the same moment wins over the GO, and is Refused.
func goTaken(ctx context.Context, db *store.DB, r *store.RunDetail, cue string, cmdID int64, wait time.Duration) (string, error) {
	sent := fmt.Sprintf("GO for %s sent to run %s (owner: pid %d on %s)", cue, r.ID, r.OwnerPID, r.OwnerHost)
	deadline := time.Now().Add(wait)
	for {
		cmds, err := db.Commands(ctx, r.ID)
		if err != nil {
			return "", err
		}
		taken := !slices.ContainsFunc(cmds, func(c record.Command) bool { return c.ID == cmdID })
		now, err := db.Run(ctx, r.ID)
		if err != nil {
			return "", err
		}
		var state record.CueState
		for _, c := range now.Cues {
			if c.ID == cue {
				state = c.State
			}
		}
		waiting := state == record.CuePending || state == record.CueWarning || state == record.CueStandby
		switch {
		case state == record.CueStopped || waiting && now.State != record.RunRunning:
			why := string(now.State)
			if now.Reason != "" {
				why += ": " + now.Reason
			}
			return "", refusedf("the GO for %s did not take effect: run %s is %s and %s is %s", cue, r.ID, why, cue, state)
		case taken && !waiting:
			return sent, nil
		case time.Now().After(deadline):
			if taken {
				return fmt.Sprintf("%s; %s is still %s (its turn has not come)", sent, cue, state), nil
			}
			return sent + "; the owner has not taken it yet, and will", nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// goCheck refuses a GO for a cue that cannot take one (none by that name, a
// child task, a cue already over, a run that ended) and returns the run.
func goCheck(ctx context.Context, db *store.DB, id, cue string) (*store.RunDetail, error) {
	r, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	c := findCue(r, cue)
	switch {
	case c == nil:
		return nil, invalidf("run %s has no cue %q", id, cue)
	case c.Parent != "" && c.Kind != "item": // a fan-out's item waits for GO as a cue does
		return nil, invalidf("%s is a child task (a %s of %s), started and stopped by its parent: orch go is for the cuelist's cues", cue, c.Kind, c.Parent)
	case c.State.Final():
		return nil, invalidf("cue %s of run %s is already %s", cue, id, c.State)
	case r.State.Ended():
		return nil, invalidf("run %s is %s: nothing waits for GO", id, r.State)
	}
	return r, nil
}
