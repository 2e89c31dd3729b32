package store

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// A conditional write is stored only when its key is at the expected
// version (0: the key must not exist); otherwise nothing is written, the
// answer names the current version and author, and a blackboard/conflict
// event records the refusal. Another process's write counts: the check is
// made under the write lock.
func TestBlackboardConditionalWrite(t *testing.T) {
	d, path := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	other, err := Open(path, Options{}) // a shell's `orch bb set`
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ver := func(n int64) *int64 { return &n }
	put := func(db *DB, key, author string, ifVersion *int64) record.BlackboardWritten {
		t.Helper()
		w, err := db.BlackboardWriteMany(ctx, "r1", []record.BlackboardPut{{Key: key, Value: json.RawMessage(`"` + author + `"`),
			Author: author, IfVersion: ifVersion, MessageID: "m-" + author}})
		if err != nil || len(w) != 1 {
			t.Fatalf("write %s by %s: %v, %v", key, author, w, err)
		}
		return w[0]
	}
	if w := put(d, "plan", "researcher", ver(0)); w.Conflict || w.Version != 1 {
		t.Fatalf("a new key with expected version 0: %+v", w)
	}
	if w := put(other, "plan", "shell", ver(1)); w.Conflict || w.Version != 2 {
		t.Fatalf("the other process at version 1: %+v", w)
	}
	// The writer's stale view (version 1) loses to the other process's write.
	w := put(d, "plan", "writer", ver(1))
	if !w.Conflict || w.Version != 2 || w.Author != "shell" || w.Event.Type != record.EvBlackboardConflict {
		t.Fatalf("a stale write: %+v", w)
	}
	if w := put(d, "plan", "writer", ver(0)); !w.Conflict || w.Version != 2 {
		t.Fatalf("expected version 0 of an existing key: %+v", w)
	}
	if w := put(d, "fresh", "writer", ver(3)); !w.Conflict || w.Version != 0 || w.Author != "" {
		t.Fatalf("a missing key expected at version 3: %+v", w)
	}
	e, ok, err := d.BlackboardRead(ctx, "r1", "plan")
	if err != nil || !ok || e.Version != 2 || string(e.Value) != `"shell"` {
		t.Fatalf("after the conflicts, plan = %+v %v %v", e, ok, err)
	}
	if _, ok, _ := d.BlackboardRead(ctx, "r1", "fresh"); ok {
		t.Fatal("a refused write created its key")
	}
	// An unconditional write goes on counting from the stored version.
	if w := put(d, "plan", "writer", nil); w.Conflict || w.Version != 3 {
		t.Fatalf("an unconditional write: %+v", w)
	}
	events, err := d.Events(ctx, "r1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conflicts []record.BlackboardConflictData
	for _, ev := range events {
		if c, ok := ev.Data.(record.BlackboardConflictData); ok {
			conflicts = append(conflicts, c)
		}
	}
	want := record.BlackboardConflictData{Key: "plan", ExpectedVersion: 1, CurrentVersion: 2, Author: "shell", MessageID: "m-writer"}
	if len(conflicts) != 3 || conflicts[0] != want {
		t.Fatalf("conflict events %+v, want 3, the first %+v", conflicts, want)
	}
}
