package control

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestWait: Wait returns once the run needs a person (a question to them,
// a cue waiting for GO) or no longer moves by itself, as asked; what is
// not there yet is waited for until the context ends.
func TestWait(t *testing.T) {
	path := completedRun(t) // r1: completed
	w, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	host, _ := os.Hostname()
	if err := w.Append(ctx,
		// live: its owner is this process; a question to the person is open.
		record.Event{RunID: "live", Type: record.EvRunStarted, Data: record.RunStartedData{Cuelist: "l",
			Cues: []record.CueInfo{{ID: "A", Agents: []string{"a"}}}, OwnerPID: os.Getpid(), OwnerHost: host, OwnerToken: "t"}},
		record.Event{RunID: "live", Type: record.EvQuestion, Cue: "A", Agent: "a", Attempt: 1,
			Data: record.QuestionData{ID: "q1", Question: "which?", Complexity: "quick", To: "person"}},
		// paused: a manual cue waits for GO.
		record.Event{RunID: "paused", Type: record.EvRunStarted, Data: record.RunStartedData{Cuelist: "p",
			Cues: []record.CueInfo{{ID: "M", Agents: []string{"m"}, Manual: true}}}},
		record.Event{RunID: "paused", Type: record.EvRunState, State: string(record.RunPaused), Reason: "waiting for GO: M"},
	); err != nil {
		t.Fatal(err)
	}
	ctl := New(Config{DB: path})
	defer ctl.Close()
	for _, c := range []struct {
		run      string
		wait     []string
		why, has string
	}{
		{"r1", nil, WaitEnd, ""},
		{"live", nil, WaitQuestion, "q1"},
		{"live", []string{WaitQuestion}, WaitQuestion, "q1"},
		{"paused", nil, WaitGo, "M"},
		{"paused", []string{WaitEnd}, WaitEnd, "M"},
	} {
		res, err := ctl.Wait(ctx, WaitRequest{Run: c.run, For: c.wait})
		if err != nil || res.Why != c.why || c.has != "" && (len(res.Inbox) != 1 || res.Inbox[0].ID != c.has) {
			t.Errorf("wait %s for %v: %+v (%v), want %s with %q", c.run, c.wait, res, err, c.why, c.has)
		}
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if res, err := ctl.Wait(short, WaitRequest{Run: "live", For: []string{WaitGo, WaitEnd}, Poll: 20 * time.Millisecond}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a GO or the end of a live run with a question open: %+v (%v), want the context's end", res, err)
	}
	if _, err := ctl.Wait(ctx, WaitRequest{Run: "r1", For: []string{"lunch"}}); KindOf(err) != Invalid {
		t.Errorf("wait for lunch: %v, want Invalid", err)
	}
}
