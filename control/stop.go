package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// StopRequest stops a run, or one of its cues with every task under it.
type StopRequest struct {
	Run string
	Cue string // "": the whole run
	// Wait is how long to wait for the run's owner to stop it (or the cue).
	Wait time.Duration
	// Unhandled: options the Temporal engine does not take (see Engine).
	Unhandled []string
}

// StopResult is what a stop did.
type StopResult struct {
	Run string `json:"run"`
	Cue string `json:"cue,omitempty"`
	// State is the run's state after the stop (of the cue, for a cue).
	State string `json:"state"`
	// Stopped are the tasks a cue's stop stopped: the cue first, then its
	// child tasks in the order they started.
	Stopped []string `json:"stopped,omitempty"`
	Message string   `json:"message"`
}

// Stop stops a run from outside its owner: its owner gets the stop through
// the run database and cascades it; a run whose owner is gone is taken
// over, what it left is killed, and it is marked stopped here. With a Cue,
// only that cue and its subtree stop (the run must be running).
func (c *Controller) Stop(ctx context.Context, req StopRequest) (*StopResult, error) {
	var out *StopResult
	err := c.writing(ctx, req.Run, func(db *store.DB, id string) (err error) {
		if t, err := onTemporal(ctx, db, id, "orch stop", req.Unhandled); err != nil || t != nil {
			if err != nil {
				return err
			}
			msg, err := c.handOver(db, id, t, []string{"stop"}, nonEmpty(req.Cue)...)
			out = &StopResult{Run: id, Cue: req.Cue, Message: msg}
			return err
		}
		if req.Cue != "" {
			out, err = stopCue(ctx, db, id, req.Cue, req.Wait)
		} else {
			out, err = stopRun(ctx, db, id, req.Wait)
		}
		return err
	})
	return out, err
}

// nonEmpty is s as a list: none when empty.
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func stopRun(ctx context.Context, db *store.DB, id string, wait time.Duration) (*StopResult, error) {
	r, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.State.Ended() {
		return &StopResult{Run: id, State: string(r.State), Message: fmt.Sprintf("run %s is already %s", id, r.State)}, nil
	}
	stopped := &StopResult{Run: id, State: string(record.RunStopped), Message: fmt.Sprintf("run %s stopped", id)}
	if r.State == record.RunRunning {
		if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "stop", Arg: fmt.Sprintf("from process %d", os.Getpid())}); err != nil {
			return nil, err
		}
		deadline := time.Now().Add(wait)
		for time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			if r, err = db.Run(ctx, id); err != nil {
				return nil, err
			}
			if r.State != record.RunRunning {
				break
			}
		}
		if r.State == record.RunStopped {
			return stopped, nil
		}
		if r.State == record.RunRunning {
			return nil, refusedf("run %s: its owner (process %d on %s) did not stop it within %s", id, r.OwnerPID, r.OwnerHost, wait)
		}
	}
	// No live owner: take the run over, stop what it left, and mark it stopped.
	host, _ := os.Hostname()
	if err := db.ClaimRun(ctx, id, record.Owner{PID: os.Getpid(), Host: host, Token: record.NewRunID()}); err != nil {
		var owned *store.OwnedError
		if errors.As(err, &owned) {
			return nil, As(Refused, fmt.Errorf("%w; try again", err))
		}
		return nil, err
	}
	killed := proc.KillLeftovers(id)
	runner.RemoveWorkDirs(id, "")
	var events []record.Event
	if len(killed) > 0 {
		events = append(events, record.Event{RunID: id, Type: record.EvNote, Reason: fmt.Sprintf("orch stop killed %d process(es) left by the run's owner", len(killed))})
	}
	for _, c := range r.Cues {
		for _, a := range c.Attempts {
			if a.State == record.AttemptRunning || a.State == record.AttemptPaused { // a paused one waited for a GO that will not come
				events = append(events, record.Event{RunID: id, Type: record.EvAttemptEnded, Cue: c.ID, Agent: a.Agent, Attempt: a.Number,
					State: string(record.AttemptStopped), Reason: "orch stop: its run's owner was gone",
					Data: record.AttemptEndedData{Class: "stopped"}})
			}
		}
		if !c.State.Final() {
			events = append(events, record.Event{RunID: id, Type: record.EvCueState, Cue: c.ID, State: string(record.CueStopped), Reason: "orch stop"})
		}
	}
	events = append(events, record.Event{RunID: id, Type: record.EvRunState, State: string(record.RunStopped), Reason: "orch stop"})
	if err := db.Append(ctx, events...); err != nil {
		return nil, err
	}
	return stopped, nil
}

