//go:build unix

package store

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

func fanOutEvent(runID, cue string, items ...string) record.Event {
	d := record.FanOutData{As: "task"}
	for _, it := range items {
		d.Items = append(d.Items, record.FanOutItem{ID: cue + "[" + it + "]", Item: map[string]any{"id": it}})
	}
	return record.Event{RunID: runID, At: at(1), Type: record.EvFanOut, Cue: cue, Data: d}
}

// A fan-out's items are cue rows after the run's (parent the fan-out, kind
// item, the item as context), recorded as any cue's; LoadRun gives them in
// item order with their items. Expanded again, the items it names go back
// to pending and the others are marked dropped (kept, but not the run's).
func TestFanOutProjection(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	appendOK(t, d, startedEvent(t, "r1", t0, "PLAN", "FAN"), fanOutEvent("r1", "FAN", "db", "ui", "2"),
		record.Event{RunID: "r1", At: at(2), Type: record.EvCueState, Cue: "FAN[ui]", State: "go"},
		record.Event{RunID: "r1", At: at(2), Type: record.EvAttemptStarted, Cue: "FAN[ui]", Agent: "FAN-agent", Attempt: 1},
		record.Event{RunID: "r1", At: at(3), Type: record.EvAttemptEnded, Cue: "FAN[ui]", Agent: "FAN-agent", Attempt: 1, State: "completed"},
		record.Event{RunID: "r1", At: at(3), Type: record.EvCueState, Cue: "FAN[ui]", State: "completed",
			Data: record.CueStateData{Outputs: map[string]any{"summary": "ui"}}})
	r, err := d.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range r.Cues {
		ids = append(ids, c.ID+" "+c.Parent+" "+c.Kind+" "+string(c.State)+" "+string(c.Item)+" "+strings.Join(c.Agents, ","))
	}
	want := []string{"PLAN   pending  PLAN-agent", "FAN   pending  FAN-agent", `FAN[db] FAN item pending {"id":"db"} FAN-agent`,
		`FAN[ui] FAN item completed {"id":"ui"} FAN-agent`, `FAN[2] FAN item pending {"id":"2"} FAN-agent`}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("cues\n%q\nwant\n%q", ids, want)
	}
	if r.RunSummary.Cues != 2 { // the plan's
		t.Errorf("summary %+v", r.RunSummary)
	}
	rec, err := d.LoadRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if it := rec.Cues["FAN[2]"]; it.Parent != "FAN" || it.Kind != "item" || string(it.Item) != `{"id":"2"}` ||
		!(rec.Cues["FAN[db]"].Position < rec.Cues["FAN[ui]"].Position && rec.Cues["FAN[ui]"].Position < it.Position) {
		t.Errorf("LoadRun's items: %+v", rec.Cues)
	}

	// Expanded again (an orch retry after the list changed).
	appendOK(t, d, fanOutEvent("r1", "FAN", "ui", "api"))
	r, _ = d.Run(ctx, "r1")
	states := map[string]string{}
	for _, c := range r.Cues {
		states[c.ID] = c.Kind + " " + string(c.State)
	}
	if want := map[string]string{"PLAN": " pending", "FAN": " pending", "FAN[db]": "dropped pending", "FAN[2]": "dropped pending",
		"FAN[ui]": "item pending", "FAN[api]": "item pending"}; !reflect.DeepEqual(states, want) {
		t.Errorf("after a second expansion %v, want %v", states, want)
	}
	if rec, _ = d.LoadRun(ctx, "r1"); rec.Cues["FAN[db]"].Kind != "" || rec.Cues["FAN[ui]"].Attempts != 1 {
		t.Errorf("LoadRun keeps a dropped item, or forgot an item's attempts: %+v", rec.Cues)
	}
}

func TestFanOutRejected(t *testing.T) {
	d, _ := openTest(t)
	appendOK(t, d, startedEvent(t, "r1", t0, "FAN"))
	bad := fanOutEvent("r1", "FAN", "a")
	bad.Data = record.FanOutData{Items: []record.FanOutItem{{ID: "OTHER[a]"}}}
	for _, c := range []struct {
		name string
		ev   record.Event
		want string
	}{
		{"no such cue", fanOutEvent("r1", "NOPE", "a"), `run r1 has no cue "NOPE" to expand`},
		{"item not the cue's", bad, `item id "OTHER[a]" is not its cue's id "FAN" followed by [NAME]`},
		{"no data", func() record.Event { e := fanOutEvent("r1", "FAN", "a"); e.Data = nil; return e }(), "no data"},
	} {
		err := d.Append(context.Background(), c.ev)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
