package main

import (
	"fmt"
	"strings"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// A fan-out (a cue with for_each) is shown with its items' counts, each
// item under it (cueTree).

// itemsJSON is a fan-out's items in orch status --output json: their ids
// in item order and how many are in each state.
type itemsJSON struct {
	Count     int            `json:"count"`
	Completed int            `json:"completed"`
	Failed    int            `json:"failed"`
	Stopped   int            `json:"stopped"` // stopped (orch stop, or another item failed under on_failure: fast)
	Running   int            `json:"running"` // in WARNING, STANDBY or GO
	Pending   int            `json:"pending"` // not started, or waiting for a GO (interrupted)
	States    map[string]int `json:"states"`
	IDs       []string       `json:"ids"`
}

// fanOuts counts the items of each fan-out of the run, by its cue id.
func fanOuts(cues []store.CueDetail) map[string]*itemsJSON {
	out := map[string]*itemsJSON{}
	for i := range cues {
		c := &cues[i]
		if c.Kind != "item" {
			continue
		}
		f := out[c.Parent]
		if f == nil {
			f = &itemsJSON{States: map[string]int{}}
			out[c.Parent] = f
		}
		f.Count++
		f.IDs = append(f.IDs, c.ID)
		f.States[string(c.State)]++
		switch {
		case c.State == record.CueCompleted:
			f.Completed++
		case c.State == record.CueStopped:
			f.Stopped++
		case c.State.Final():
			f.Failed++
		case c.State == record.CueWarning || c.State == record.CueStandby || c.State == record.CueGo:
			f.Running++
		default:
			f.Pending++
		}
	}
	return out
}

// text is the counts in a line: "3 items: 2 completed, 1 failed".
func (f *itemsJSON) text() string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{f.Completed, "completed"}, {f.Failed, "failed"}, {f.Stopped, "stopped"}, {f.Running, "running"}, {f.Pending, "pending"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d items", f.Count)
	}
	return fmt.Sprintf("%d items: %s", f.Count, strings.Join(parts, ", "))
}

// fanOutReason is a fan-out's REASON in orch status: its items' counts,
// then its own reason (once over).
func fanOutReason(f *itemsJSON, c *store.CueDetail) string {
	if f == nil {
		return c.Reason
	}
	if c.Reason == "" || strings.HasPrefix(c.Reason, "fan-out: ") {
		return f.text()
	}
	return f.text() + "; " + c.Reason
}
