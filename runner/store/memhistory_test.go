package store

import (
	"context"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// A rewrite of a memory key keeps the earlier versions; search and list
// give the latest with its version and author; a delete forgets the item
// and its history.
func TestMemoryHistoryAndDelete(t *testing.T) {
	d, _ := openTest(t)
	ctx := context.Background()
	at := func(s int) time.Time { return time.Unix(1700000000+int64(s), 0).UTC() }
	for i, w := range []record.MemoryItem{
		{Key: "lesson", Text: "retry the db once", Agent: "ops", RunID: "r1", At: at(1)},
		{Key: "lesson", Text: "retry the db twice", Agent: "dba", RunID: "r2", At: at(2)},
		{Key: "other", Text: "unrelated db note", Agent: "ops", RunID: "r2", At: at(3)},
	} {
		if err := d.MemoryWrite(ctx, w); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	hist, err := d.MemoryHistory(ctx, "lesson")
	if err != nil || len(hist) != 2 || hist[0].Version != 2 || hist[0].Text != "retry the db twice" || hist[0].Agent != "dba" ||
		hist[1].Version != 1 || hist[1].Text != "retry the db once" || hist[1].RunID != "r1" {
		t.Fatalf("history %+v, %v", hist, err)
	}
	found, err := d.MemorySearch(ctx, "retry", 0)
	if err != nil || len(found) != 1 || found[0].Version != 2 || found[0].Agent != "dba" {
		t.Fatalf("search %+v, %v", found, err)
	}
	if ok, err := d.MemoryDelete(ctx, "", "lesson"); !ok || err != nil {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	if ok, err := d.MemoryDelete(ctx, "", "lesson"); ok || err != nil {
		t.Fatalf("delete again: %v, %v", ok, err)
	}
	if found, _ := d.MemorySearch(ctx, "retry", 0); len(found) != 0 {
		t.Fatalf("search after delete: %+v", found)
	}
	if hist, _ := d.MemoryHistory(ctx, "lesson"); len(hist) != 0 {
		t.Fatalf("history after delete: %+v", hist)
	}
	// A key written again after its delete starts over.
	if err := d.MemoryWrite(ctx, record.MemoryItem{Key: "lesson", Text: "new", At: at(4)}); err != nil {
		t.Fatal(err)
	}
	if items, _, _ := d.MemoryList(ctx, 0); len(items) != 2 || items[0].Key != "lesson" || items[0].Version != 1 {
		t.Fatalf("list %+v", items)
	}
}

// A database of schema 5 (before memory kept its history) opens: its items
// are their version 1, and the next write of one is version 2.
func TestMigrateMemoryV5(t *testing.T) {
	path := olderDB(t, 5,
		`INSERT INTO memory (key, text, tags, agent_id, run_id, at) VALUES ('lesson', 'retry the db', '["db"]', 'ops', 'r1', 1000000)`,
	)
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	found, err := d.MemorySearch(ctx, "retry", 0)
	if err != nil || len(found) != 1 || found[0].Version != 1 || found[0].Agent != "ops" {
		t.Fatalf("search after migration %+v, %v", found, err)
	}
	if err := d.MemoryWrite(ctx, record.MemoryItem{Key: "lesson", Text: "retry the db twice", Agent: "dba"}); err != nil {
		t.Fatal(err)
	}
	hist, err := d.MemoryHistory(ctx, "lesson")
	if err != nil || len(hist) != 2 || hist[0].Version != 2 || hist[1].Version != 1 || hist[1].Text != "retry the db" ||
		len(hist[1].Tags) != 1 || hist[1].Tags[0] != "db" {
		t.Fatalf("history after migration %+v, %v", hist, err)
	}
}
