package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestTemporalRunProgress: while orch-temporal mirrors a run into the
// store (made after orch starts reading), orch prints its events as the
// local engine's plain lines, a failed attempt's last output under it, and
// the last events too once the run is over.
func TestTemporalRunProgress(t *testing.T) {
	dbFile := filepath.Join(t.TempDir(), "orch.db")
	var out syncBuffer
	_, stop := followStoreProgress(&out, dbFile, "0123456789ab", 5, false)
	db, err := store.Open(dbFile, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	at := time.Now()
	add := func(e record.Event) {
		t.Helper()
		e.RunID, e.At = "0123456789ab", at
		if err := db.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	add(record.Event{Type: record.EvRunStarted, Data: record.RunStartedData{Cuelist: "fails", Cues: []record.CueInfo{{ID: "BAD", Agents: []string{"bad"}}},
		Temporal: &record.TemporalRun{Address: "h:1", Namespace: "default", TaskQueue: "orch", WorkflowID: "orch-0123456789ab"}}})
	add(record.Event{Type: record.EvAttemptStarted, Cue: "BAD", Agent: "bad", Attempt: 1, Data: record.AttemptStartedData{}})
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "BAD attempt 1: bad") {
		if time.Now().After(deadline) {
			t.Fatalf("no progress line while the run goes on:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	db.Log(record.LogLine{RunID: "0123456789ab", Cue: "BAD", Agent: "bad", Attempt: 1, Stream: "stderr", At: at, Text: "disk full"})
	add(record.Event{Type: record.EvAttemptEnded, Cue: "BAD", Agent: "bad", Attempt: 1, State: string(record.AttemptFailed), Reason: "exit 1", Data: record.AttemptEndedData{Class: "exit"}})
	add(record.Event{Type: record.EvRunState, State: string(record.RunFailed), Reason: "failed: BAD"})
	stop()
	got := out.String()
	for _, want := range []string{"run 0123456789ab started: cuelist fails, 1 cue", "BAD attempt 1: bad failed (exit): exit 1", "disk full", "run failed: failed: BAD"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
}
