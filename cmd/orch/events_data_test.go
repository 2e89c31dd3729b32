//go:build unix

package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestEventsUndecodableData: an event whose stored data does not fit its
// type (an older or newer orch wrote it, or the file was edited) is shown
// as stored with the reason, in text and in JSON, never silently dropped.
func TestEventsUndecodableData(t *testing.T) {
	dbFile := filepath.Join(t.TempDir(), "orch.db")
	db, err := store.Open(dbFile, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	started := record.RunStartedData{Cuelist: "c", Cues: []record.CueInfo{{ID: "A", Agents: []string{"a"}}}}
	if err := db.Append(context.Background(), record.Event{RunID: "r1", Type: record.EvRunStarted, Data: started}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", dbFile)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Exec(`INSERT INTO events (run_id, seq, at, type, cue_id, state, data) VALUES
		('r1', 2, 1, 'cue/state', 'A', 'completed', '{"outputs":[1,2]}'),
		('r1', 3, 2, 'future/thing', '', '', '{"x":1}')`)
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runOrch(t, "", "events", "r1", "--db", dbFile)
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	for _, want := range []string{
		`cue/state A completed {"outputs":[1,2]} (its data cannot be read: decoding the data of a cue/state event: json: cannot unmarshal array`,
		`future/thing {"x":1} (its data cannot be read: a future/thing event has no data of a type this orch knows)`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, stdout)
		}
	}

	code, stdout, stderr = runOrch(t, "", "events", "r1", "--db", dbFile, "--output", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	for _, want := range []string{`"data":{"outputs":[1,2]}}`, `"data":{"x":1}}`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("JSON output lacks %s:\n%s", want, stdout)
		}
	}
	for _, want := range []string{"orch: event 2 of run r1: its data cannot be read", "orch: event 3 of run r1: its data cannot be read"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
