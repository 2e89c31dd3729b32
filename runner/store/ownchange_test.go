package store

import (
	"context"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// TestCommitsWithoutOthersSkipDataVersion: while nobody else commits, a
// transaction of a handle that keeps a board knows from the WAL index's
// header that its runs' last seqs are still what it left (no PRAGMA
// data_version: a statement fewer per commit, on a chained cue's critical
// path); once another connection has appended to the run, the next
// transaction reads the seq again and numbers on after that connection's
// events.
func TestCommitsWithoutOthersSkipDataVersion(t *testing.T) {
	d, path := openTest(t)
	startRun(t, d, "r1", "a")
	note := func(reason string) record.Event {
		return record.Event{RunID: "r1", Type: record.EvNote, Reason: reason}
	}
	// A handle that keeps a board in memory (every run: a task carries the
	// board) reads the WAL index; from the next commit on it knows the header.
	if _, err := d.Blackboard(context.Background(), "r1"); err != nil {
		t.Fatal(err)
	}
	appendOK(t, d, note("warm"))
	before := d.stats.versionReads.Load()
	for range 5 {
		appendOK(t, d, note("mine"))
	}
	if n := d.stats.versionReads.Load() - before; n != 0 {
		t.Errorf("%d of 5 transactions read data_version with nobody else writing, want none", n)
	}

	other, err := Open(path, Options{}) // another process appends to the run
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	appendOK(t, other, note("theirs"), note("theirs"))
	ev := note("mine again")
	appendOK(t, d, ev)
	if n := d.stats.versionReads.Load() - before; n != 1 {
		t.Errorf("%d transactions read data_version after another connection wrote, want 1", n)
	}
	events, err := d.Events(context.Background(), "r1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d (%s %q) has seq %d", i, e.Type, e.Reason, e.Seq)
		}
	}
	if last := events[len(events)-1]; last.Reason != "mine again" || last.Seq != 10 {
		t.Errorf("last event %q seq %d, want %q seq 10", last.Reason, last.Seq, "mine again")
	}
}

// TestCommitsWithoutBoardsLeaveTheIndexFileAlone: a handle that keeps no
// board never opens the -shm itself: it has no need of it (and a descriptor
// of it must outlive every SQLite connection of the process to the file,
// walindex_unix.go).
func TestCommitsWithoutBoardsLeaveTheIndexFileAlone(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a")
	appendOK(t, d, record.Event{RunID: "r1", Type: record.EvNote, Reason: "one"})
	if d.walIndex.opened() {
		t.Error("the -shm was opened by a handle that keeps no board")
	}
}
