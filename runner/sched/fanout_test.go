package sched_test

import (
	"reflect"
	"testing"

	"github.com/orch-cli/orch/runner/sched"
)

// Plain agents that serve many cues at once (an agent's concurrency bounds
// its items too).
const fanAgents = `agent: {id: a, command: [sh, -c, "true"], concurrency: 10, provides: [tasks]}
---
agent: {id: b, command: [sh, -c, "true"], concurrency: 10, provides: [summary, ok]}
`

// A static list expands once the cue's dependencies completed: each item
// is a cue with its own attempt, and the cue completes with its outputs as
// lists in item order (null where an item did not provide one).
func TestFanOutStaticList(t *testing.T) {
	h := newHarness(t, "", `    - {id: A, agents: [a]}
    - {id: F, agents: [b], dependencies: [A], for_each: [x, y, z]}
    - {id: D, agents: [a], dependencies: [F]}
`, fanAgents, 4, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "A warning", "start A/0#1 a", "A standby", "A go", "go A/0")
	h.want("A completed", h.completed("A"), "ended A/0#1 completed ", "A completed",
		"expand F into [F[0] F[1] F[2]]", "F go: fan-out: 3 item(s)",
		"F[0] warning", "start F[0]/0#1 b", "F[0] standby", "F[0] go", "go F[0]/0",
		"F[1] warning", "start F[1]/0#1 b", "F[1] standby", "F[1] go", "go F[1]/0",
		"F[2] warning", "start F[2]/0#1 b", "F[2] standby", "F[2] go", "go F[2]/0",
		"D warning", "start D/0#1 a") // once every item is in GO (TestFanOutDependentsWarnAfterItsItems)
	if v, name, ok := h.core.Item(h.pos("F[1]")); !ok || v != "y" || name != "item" {
		t.Errorf("Item(F[1]) = %v, %q, %v", v, name, ok)
	}
	h.ended("F[1]", sched.End{Outputs: map[string]any{"summary": "s1"}})
	h.ended("F[0]", sched.End{Outputs: map[string]any{"summary": "s0", "ok": true}})
	h.want("the last item", h.ended("F[2]", sched.End{Outputs: map[string]any{"summary": "s2"}}),
		"ended F[2]/0#1 completed ", "F[2] completed", "F completed", "D standby", "D go", "go D/0")
	want := map[string]any{"summary": []any{"s0", "s1", "s2"}, "ok": []any{true, nil, nil}}
	if got := h.core.Outputs(h.pos("F")); !reflect.DeepEqual(got, want) {
		t.Errorf("F's outputs = %v, want %v", got, want)
	}
}

