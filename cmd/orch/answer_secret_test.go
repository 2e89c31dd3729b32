//go:build unix

package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestAnswerStoredMasked: the person's answer holding a secret is stored
// masked in the commands table, as in the events (issue 27, item 4b); once
// the owner has taken it, the command keeps no copy at all.
func TestAnswerStoredMasked(t *testing.T) {
	const secret = "tok-answer-0123456789"
	t.Setenv("TEST_ANSWER_TOKEN", secret)
	path := filepath.Join(t.TempDir(), "orch.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ev := range []record.Event{
		{RunID: "r1", Type: record.EvRunStarted, Data: record.RunStartedData{Cuelist: "c", Cues: []record.CueInfo{{ID: "A", Agents: []string{"a"}}}}},
		{RunID: "r1", Type: record.EvQuestion, Cue: "A", Agent: "a", Attempt: 1,
			Data: record.QuestionData{ID: "q1", Question: "which token?", Complexity: "quick", To: "person"}},
	} {
		if err := db.Append(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	owned := make(chan error, 1)
	go func() { owned <- own(ctx, db, "r1", false, time.Minute) }() // an owner that does not deliver
	waitRunning(t, db, "r1")

	ctl := control.New(control.Config{DB: path})
	defer ctl.Close()
	if _, err := ctl.Answer(ctx, control.AnswerRequest{Run: "r1", Question: "q1", Text: "use " + secret + " please", Wait: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var id int64
	var arg string
	if err := raw.QueryRow(`SELECT id, arg FROM commands WHERE kind = 'answer'`).Scan(&id, &arg); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(arg, secret) || arg != "use [redacted:TEST_ANSWER_TOKEN] please" {
		t.Errorf("the commands table holds the answer as %q", arg)
	}
	if err := db.CommandDone(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow(`SELECT arg FROM commands WHERE id = ?`, id).Scan(&arg); err != nil || arg != "" {
		t.Errorf("a delivered answer's command keeps %q (%v)", arg, err)
	}
	cancel()
	<-owned
}

func waitRunning(t *testing.T, db *store.DB, runID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s, err := db.RunState(context.Background(), runID); err == nil && s == record.RunRunning {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is not running after 10s", runID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
