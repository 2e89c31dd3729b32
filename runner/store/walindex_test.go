package store

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// TestBlackboardFreshAcrossOwnCommits: the board kept in memory stays the
// board across the handle's own commits, and another process's write is
// seen whether it comes before, between or after them.
func TestBlackboardFreshAcrossOwnCommits(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a", "b")
	other, err := Open(path, Options{}) // a shell agent's `orch bb set`
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	plan := func() string {
		t.Helper()
		board, err := d.Blackboard(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		return string(board["plan"].Value)
	}
	ownCommit := func(cue, state string) {
		t.Helper()
		appendOK(t, d, record.Event{RunID: "r1", Type: record.EvCueState, Cue: cue, State: state})
	}
	otherWrites := func(v string) {
		t.Helper()
		if _, err := other.BlackboardWrite(ctx, "r1", "plan", json.RawMessage(v), "shell"); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		do   func()
		want string
	}{
		{func() {}, ""},
		{func() { ownCommit("a", "warning") }, ""},
		{func() { otherWrites(`"1"`) }, `"1"`},                                                    // after an own commit
		{func() { ownCommit("a", "standby"); otherWrites(`"2"`) }, `"2"`},                         // right after one
		{func() { otherWrites(`"3"`); ownCommit("a", "go") }, `"3"`},                              // before one
		{func() { ownCommit("b", "warning"); ownCommit("b", "standby") }, `"3"`},                  // only its own
		{func() { ownCommit("b", "go"); otherWrites(`"4"`); ownCommit("a", "completed") }, `"4"`}, // between two
	}
	for i, s := range steps {
		s.do()
		for range 2 { // the read, then from memory
			if got := plan(); got != s.want {
				t.Fatalf("step %d: plan = %q, want %q", i, got, s.want)
			}
		}
	}
}

// TestBlackboardFromMemory: while nobody else writes, a board read again
// after the handle's own commits costs no query (a query allocates tens of
// times: the rows, their values, the statement's arguments).
func TestBlackboardFromMemory(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows the board is checked with a query")
	}
	d, _ := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	if _, err := d.Blackboard(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	appendOK(t, d, record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "warning"})
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := d.Blackboard(ctx, "r1"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 4 {
		t.Errorf("a board read from memory allocated %.0f times, want at most 4", allocs)
	}
}
