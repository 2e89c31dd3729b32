package runner

import (
	"encoding/json"
	"sort"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// A for_each cue's expansion is the core's decision (runner/sched
// fanout.go); the runner records it before any item's GO and makes room for
// the items' attempts. Each item is then a cue of the run like any other:
// its tasks are built by PlanTask (with the item), its states, attempts
// and output are recorded under the item's id.

// expand makes room for a fan-out's items' attempts, at the positions the
// core gave them (EventFor records the expansion, unless a resumed run
// takes back the recorded one).
func (r *run) expand(d sched.Decision) {
	c := r.core.Cue(d.Cue)
	for range d.Items {
		r.atts = append(r.atts, make([]*attemptRun, len(c.Agents)))
	}
}

// recordedItems are the recorded items of for_each cue id, in item order
// (nil: it had not expanded).
func (r *run) recordedItems(id string, run *record.RunRecord) []sched.RecordedItem {
	type item struct {
		id  string
		rec record.CueRecord
	}
	var items []item
	for iid, c := range run.Cues {
		if c.Parent == id && c.Kind == "item" {
			items = append(items, item{iid, c})
		}
	}
	if items == nil {
		return nil
	}
	sort.Slice(items, func(i, j int) bool { return items[i].rec.Position < items[j].rec.Position })
	out := make([]sched.RecordedItem, len(items))
	for i, it := range items {
		var v any
		_ = json.Unmarshal(it.rec.Item, &v) // the store wrote it from a JSON value
		out[i] = sched.RecordedItem{ID: it.id, Value: r.redact.Restore(map[string]any{"item": v})["item"], Rec: r.recorded(it.rec)}
	}
	return out
}
