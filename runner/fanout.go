package runner

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/orch-cli/orch/runner/sched"
)

// A for_each cue's expansion is the core's decision (runner/sched
// fanout.go); the runner records it before any item's GO and makes room for
// the items' attempts. Each item is then a cue of the run like any other:
// its tasks are built by PlanTask (with the item), its states, attempts
// and output are recorded under the item's id.

// expand records a fan-out's expansion (unless a resumed run takes back
// the recorded one) and makes room for its items' attempts, at the
// positions the core gave them.
func (r *run) expand(d sched.Decision) {
	c := r.core.Cue(d.Cue)
	for range d.Items {
		r.atts = append(r.atts, make([]*attempt, len(c.Agents)))
	}
	if !d.Restored {
		r.emit(FanOutEvent(c.ID, c.ForEach.Name(), d))
	}
	if d.Reason != "" {
		r.emit(Event{Type: EvNote, Cue: c.ID, Reason: d.Reason})
	}
}

// FanOutEvent is the record of a fan-out's expansion (engine/temporal
// records it too).
func FanOutEvent(cue, as string, d sched.Decision) Event {
	data := FanOutData{As: as, Items: make([]FanOutItem, len(d.Items))}
	for i, id := range d.Items {
		data.Items[i] = FanOutItem{ID: id, Item: d.Values[i]}
	}
	return Event{Type: EvFanOut, Cue: cue, Reason: fmt.Sprintf("%d item(s)", len(d.Items)), Data: data}
}

// CueStateEvent is the record of the core's CueState decision d of cue id
// (every engine records it so): its outputs when completed, the class of
// a failure no attempt had.
func CueStateEvent(id string, d sched.Decision) Event {
	ev := Event{Type: EvCueState, Cue: id, State: string(d.State), Reason: d.Reason}
	if d.State == sched.Completed || d.Class != "" {
		ev.Data = CueStateData{Outputs: d.Outputs, Class: d.Class}
	}
	return ev
}

// recordedItems are the recorded items of for_each cue id, in item order
// (nil: it had not expanded).
func (r *run) recordedItems(id string, run *RunRecord) []sched.RecordedItem {
	type item struct {
		id  string
		rec CueRecord
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
