package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestStatusShowsAttemptNotes: a note about an attempt (on Temporal: its
// worker lost, its GO dispatched again) is shown under "attempt notes" in
// orch status and in the attempt's notes in --output json; a note about no
// attempt is not.
func TestStatusShowsAttemptNotes(t *testing.T) {
	dbFile := filepath.Join(t.TempDir(), "orch.db")
	db, err := store.Open(dbFile, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const id = "0123456789ab"
	ctx := context.Background()
	lost := "its worker was lost during GO (heartbeat timeout): GO dispatched again, worker 2 of 3"
	err = db.Append(ctx,
		record.Event{RunID: id, Type: record.EvRunStarted, Data: record.RunStartedData{Cuelist: "c", Cues: []record.CueInfo{{ID: "BUILD", Agents: []string{"builder"}}}}},
		record.Event{RunID: id, Type: record.EvAttemptStarted, Cue: "BUILD", Agent: "builder", Attempt: 1, Data: record.AttemptStartedData{}},
		record.Event{RunID: id, Type: record.EvNote, Cue: "BUILD", Agent: "builder", Attempt: 1, Reason: "attempt 1: " + lost},
		record.Event{RunID: id, Type: record.EvNote, Cue: "BUILD", Reason: "orch stop BUILD: not about an attempt"},
		record.Event{RunID: id, Type: record.EvAttemptEnded, Cue: "BUILD", Agent: "builder", Attempt: 1, State: string(record.AttemptCompleted), Data: record.AttemptEndedData{}},
		record.Event{RunID: id, Type: record.EvRunState, State: string(record.RunCompleted)})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"status", "--db", dbFile, id}, &streams{in: strings.NewReader(""), out: &out, err: &errOut}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "\nattempt notes\n  BUILD attempt 1 (builder): "+lost+"\n") || strings.Contains(out.String(), "not about an attempt") {
		t.Fatalf("orch status:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"status", "--db", dbFile, id, "--output", "json"}, &streams{in: strings.NewReader(""), out: &out, err: &errOut}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var st struct {
		Cues []struct {
			Attempts []struct{ Notes []string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || len(st.Cues) != 1 || len(st.Cues[0].Attempts) != 1 ||
		len(st.Cues[0].Attempts[0].Notes) != 1 || st.Cues[0].Attempts[0].Notes[0] != lost {
		t.Fatalf("orch status --output json (%v):\n%s", err, out.String())
	}
}