// stopCue asks a running run's owner to stop one cue and its subtree (orch
// stop RUN CUE, docs/design.md#cascade-stop), waits until the cue and every task under it
// have ended, and says how many were stopped.
func stopCue(ctx context.Context, db *store.DB, id, cue string, wait time.Duration) (*StopResult, error) {
	r, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	c := findCue(r, cue)
	switch {
	case c == nil:
		return nil, invalidf("run %s has no cue %s (its cues: %s)", id, cue, strings.Join(planCues(r), ", "))
	case c.Parent != "" && c.Kind != "item": // a fan-out's item stops as a cue does
		root := strings.SplitN(cue, "/", 2)[0]
		return nil, invalidf("%s is a task of cue %s in run %s: stop the cue (orch stop %s %s)", cue, root, id, id, root)
	case r.State.Ended():
		return &StopResult{Run: id, Cue: cue, State: string(c.State), Message: fmt.Sprintf("run %s is already %s", id, r.State)}, nil
	case c.State.Final():
		return &StopResult{Run: id, Cue: cue, State: string(c.State), Message: fmt.Sprintf("cue %s of run %s is already %s", cue, id, c.State)}, nil
	case r.State != record.RunRunning:
		return nil, invalidf("run %s is %s: orch stop RUN CUE stops a cue of a running run (orch stop %s stops the run)", id, r.State, id)
	}
	if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "stop", Cue: cue, Arg: "stopped by " + stoppedBy()}); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(wait); ; {
		time.Sleep(100 * time.Millisecond)
		if r, err = db.Run(ctx, id); err != nil {
			return nil, err
		}
		if tree := subtree(r, cue); allFinal(tree) {
			return cueStopped(id, cue, tree), nil
		}
		if r.State.Ended() || r.State != record.RunRunning {
			return nil, refusedf("run %s is %s before cue %s ended", id, r.State, cue)
		}
		if time.Now().After(deadline) {
			return nil, refusedf("run %s: its owner (process %d on %s) did not stop cue %s within %s", id, r.OwnerPID, r.OwnerHost, cue, wait)
		}
	}
}

// cueStopped says what the stop of a cue ended: the tasks stopped, the cue
// first, then its child tasks in the order they started.
func cueStopped(id, cue string, tree []*store.CueDetail) *StopResult {
	out := &StopResult{Run: id, Cue: cue, State: string(tree[0].State)}
	for _, t := range tree {
		if t.State == record.CueStopped {
			out.Stopped = append(out.Stopped, t.ID)
		}
	}
	if tree[0].State != record.CueStopped { // it ended by itself before the stop reached it
		out.Message = fmt.Sprintf("cue %s of run %s ended %s before the stop reached it", cue, id, tree[0].State)
		return out
	}
	noun := "tasks"
	if len(out.Stopped) == 1 {
		noun = "task"
	}
	out.Message = fmt.Sprintf("cue %s of run %s stopped: stopped %d %s (%s)", cue, id, len(out.Stopped), noun, strings.Join(out.Stopped, ", "))
	return out
}

func findCue(r *store.RunDetail, id string) *store.CueDetail {
	for i := range r.Cues {
		if r.Cues[i].ID == id {
			return &r.Cues[i]
		}
	}
	return nil
}

func planCues(r *store.RunDetail) []string {
	var ids []string
	for _, c := range r.Cues {
		if c.Parent == "" {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// subtree is the cue and every task under it (its children, theirs, ...).
func subtree(r *store.RunDetail, cue string) []*store.CueDetail {
	var out []*store.CueDetail
	for i := range r.Cues {
		// A fan-out's items (CUE[0]) and their children are under it too.
		if c := &r.Cues[i]; c.ID == cue || strings.HasPrefix(c.ID, cue+"/") || strings.HasPrefix(c.ID, cue+"[") && c.Kind != "dropped" {
			out = append(out, c)
		}
	}
	return out
}

func allFinal(tasks []*store.CueDetail) bool {
	for _, t := range tasks {
		if !t.State.Final() {
			return false
		}
	}
	return len(tasks) > 0
}

// stoppedBy names who stops: the user name.
func stoppedBy() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if name := os.Getenv("USER"); name != "" {
		return name
	}
	return fmt.Sprintf("process %d", os.Getpid())
}
