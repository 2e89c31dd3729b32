//go:build linux

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// TestReadingCommandsOnReadOnlyDB: status, events, logs, bb get/ls and
// memory search/ls read a database on a read-only file system (a copy
// someone handed over, a mounted backup); a command that writes says why it
// cannot. Mounting needs root.
func TestReadingCommandsOnReadOnlyDB(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a read-only file system needs root")
	}
	src := filepath.Join(t.TempDir(), "orch.db")
	db, err := store.Open(src, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	started := record.RunStartedData{Cuelist: "c", Cues: []record.CueInfo{{ID: "A", Agents: []string{"a"}}}}
	err = db.Append(ctx, record.Event{RunID: "r1", Type: record.EvRunStarted, Data: started},
		record.Event{RunID: "r1", Type: record.EvRunState, State: string(record.RunCompleted)})
	if err == nil {
		_, err = db.BlackboardWrite(ctx, "r1", "plan", json.RawMessage(`"draft"`), "person")
	}
	if err == nil {
		err = db.MemoryWrite(ctx, record.MemoryItem{Key: "k", Text: "postgres wins", Agent: "a", RunID: "r1"})
	}
	if err != nil {
		t.Fatal(err)
	}
	db.Log(record.LogLine{RunID: "r1", Cue: "A", Agent: "a", Attempt: 1, Stream: "stderr", Text: "hello"})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "none", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	dbFile := filepath.Join(mnt, "orch.db")
	if err := os.WriteFile(dbFile, data, 0o400); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status"}, "r1"},
		{[]string{"status", "r1"}, "completed"},
		{[]string{"events", "r1"}, "run r1 started"},
		{[]string{"logs", "r1"}, "hello"},
		{[]string{"bb", "get", "--run", "r1", "plan"}, "draft"},
		{[]string{"bb", "ls", "--run", "r1"}, "plan"},
		{[]string{"memory", "search", "postgres"}, "postgres wins"},
		{[]string{"memory", "ls"}, "postgres wins"},
	} {
		code, stdout, stderr := runOrch(t, "", append(c.args, "--db", dbFile)...)
		if code != exitOK || !strings.Contains(stdout, c.want) {
			t.Errorf("orch %s: exit %d, stdout %q, stderr %q", strings.Join(c.args, " "), code, stdout, stderr)
		}
	}
	code, _, stderr := runOrch(t, "", "bb", "set", "--run", "r1", "--db", dbFile, "plan", "x")
	if code == exitOK || !strings.Contains(stderr, "the database "+dbFile+" is read-only") {
		t.Errorf("orch bb set on a read-only file system: exit %d, stderr %q (want it to say the database is read-only)", code, stderr)
	}
}

// TestReadingCommandsOnOlderSchema: a reading command does not migrate a
// database an older orch wrote; it says which command does.
func TestReadingCommandsOnOlderSchema(t *testing.T) {
	dbFile := filepath.Join(t.TempDir(), "orch.db")
	raw, err := sql.Open("sqlite", "file:"+dbFile)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Exec("CREATE TABLE runs (id TEXT PRIMARY KEY); PRAGMA user_version = 1; PRAGMA application_id = 1869767528")
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(dbFile)
	code, _, stderr := runOrch(t, "", "status", "--db", dbFile)
	if code != exitUsage || !strings.Contains(stderr, "written by an older orch: its schema version is 1") ||
		!strings.Contains(stderr, "a command that writes (orch run, orch bb set) migrates it") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if after, _ := os.ReadFile(dbFile); string(after) != string(before) {
		t.Error("orch status changed the database")
	}
}