// from reads an upstream output: an array of objects with ids names the
// items by them; a string holding a JSON array (a key=value output) is
// read as the array.
func TestFanOutFromUpstream(t *testing.T) {
	h := newHarness(t, "", `    - {id: P, agents: [a]}
    - {id: F, agents: [b], dependencies: [P], for_each: {from: P.tasks, as: task}}
`, fanAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("P completed", h.ended("P", sched.End{Outputs: map[string]any{"tasks": []any{
		map[string]any{"id": "db", "title": "Database"}, map[string]any{"id": 7.0}}}})[:3],
		"ended P/0#1 completed ", "P completed", "expand F into [F[db] F[7]]")
	v, name, _ := h.core.Item(h.pos("F[db]"))
	if name != "task" || v.(map[string]any)["title"] != "Database" {
		t.Errorf("Item(F[db]) = %v, %q", v, name)
	}

	h = newHarness(t, "", `    - {id: P, agents: [a]}
    - {id: F, agents: [b], dependencies: [P], for_each: {from: P.tasks}}
`, fanAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("a string holding an array", h.ended("P", sched.End{Outputs: map[string]any{"tasks": `["a", "b"]`}})[:3],
		"ended P/0#1 completed ", "P completed", "expand F into [F[0] F[1]]")
}

// A list that is not one, is too long, or names two items alike fails the
// cue, class contract, naming what it got; an empty list completes the
// cue with empty lists and a note.
func TestFanOutBadLists(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tasks any
		max   string
		want  []string
	}{
		{"object", map[string]any{"a": 1.0}, "", []string{"F failed (contract): for_each: P.tasks is an object, not an array"}},
		{"number", 3.0, "", []string{"F failed (contract): for_each: P.tasks is an integer, not an array"}},
		{"text", "not json", "", []string{"F failed (contract): for_each: P.tasks is a string, not an array"}},
		{"too many", []any{1.0, 2.0, 3.0}, ", max_items: 2", []string{"F failed (contract): for_each: P.tasks has 3 items, more than max_items (2)"}},
		{"duplicate ids", []any{map[string]any{"id": "x"}, map[string]any{"id": "x"}}, "", []string{"F failed (contract): for_each: items 0 and 1 are both named F[x] (an item's id must be unique, and differ from the other items' positions)"}},
		{"empty", []any{}, "", []string{"expand F into []: for_each: P.tasks is empty: F completes with empty outputs", "F completed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "", `    - {id: P, agents: [a]}
    - {id: F, agents: [b], dependencies: [P], for_each: {from: P.tasks`+tc.max+`}}
`, fanAgents, 4, false)
			h.core.Begin(h.now)
			h.advance()
			got := h.ended("P", sched.End{Outputs: map[string]any{"tasks": tc.tasks}})[2:]
			h.want("P completed", got, tc.want...)
			if tc.name == "empty" {
				want := map[string]any{"summary": []any{}, "ok": []any{}}
				if got := h.core.Outputs(h.pos("F")); !reflect.DeepEqual(got, want) {
					t.Errorf("F's outputs = %v, want %v", got, want)
				}
			}
			if !h.core.Finished() {
				t.Error("the run is not finished")
			}
		})
	}
}

// max_parallel bounds the items in GO at once, and as many more may be
// prepared ahead of their GO (as the run's max_parallel does); a freed
// slot goes to the next item in list order.
func TestFanOutMaxParallel(t *testing.T) {
	h := newHarness(t, "", `    - {id: F, agents: [b], for_each: {items: [1, 2, 3, 4, 5], max_parallel: 2}}
`, fanAgents, 10, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "expand F into [F[0] F[1] F[2] F[3] F[4]]", "F go: fan-out: 5 item(s)",
		"F[0] warning", "start F[0]/0#1 b", "F[0] standby", "F[0] go", "go F[0]/0",
		"F[1] warning", "start F[1]/0#1 b", "F[1] standby", "F[1] go", "go F[1]/0",
		"F[2] warning", "start F[2]/0#1 b", "F[2] standby",
		"F[3] warning", "start F[3]/0#1 b", "F[3] standby")
	h.want("F[1] completed", h.completed("F[1]"), "ended F[1]/0#1 completed ", "F[1] completed",
		"F[2] go", "go F[2]/0", "F[4] warning", "start F[4]/0#1 b", "F[4] standby")
}

// on_failure: fast (the default) stops the other items at the first that
// fails, and the cue fails naming it; continue lets every item run, then
// fails naming each that failed.
func TestFanOutOnFailure(t *testing.T) {
	h := newHarness(t, "", `    - {id: F, agents: [b], for_each: [1, 2, 3]}
    - {id: D, agents: [a], dependencies: [F]}
`, fanAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("fast", h.ended("F[1]", sched.End{Failed: true, Class: "exit:1", Reason: "exit 1"}),
		"ended F[1]/0#1 failed exit:1", "F[1] failed: b: exit 1",
		"stop F[0]/0: cue F failed: item F[1] failed: b: exit 1 (on_failure: fast)", "F[0] stopped: cue F failed: item F[1] failed: b: exit 1 (on_failure: fast)",
		"stop F[2]/0: cue F failed: item F[1] failed: b: exit 1 (on_failure: fast)", "F[2] stopped: cue F failed: item F[1] failed: b: exit 1 (on_failure: fast)",
		"F failed: item F[1] failed: b: exit 1 (on_failure: fast: the other items were stopped)",
		"stop D/0: cue D is blocked", "D blocked: dependency F failed")

	h = newHarness(t, "", `    - {id: F, agents: [b], for_each: {items: [1, 2, 3], on_failure: continue}}
`, fanAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	h.want("continue", h.ended("F[2]", sched.End{Failed: true, Class: "exit:2", Reason: "exit 2"}),
		"ended F[2]/0#1 failed exit:2", "F[2] failed: b: exit 2")
	h.ended("F[0]", sched.End{Failed: true, Class: "exit:1", Reason: "exit 1"})
	h.want("the last", h.completed("F[1]"), "ended F[1]/0#1 completed ", "F[1] completed",
		"F failed: 2 of 3 items did not complete: F[0] (failed: b: exit 1); F[2] (failed: b: exit 2)")
}

// A resumed run takes the recorded list back (no new expansion is
// recorded): completed items are kept, the others run again; the cue
// completes with every item's outputs.
func TestFanOutRestore(t *testing.T) {
	h := newHarness(t, "", `    - {id: F, agents: [b], for_each: {from: P.tasks}, dependencies: [P]}
    - {id: P, agents: [a]}
`, fanAgents, 4, false)
	h.core.Restore("P", sched.Recorded{State: sched.Completed, Outputs: map[string]any{"tasks": []any{"other", "list"}}, Attempts: 1})
	h.core.Restore("F", sched.Recorded{State: sched.Go, Reason: "fan-out: 2 item(s)", Items: []sched.RecordedItem{
		{ID: "F[0]", Value: "x", Rec: sched.Recorded{State: sched.Completed, Attempts: 1, Outputs: map[string]any{"summary": "done"}}},
		{ID: "F[1]", Value: "y", Rec: sched.Recorded{State: sched.Go, Attempts: 1, Running: []sched.Running{{Agent: "b", Number: 1}}}},
	}})
	h.want("restore", h.take(), "expand F into [F[0] F[1]] (restored)", "interrupted F[1]#1 b", "F[1] pending: its run's owner stopped; it starts over")
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "F[1] warning", "start F[1]/0#2 b", "F[1] standby", "F[1] go", "go F[1]/0")
	if v, _, _ := h.core.Item(h.pos("F[1]")); v != "y" {
		t.Errorf("F[1] is %v, want the recorded y", v)
	}
	h.want("F[1] completed", h.ended("F[1]", sched.End{Outputs: map[string]any{"summary": "again"}}),
		"ended F[1]/0#2 completed ", "F[1] completed", "F completed")
	if got := h.core.Outputs(h.pos("F"))["summary"]; !reflect.DeepEqual(got, []any{"done", "again"}) {
		t.Errorf("F's summary = %v", got)
	}
}

// orch stop RUN CUE of a fan-out stops its items; of one item, under
// fast, ends the fan-out.
func TestFanOutStop(t *testing.T) {
	h := newHarness(t, "", `    - {id: F, agents: [b], for_each: [1, 2]}
`, fanAgents, 4, false)
	h.core.Begin(h.now)
	h.advance()
	if ok, why := h.core.StopCue("F", "by me"); !ok {
		t.Fatal(why)
	}
	h.want("stop F", h.take(),
		"stop F[0]/0: cue F was stopped: by me", "F[0] stopped: cue F was stopped: by me",
		"stop F[1]/0: cue F was stopped: by me", "F[1] stopped: cue F was stopped: by me",
		"F stopped: by me")
	if !h.core.Finished() {
		t.Error("not finished")
	}
}

// An item stopped while it waited for its fan-out's slot does not take the
// slot's turn: the next waiting item gets it.
func TestFanOutStoppedWaiterLosesNoSlot(t *testing.T) {
	h := newHarness(t, "", `    - {id: F, agents: [b], for_each: {items: [1, 2, 3, 4, 5], max_parallel: 1, on_failure: continue}}
`, fanAgents, 10, false)
	h.core.Begin(h.now)
	h.advance() // F[0] in GO, F[1] prepared; F[2].. wait for a prepared slot
	if ok, why := h.core.StopCue("F[2]", "by me"); !ok {
		t.Fatal(why)
	}
	h.take()
	h.completed("F[0]") // F[1] goes; the prepared slot frees: F[3], not the stopped F[2]
	if s := h.state("F[3]"); s != sched.Standby {
		t.Errorf("F[3] is %s, want standby (prepared in F[2]'s turn)", s)
	}
}

// The cues after a fan-out get their WARNING once none of its items waits
// to be prepared (each is in GO or over), not as soon as it expands: a cue
// warned earlier would hold a preparation slot its items need, and with
// as many such cues as the run's max_parallel, the run waited forever.
func TestFanOutDependentsWarnAfterItsItems(t *testing.T) {
	h := newHarness(t, "", `    - {id: F, agents: [b], for_each: [1, 2]}
    - {id: R, agents: [a], dependencies: [F]}
`, fanAgents, 1, false)
	h.core.Begin(h.now)
	h.want("begin", h.advance(), "expand F into [F[0] F[1]]", "F go: fan-out: 2 item(s)",
		"F[0] warning", "start F[0]/0#1 b", "F[0] standby", "F[0] go", "go F[0]/0",
		"F[1] warning", "start F[1]/0#1 b", "F[1] standby")
	h.want("F[0] completed", h.completed("F[0]"), "ended F[0]/0#1 completed ", "F[0] completed",
		"F[1] go", "go F[1]/0", "R warning", "start R/0#1 a")
	h.want("F[1] completed", h.completed("F[1]"), "ended F[1]/0#1 completed ", "F[1] completed", "F completed",
		"R standby", "R go", "go R/0")
}
