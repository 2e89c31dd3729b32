package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// filledDB writes a database with a run, a blackboard key, a memory item
// and a line of output, closed.
func filledDB(t *testing.T) string {
	t.Helper()
	d, path := openTest(t)
	ctx := context.Background()
	startRun(t, d, "r1", "a")
	if _, err := d.BlackboardWrite(ctx, "r1", "plan", json.RawMessage(`"draft"`), "person"); err != nil {
		t.Fatal(err)
	}
	if err := d.MemoryWrite(ctx, record.MemoryItem{Key: "k", Text: "postgres wins", Agent: "a", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	d.Log(record.LogLine{RunID: "r1", Cue: "a", Agent: "a", Attempt: 1, Stream: "stderr", Text: "hello"})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAll runs the queries of the reading commands and fails the test on
// any error.
func readAll(t *testing.T, d *DB) {
	t.Helper()
	ctx := context.Background()
	if runs, total, err := d.Runs(ctx, 10); err != nil || total != 1 || runs[0].ID != "r1" {
		t.Errorf("Runs: %v %d %v", runs, total, err)
	}
	if r, err := d.Run(ctx, "r1"); err != nil || len(r.Cues) != 1 {
		t.Errorf("Run: %+v %v", r, err)
	}
	if evs, err := d.Events(ctx, "r1", 0, 0); err != nil || len(evs) != 2 {
		t.Errorf("Events: %d %v", len(evs), err)
	}
	if lines, err := d.Logs(ctx, "r1", "", 0, 0); err != nil || len(lines) != 1 || lines[0].Text != "hello" {
		t.Errorf("Logs: %v %v", lines, err)
	}
	if e, ok, err := d.BlackboardRead(ctx, "r1", "plan"); err != nil || !ok || string(e.Value) != `"draft"` {
		t.Errorf("BlackboardRead: %v %v %v", e, ok, err)
	}
	if b, err := d.Blackboard(ctx, "r1"); err != nil || len(b) != 1 {
		t.Errorf("Blackboard: %v %v", b, err)
	}
	if items, err := d.MemorySearch(ctx, "postgres", 0); err != nil || len(items) != 1 {
		t.Errorf("MemorySearch: %v %v", items, err)
	}
}

// A database opened read-only answers every reading query, refuses writes
// with ErrReadOnly, and leaves the file as it was.
func TestOpenReadOnly(t *testing.T) {
	path := filledDB(t)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, d)
	if d.queue != nil || d.writerDone != nil { // (counting goroutines was flaky: other tests' end late)
		t.Errorf("a read-only handle has a writer: queue %v, writerDone %v", d.queue, d.writerDone)
	}
	ctx := context.Background()
	if err := d.Append(ctx, record.Event{RunID: "r1", Type: record.EvNote}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Append: %v, want ErrReadOnly", err)
	}
	if _, err := d.BlackboardWrite(ctx, "r1", "k", json.RawMessage(`1`), "person"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("BlackboardWrite: %v, want ErrReadOnly", err)
	}
	d.Log(record.LogLine{RunID: "r1", Text: "x"})
	if err := d.Flush(ctx); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Flush: %v, want ErrReadOnly", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("opening read-only changed the database file")
	}
	if _, err := OpenReadOnly(filepath.Join(t.TempDir(), "none.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// A database on a read-only file system (nobody can write it, nor create
// its -wal and -shm files) is read. Mounting needs root.
func TestOpenReadOnlyOnReadOnlyMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a read-only file system needs root")
	}
	path := filledDB(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "none", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(mnt, "orch.db")
	if err := os.WriteFile(ro, data, 0o400); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(mnt, "probe"), nil, 0o600); err == nil {
		t.Fatal("the mount is writable")
	}
	d, err := OpenReadOnly(ro)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	readAll(t, d)
	if _, err := Open(ro, Options{}); err == nil {
		t.Error("Open (for writing) worked on a read-only mount")
	}
}

// A database of an older schema is not migrated by a reader: it says that a
// writing command must, and reads it once one has.
func TestOpenReadOnlyOlderSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:3] {
		if _, err := raw.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec("PRAGMA user_version = 3"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := OpenReadOnly(path); !errors.Is(err, ErrOlderSchema) {
		t.Fatalf("older schema: %v, want ErrOlderSchema", err)
	}
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	d, err = OpenReadOnly(path)
	if err != nil {
		t.Fatalf("after a writer migrated it: %v", err)
	}
	d.Close()
}
