package control

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/record"
)

// retryPlan is what orch retry does with each of a run's cues.
type retryPlan struct {
	verdicts  []cueVerdict // in plan order
	rerun     []string     // the cues that run again, in plan order
	kept      int          // completed cues kept
	stale     []string     // completed cues kept though their definition changed
	asked     []string     // --rerun
	from      string       // --from
	unknown   bool         // the run recorded no definitions (an older orch): kept cues count as unchanged
	continues bool         // cues left as an interrupted run left them (orch resume would run them)
}

// cueVerdict is what happens to one cue, and why.
type cueVerdict struct {
	id    string
	was   record.CueState
	rerun bool   // back to pending: it runs again
	keep  bool   // completed: kept with its outputs
	why   string // for people
	items *itemsPlan
}

// planRetry decides, for each cue of the run, whether it runs again. rec is
// the run as recorded, p its cuelist as it is now, now and then the
// fingerprints of the cues' definitions now and as they last ran (then is
// nil for a run recorded before them).
func planRetry(rec *record.RunRecord, p *planner.Plan, now, then map[string]string, rerun []string, from string) (*retryPlan, error) {
	if err := sameCues(rec, p); err != nil {
		return nil, err
	}
	asked := map[string]string{} // cue -> why it was asked for
	for _, id := range rerun {
		if p.ByID[id] == nil {
			return nil, fmt.Errorf("--rerun %s: run %s has no cue %q", id, rec.ID, id)
		}
		asked[id] = "--rerun " + id
	}
	if from != "" {
		start := p.ByID[from]
		if start == nil {
			return nil, fmt.Errorf("--from %s: run %s has no cue %q", from, rec.ID, from)
		}
		for _, c := range p.Order {
			if c == start || p.Reaches(start, c) {
				if _, ok := asked[c.ID]; !ok {
					asked[c.ID] = "--from " + from
				}
			}
		}
	}
	rp := &retryPlan{asked: rerun, from: from, unknown: then == nil}
	for _, c := range p.Order {
		cr := rec.Cues[c.ID]
		v := cueVerdict{id: c.ID, was: cr.State}
		why, isAsked := asked[c.ID]
		switch {
		case isAsked:
			v.rerun, v.why = true, "asked for: "+why
		case cr.State == record.CueCompleted:
			v.keep, v.why = true, "completed"
			if then[c.ID] != "" && then[c.ID] != now[c.ID] {
				v.why = fmt.Sprintf("completed; its definition changed since it ran (--rerun %s runs it again)", c.ID)
				rp.stale = append(rp.stale, c.ID)
			}
		case cr.State == record.CueFailed, cr.State == record.CueBlocked, cr.State == record.CueSkipped, cr.State == record.CueStopped:
			v.rerun, v.why = true, "it was "+string(cr.State)
			if cr.State == record.CueFailed {
				v.why = "it failed"
			}
			if cr.Reason != "" {
				v.why += ": " + OneLine(cr.Reason, 100)
			}
		case c.ForEach != nil && cr.State == record.CueGo: // its items were at work
			rp.continues = true
			v.why = "it was fanning out when its run's owner stopped: its items that had not ended run, as orch resume would run them"
			if v.items = itemsAgain(rec, c.ID, false, true); len(v.items.again) > 0 {
				v.why += fmt.Sprintf("; its items that failed or were stopped run again: %s", ShortList(v.items.again, 5))
			}
		case cr.State == record.CueInterrupted || cr.State == record.CueGo && !c.IsIdempotent():
			rp.continues = true
			v.why = fmt.Sprintf("it was in GO when its run's owner stopped and is not idempotent: it waits for orch go %s %s (or --rerun %s)", rec.ID, c.ID, c.ID)
		default: // pending, or on its way when the owner stopped: it runs, as orch resume runs it
			rp.continues = true
			v.why = "it had not ended (" + string(cr.State) + "): it runs, as orch resume would run it"
		}
		if v.rerun {
			rp.rerun = append(rp.rerun, c.ID)
			if c.ForEach != nil {
				v.items = itemsAgain(rec, c.ID, isAsked || rerunsUpstream(p, c, rp.rerun), false)
				v.why += v.items.why()
			}
		}
		if v.keep {
			rp.kept++
		}
		rp.verdicts = append(rp.verdicts, v)
	}
	return rp, nil
}

