package main

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// stopCue asks a running run's owner to stop one cue and its subtree (orch
// stop RUN CUE, docs/design.md#cascade-stop), waits until the cue and every task under it
// have ended, and says how many were stopped.
func stopCue(ctx context.Context, io *streams, db *store.DB, id, cue string, wait time.Duration) error {
	r, err := db.Run(ctx, id)
	if err != nil {
		return err
	}
	c := findCue(r, cue)
	switch {
	case c == nil:
		return usageError(fmt.Errorf("run %s has no cue %s (its cues: %s)", id, cue, strings.Join(planCues(r), ", ")))
	case c.Parent != "" && c.Kind != "item": // a fan-out's item stops as a cue does
		root := strings.SplitN(cue, "/", 2)[0]
		return usageError(fmt.Errorf("%s is a task of cue %s in run %s: stop the cue (orch stop %s %s)", cue, root, id, id, root))
	case r.State.Ended():
		fmt.Fprintf(io.out, "run %s is already %s\n", id, r.State)
		return nil
	case c.State.Final():
		fmt.Fprintf(io.out, "cue %s of run %s is already %s\n", cue, id, c.State)
		return nil
	case r.State != record.RunRunning:
		return usageError(fmt.Errorf("run %s is %s: orch stop RUN CUE stops a cue of a running run (orch stop %s stops the run)", id, r.State, id))
	}
	if _, err := db.AddCommand(ctx, record.Command{RunID: id, Kind: "stop", Cue: cue, Arg: "stopped by " + stoppedBy()}); err != nil {
		return err
	}
	for deadline := time.Now().Add(wait); ; {
		time.Sleep(100 * time.Millisecond)
		if r, err = db.Run(ctx, id); err != nil {
			return err
		}
		if tree := subtree(r, cue); allFinal(tree) {
			return reportStopped(io, id, cue, tree)
		}
		if r.State.Ended() || r.State != record.RunRunning {
			return fmt.Errorf("run %s is %s before cue %s ended", id, r.State, cue)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("run %s: its owner (process %d on %s) did not stop cue %s within %s", id, r.OwnerPID, r.OwnerHost, cue, wait)
		}
	}
}

// reportStopped says what the stop of a cue ended: the tasks stopped, the
// cue first, then its child tasks in the order they started.
func reportStopped(io *streams, id, cue string, tree []*store.CueDetail) error {
	var stopped []string
	for _, t := range tree {
		if t.State == record.CueStopped {
			stopped = append(stopped, t.ID)
		}
	}
	if tree[0].State != record.CueStopped { // it ended by itself before the stop reached it
		fmt.Fprintf(io.out, "cue %s of run %s ended %s before the stop reached it\n", cue, id, tree[0].State)
		return nil
	}
	noun := "tasks"
	if len(stopped) == 1 {
		noun = "task"
	}
	fmt.Fprintf(io.out, "cue %s of run %s stopped: stopped %d %s (%s)\n", cue, id, len(stopped), noun, strings.Join(stopped, ", "))
	return nil
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

// completeStoppableCues completes the plan's cues not yet over.
func completeStoppableCues(_ context.Context, r *store.RunDetail) []string {
	var out []string
	for _, c := range r.Cues {
		if c.Parent == "" && !c.State.Final() {
			out = append(out, fmt.Sprintf("%s\t%s %s", c.ID, c.State, strings.Join(c.Agents, ",")))
		}
	}
	return out
}
