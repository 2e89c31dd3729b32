//go:build unix

package runner

import (
	"fmt"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// An agent that watches the board hears of every write to its keys (and
// under its prefix) by another agent, each version, with its author; not
// of its own writes nor of other keys. A fenced write that lost is
// answered with the current version and its author and recorded, and the
// watch is gone from the hub when the attempts are over.
func TestWatchAndFencedWrites(t *testing.T) {
	o := collab(t, `  cues:
    - id: WATCH
      agents: [watcher]
      inputs: {script: [{watch: {keys: [plan], prefix: "review/"}}, {bb_write: {key: plan, value: mine}}, {bb_write: {key: watching, value: true}}, {await_changes: 4}]}
    - id: WRITE
      agents: [writer]
      inputs:
        script:
          - {await_key: watching}
          - {bb_write: {key: other, value: 1}}
          - {bb_write_if: {key: plan, value: first, expected: 1}}
          - {bb_write: {key: review/a, value: ok}}
          - {bb_write_if: {key: plan, value: stale, expected: 1}}
          - {bb_write_if: {key: plan, value: second, expected: 2}}
          - {bb_write_if: {key: fresh, value: 1, expected: 0}}
          - {bb_write: {key: review/b, value: ok}}
`, scriptAgent(t, "watcher", ""), scriptAgent(t, "writer", ""))
	rec := newMemRecorder()
	watchesLeft := -1
	testHookRunOver = func(r *run) { watchesLeft = r.watches.count() }
	defer func() { testHookRunOver = nil }()
	if res := runCollab(t, o, rec, nil); res.State != record.RunCompleted {
		t.Fatalf("run %s: %s", res.State, res.Reason)
	}
	got := fmt.Sprint(outputsOf(t, rec, "WATCH")["changes"])
	want := "[map[author:writer key:plan value:first version:2] map[author:writer key:review/a value:ok version:1] " +
		"map[author:writer key:plan value:second version:3] map[author:writer key:review/b value:ok version:1]]"
	if got != want {
		t.Errorf("changes:\n got %s\nwant %s", got, want)
	}
	out := outputsOf(t, rec, "WRITE")
	if fmt.Sprint(out["conflict_plan"]) != "map[author:writer current_version:2]" || fmt.Sprint(out["wrote_fresh"]) != "1" {
		t.Errorf("fenced writes: %v", out)
	}
	conflicts := rec.of(record.EvBlackboardConflict)
	if len(conflicts) != 1 {
		t.Fatalf("%d conflict events, want 1", len(conflicts))
	}
	if d := conflicts[0].Data.(record.BlackboardConflictData); d.Key != "plan" || d.ExpectedVersion != 1 || d.CurrentVersion != 2 || d.MessageID == "" {
		t.Errorf("conflict event %+v", d)
	}
	if watchesLeft != 0 {
		t.Errorf("%d watches outlived their attempts", watchesLeft)
	}
}