// sameCues refuses a cuelist whose cues are not the run's any more: the
// run's record has a row per cue, made when it started.
func sameCues(rec *record.RunRecord, p *planner.Plan) error {
	var added, removed []string
	for _, c := range p.Order {
		if _, ok := rec.Cues[c.ID]; !ok {
			added = append(added, c.ID)
		}
	}
	for id, c := range rec.Cues {
		if c.Parent == "" && !strings.Contains(id, "/") && p.ByID[id] == nil { // child tasks ("CUE/1") and fan-out items ("CUE[0]") are the run's own
			removed = append(removed, id)
		}
	}
	if len(added)+len(removed) == 0 {
		return nil
	}
	sort.Strings(removed)
	var what []string
	if len(added) > 0 {
		what = append(what, "added "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		what = append(what, "removed "+strings.Join(removed, ", "))
	}
	return fmt.Errorf("run %s: its cuelist's cues changed since the run started (%s): orch retry continues a run with the cues it has; orch run %s starts a new one",
		rec.ID, strings.Join(what, "; "), rec.Started.SpecPath)
}

// record is the run as the runner is to take it up: the cues that run
// again are pending, with their attempt numbers continuing and their
// agents' failed attempts forgotten (each has its max_attempts again).
func (rp *retryPlan) record(rec *record.RunRecord) *record.RunRecord {
	out := *rec
	out.Cues = make(map[string]record.CueRecord, len(rec.Cues))
	for id, c := range rec.Cues {
		out.Cues[id] = c
	}
	for _, v := range rp.verdicts {
		if !v.rerun {
			continue
		}
		c := rec.Cues[v.id]
		out.Cues[v.id] = record.CueRecord{State: record.CuePending, Attempts: c.Attempts, AgentAttempts: map[string]int{}, Running: c.Running}
	}
	for _, v := range rp.verdicts {
		v.items.record(out.Cues, v.id)
	}
	return &out
}

// RetryPlan is what orch retry does with each of a run's cues, as orch
// retry --dry-run --output json prints it.
type RetryPlan struct {
	Run     string     `json:"run"`
	State   string     `json:"state"`
	Rerun   []string   `json:"rerun"`
	Kept    int        `json:"kept"`
	Changed []string   `json:"changed_kept"`
	Unknown bool       `json:"definitions_unknown,omitempty"`
	Cues    []RetryCue `json:"cues"`
}

// RetryCue is what happens to one cue, and why.
type RetryCue struct {
	ID     string `json:"id"`
	Was    string `json:"was"`
	Action string `json:"action"` // run, keep or continue
	Why    string `json:"why"`
	// ItemsAgain: a fan-out's items that run again (all of them when it
	// expands again).
	ItemsAgain []string `json:"items_again,omitempty"`
}

func (v cueVerdict) action() string {
	switch {
	case v.rerun:
		return "run"
	case v.keep:
		return "keep"
	}
	return "continue"
}

// public is the plan for run rec as callers see it.
func (rp *retryPlan) public(rec *record.RunRecord) *RetryPlan {
	out := &RetryPlan{Run: rec.ID, State: string(rec.State), Rerun: rp.rerun, Kept: rp.kept, Changed: rp.stale, Unknown: rp.unknown}
	if out.Rerun == nil {
		out.Rerun = []string{}
	}
	if out.Changed == nil {
		out.Changed = []string{}
	}
	for _, v := range rp.verdicts {
		cj := RetryCue{ID: v.id, Was: string(v.was), Action: v.action(), Why: v.why}
		if v.items != nil {
			cj.ItemsAgain = v.items.again
		}
		out.Cues = append(out.Cues, cj)
	}
	return out
}
