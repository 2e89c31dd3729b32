package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// printVerdict is the summary after a run: counts, then root cause first:
// each failed cue in the order they failed, the last lines its agents
// printed, and the cues it blocked; then what to do next. The plan's cues
// only: child tasks are in orch status.
//
// The store's detail of the run is read only when the verdict needs it: a
// continued run's whole duration, or failed cues' order and attempts. A
// run started here whose cues completed says what the runner's result says
// (the read cost a short run more than its verdict's printing).
func printVerdict(io *streams, db *store.DB, plan *planner.Plan, res *runner.Result, took time.Duration, tailLines int, continued bool) {
	counts := map[record.CueState]int{}
	for _, c := range res.Cues {
		counts[c.State]++
	}
	var parts []string
	for _, s := range []record.CueState{record.CueCompleted, record.CueFailed, record.CueBlocked, record.CueSkipped, record.CueStopped, record.CueInterrupted, record.CuePending} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	var detail *store.RunDetail // nil: the summary goes on without the store's detail
	if continued || counts[record.CueFailed] > 0 {
		detail, _ = db.Run(context.Background(), res.RunID)
	}
	fmt.Fprintf(io.out, "run %s %s in %s: %s\n", res.RunID, res.State, runTook(detail, took), strings.Join(parts, ", "))
	if rb := res.ResultBranch; rb != nil {
		fmt.Fprintf(io.out, "  %s (orch land %s brings it into your branch)\n", resultLine(rb), res.RunID)
	}
	if res.State != record.RunCompleted && res.State != record.RunPaused && !strings.HasPrefix(res.Reason, "failed: ") {
		fmt.Fprintf(io.out, "  %s\n", res.Reason)
	}
	failed := failedFirst(res, detail)
	blocked := blockedBy(plan, res)
	for _, c := range failed {
		fmt.Fprintf(io.out, "  %s failed: %s\n", c.ID, c.Reason)
		for _, a := range lastFailures(detail, c.ID) {
			lines, _ := db.AttemptTail(context.Background(), res.RunID, c.ID, a.Agent, a.Number, tailLines)
			for _, l := range tailBlock("    ", a.Agent, a.Number, lines) {
				fmt.Fprintln(io.out, l)
			}
		}
		if b := blocked[c.ID]; len(b) > 0 {
			fmt.Fprintf(io.out, "    blocked by it: %s\n", strings.Join(b, ", "))
		}
	}
	switch res.State {
	case record.RunFailed:
		if len(failed) > 0 {
			fmt.Fprintf(io.out, "  its output: orch logs %s %s\n", res.RunID, failed[0].ID)
		}
	case record.RunPaused:
		for _, cue := range res.Waiting {
			fmt.Fprintf(io.out, "  %s waits for GO; continue with: orch go %s %s\n", cue, res.RunID, cue)
		}
	}
}

// failedFirst is the failed cues, the first to fail first (plan order when
// the store cannot say).
func failedFirst(res *runner.Result, detail *store.RunDetail) []record.CueOutcome {
	ended := map[string]time.Time{}
	if detail != nil {
		for _, c := range detail.Cues {
			ended[c.ID] = c.EndedAt
		}
	}
	var failed []record.CueOutcome
	for _, c := range res.Cues {
		if c.State == record.CueFailed {
			failed = append(failed, c)
		}
	}
	sort.SliceStable(failed, func(i, j int) bool {
		a, b := ended[failed[i].ID], ended[failed[j].ID]
		return !a.IsZero() && (b.IsZero() || a.Before(b))
	})
	return failed
}

// lastFailures is each agent's last failed attempt at a cue.
func lastFailures(detail *store.RunDetail, cue string) []store.AttemptDetail {
	if detail == nil {
		return nil
	}
	for _, c := range detail.Cues {
		if c.ID != cue {
			continue
		}
		last := map[string]int{}
		var out []store.AttemptDetail
		for _, a := range c.Attempts {
			if a.State != record.AttemptFailed {
				continue
			}
			if i, ok := last[a.Agent]; ok {
				out[i] = a
				continue
			}
			last[a.Agent] = len(out)
			out = append(out, a)
		}
		return out
	}
	return nil
}

// blockedBy maps each failed cue to the blocked cues that waited for it,
// directly or through other blocked cues, in plan order.
func blockedBy(plan *planner.Plan, res *runner.Result) map[string][]string {
	state := map[string]record.CueState{}
	for _, c := range res.Cues {
		state[c.ID] = c.State
	}
	out := map[string][]string{}
	if plan == nil {
		return out
	}
	roots := map[string][]string{} // memo: a blocked cue's failed ancestors
	var rootsOf func(id string) []string
	rootsOf = func(id string) []string {
		if r, ok := roots[id]; ok {
			return r
		}
		roots[id] = nil // a cycle cannot be planned; this only guards the walk
		var r []string
		c := plan.ByID[id]
		if c == nil {
			return nil
		}
		for _, d := range c.Deps {
			switch state[d.ID] {
			case record.CueFailed:
				r = appendNew(r, d.ID)
			case record.CueBlocked:
				for _, x := range rootsOf(d.ID) {
					r = appendNew(r, x)
				}
			}
		}
		roots[id] = r
		return r
	}
	for _, c := range res.Cues {
		if c.State == record.CueBlocked {
			for _, root := range rootsOf(c.ID) {
				out[root] = append(out[root], c.ID)
			}
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// terminalLive sets up the live display on the terminal: its size, read at
// each redraw; prompts read from it when it is stdin too.
func terminalLive(io *streams, ro runner.Options, tail tailFunc) liveOptions {
	o := liveOptions{color: os.Getenv("NO_COLOR") == "", tail: tail,
		size: func() (int, int) {
			cols, rows, err := term.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 0, 0
			}
			return cols, rows
		}}
	for _, c := range ro.Plan.Cues {
		o.cues = append(o.cues, record.CueInfo{ID: c.ID, Agents: c.Agents})
	}
	if ro.Resume != nil {
		o.states = map[string]record.CueState{}
		for id, c := range ro.Resume.Cues {
			o.states[id] = c.State
		}
	}
	if f, ok := io.in.(*os.File); ok && io.inTTY {
		o.input = f
	}
	return o
}

// runTook is the run's whole time, from its start to now: a run continued
// by orch go, resume or retry took longer than this process's part, which
// is added when it differs (a run that waited 18s for a GO did not take the
// 6ms its last part did).
func runTook(detail *store.RunDetail, part time.Duration) string {
	if detail == nil || detail.StartedAt.IsZero() {
		return shortDuration(part)
	}
	whole := time.Since(detail.StartedAt)
	if !detail.EndedAt.IsZero() && detail.EndedAt.After(detail.StartedAt) {
		whole = detail.EndedAt.Sub(detail.StartedAt)
	}
	if whole < part+time.Second {
		return shortDuration(part)
	}
	return fmt.Sprintf("%s (%s since it continued)", shortDuration(whole), shortDuration(part))
}
