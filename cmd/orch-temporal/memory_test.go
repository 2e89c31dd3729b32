package main

import (
	"context"
	"testing"
	"time"

	"github.com/orch-cli/orch/engine/temporal"
	"github.com/orch-cli/orch/runner/record"
)

// TestFollowerKeepsMemory: the follower applies the memory writes and
// deletes the run's notes carry to the store, so the next run (and orch
// memory) sees them; the notes are in the run's log too.
func TestFollowerKeepsMemory(t *testing.T) {
	db, _ := temporalStore(t, "r1", "tok")
	ctx := context.Background()
	if err := db.MemoryWrite(ctx, record.MemoryItem{Key: "forget", Text: "an old note", Agent: "x", RunID: "r0"}); err != nil {
		t.Fatal(err)
	}
	wrote := record.Event{Seq: 2, Type: record.EvNote, Cue: "A", Agent: "a", Attempt: 1, Reason: "memory.write lesson by a: version 1"}
	forgot := record.Event{Seq: 3, Type: record.EvNote, Cue: "A", Agent: "a", Attempt: 1, Reason: "memory.delete forget by a: forgotten with its history"}
	done := record.Event{Seq: 4, Type: record.EvRunState, State: string(record.RunCompleted)}
	page := temporal.EventsPage{Done: true, Events: []record.Event{wrote, forgot, done}, Memory: map[int64]temporal.MemoryChange{
		2: {Item: record.MemoryItem{Key: "lesson", Text: "deploy on tuesdays", Tags: []string{"ops"}, Agent: "a", RunID: "r1", At: time.Now(), Version: 1}},
		3: {Item: record.MemoryItem{Key: "forget", RunID: "r1"}, Delete: true},
	}}
	wf := fakeWorkflow{page: func(after int64) temporal.EventsPage {
		if after >= 4 {
			return temporal.EventsPage{Done: true}
		}
		return page
	}}
	state, _, err := (&follower{c: wf, db: db, id: "r1", wfID: "orch-r1", token: "tok"}).follow(ctx)
	if err != nil || state != record.RunCompleted {
		t.Fatalf("follow: %v %s", err, state)
	}
	items, total, err := db.MemoryList(ctx, 0)
	if err != nil || total != 1 || items[0].Key != "lesson" || items[0].Agent != "a" || items[0].RunID != "r1" || items[0].Text != "deploy on tuesdays" {
		t.Fatalf("memory after the run: %+v (%d, %v)", items, total, err)
	}
	found, err := db.MemorySearch(ctx, "tuesday", 0)
	if err != nil || len(found) != 1 {
		t.Errorf("searching the kept item: %+v %v", found, err)
	}
}
