package control

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/record"
)

// orch retry of a fan-out (a cue with for_each) runs again only its items
// that did not complete, over the list it expanded to; asked for (--rerun,
// --from) or below a cue that runs again, whose output may be another list
// now, it expands afresh and every item runs.

// itemsPlan is what orch retry does with a fan-out's items.
type itemsPlan struct {
	fresh bool     // the cue expands again: every recorded item is forgotten
	ids   []string // the recorded items, in item order
	again []string // those that run again (the rest completed)
}

// itemsAgain plans the items of fan-out cue id, which runs again (or,
// endedOnly, goes on as orch resume would: then only its items that ended
// without completing are taken back, the others are left to the resume).
func itemsAgain(rec *record.RunRecord, id string, fresh, endedOnly bool) *itemsPlan {
	type item struct {
		id  string
		pos int
		ok  bool
	}
	var items []item
	for iid, c := range rec.Cues {
		if c.Parent == id && c.Kind == "item" {
			items = append(items, item{iid, c.Position, c.State == record.CueCompleted || endedOnly && !c.State.Final()})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].pos < items[j].pos })
	ip := &itemsPlan{fresh: fresh}
	for _, it := range items {
		ip.ids = append(ip.ids, it.id)
		if !it.ok || fresh {
			ip.again = append(ip.again, it.id)
		}
	}
	return ip
}

// rerunsUpstream reports whether a cue upstream of c runs again (rerun:
// those decided so far, in plan order, so every ancestor's).
func rerunsUpstream(p *planner.Plan, c *planner.Cue, rerun []string) bool {
	for _, id := range rerun {
		if up := p.ByID[id]; up != nil && up != c && p.Reaches(up, c) {
			return true
		}
	}
	return false
}

// why says what happens to the items, after the cue's own why.
func (ip *itemsPlan) why() string {
	switch {
	case ip == nil || len(ip.ids) == 0:
		return ""
	case ip.fresh:
		return fmt.Sprintf(" (it expands again: its %d recorded item(s) are not kept)", len(ip.ids))
	}
	kept := len(ip.ids) - len(ip.again)
	return fmt.Sprintf(" (items: %d completed kept; %d run again: %s)", kept, len(ip.again), ShortList(ip.again, 5))
}

// ShortList joins the first n of ids, saying how many more there are.
func ShortList(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(" and %d more", len(ids)-n)
}

// record takes the items into the record the run continues from: forgotten
// when the cue expands again; else those that run again are pending, with
// their attempt numbers continuing and their agents' failures forgotten.
func (ip *itemsPlan) record(cues map[string]record.CueRecord, cue string) {
	if ip == nil {
		return
	}
	if ip.fresh { // the items' attempt numbers go on: a new item of the same id continues them
		parent := cues[cue]
		parent.ItemAttempts = map[string]int{}
		for _, id := range ip.ids {
			parent.ItemAttempts[id] = cues[id].Attempts
			delete(cues, id)
		}
		cues[cue] = parent
		return
	}
	for _, id := range ip.again {
		c := cues[id]
		cues[id] = record.CueRecord{State: record.CuePending, Attempts: c.Attempts, AgentAttempts: map[string]int{}, Running: c.Running,
			Parent: c.Parent, Kind: c.Kind, Item: c.Item, Position: c.Position}
	}
}
