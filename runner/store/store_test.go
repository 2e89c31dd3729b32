//go:build unix

package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

func TestOpenCreatesPrivateDirAndFile(t *testing.T) {
	d, path := openTest(t)
	startRun(t, d, "r1", "a") // a write makes the -wal file
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{
		{filepath.Dir(path), 0o700 | os.ModeDir},
		{path, 0o600},
		{path + "-wal", 0o600},
		{path + "-shm", 0o600},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	if got := DefaultPath(); got != ".orch/orch.db" {
		t.Errorf("DefaultPath() = %q", got)
	}
}

func TestMigrateFromEmpty(t *testing.T) {
	d, path := openTest(t)
	d.Close()
	raw := rawDB(t, path)
	if v := queryInt(t, raw, "PRAGMA user_version"); v != int64(schemaVersion) || v < 1 {
		t.Errorf("user_version = %d, want %d", v, schemaVersion)
	}
	if id := queryInt(t, raw, "PRAGMA application_id"); id != applicationID {
		t.Errorf("application_id = %#x", id)
	}
	for _, table := range []string{"runs", "cues", "attempts", "events", "messages", "blackboard", "cooldowns", "output", "commands", "conflicts", "questions", "memory", "memory_fts"} {
		if n := queryInt(t, raw, "SELECT count(*) FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?", table); n != 1 {
			t.Errorf("table %s missing", table)
		}
	}
	if mode := queryString(t, raw, "PRAGMA journal_mode"); mode != "wal" {
		t.Errorf("journal_mode = %s", mode)
	}
	// Opening it again finds it current and keeps its data.
	d2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	startRun(t, d2, "r1", "a")
	if _, err := d2.Run(context.Background(), "r1"); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentOpenOfNewFile is several orch processes starting at once on
// a project without a database: one migrates, the others find it done, and
// none fails because another was switching the new file to WAL mode.
func TestConcurrentOpenOfNewFile(t *testing.T) {
	for round := range 20 {
		path := filepath.Join(t.TempDir(), ".orch", "orch.db")
		var wg sync.WaitGroup
		dbs := make([]*DB, 6)
		errs := make([]error, len(dbs))
		for i := range dbs {
			wg.Go(func() { dbs[i], errs[i] = Open(path, Options{}) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, Open %d: %v", round, i, err)
			}
			defer dbs[i].Close()
		}
		startRun(t, dbs[0], "r1", "a")
		for i, d := range dbs {
			appendOK(t, d, record.Event{RunID: "r1", Type: record.EvNote, Reason: strconv.Itoa(i)})
		}
		if evs, _ := dbs[5].Events(context.Background(), "r1", 0, 0); len(evs) != len(dbs)+1 {
			t.Errorf("%d events", len(evs))
		}
	}
}

func queryString(t testing.TB, db *sql.DB, query string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(query).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSyncOption(t *testing.T) {
	for _, c := range []struct {
		sync string
		want int64 // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{{"", 1}, {"normal", 1}, {"full", 2}, {"FULL", 2}} {
		d, err := Open(filepath.Join(t.TempDir(), "orch.db"), Options{Sync: c.sync})
		if err != nil {
			t.Fatal(err)
		}
		var got int64
		// The writer's connection is one of the pool's; every connection
		// gets the same pragmas.
		if err := d.sql.QueryRow("PRAGMA synchronous").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Sync %q: synchronous = %d, want %d", c.sync, got, c.want)
		}
		d.Close()
	}
	if _, err := Open(filepath.Join(t.TempDir(), "orch.db"), Options{Sync: "sometimes"}); err == nil ||
		!strings.Contains(err.Error(), `unknown sync mode "sometimes"`) {
		t.Errorf("bad sync mode: %v", err)
	}
}

func TestRefuseNewerSchema(t *testing.T) {
	d, path := openTest(t)
	d.Close()
	raw := rawDB(t, path)
	if _, err := raw.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{})
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open = %v, want ErrNewerSchema", err)
	}
	for _, want := range []string{path, "schema version is 99", fmt.Sprintf("knows up to %d", schemaVersion)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("Open modified a database of a newer schema")
	}
}

func TestOpenBadPlaces(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, bytes.Repeat([]byte("these are not the pages you are looking for\n"), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "other.db")
	raw := rawDB(t, foreign)
	if _, err := raw.Exec("CREATE TABLE photos (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	for _, c := range []struct {
		name, path, want string
	}{
		{"parent is a file", filepath.Join(notDB, "sub", "orch.db"), "not a directory"},
		{"path is a directory", dir, "is a directory"},
		{"not a database", notDB, "file is not a database"},
		{"another program's database", foreign, "not an orch run database"},
		{"empty path", "", "no path given"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Open(c.path, Options{})
			if err == nil {
				d.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "opening run database "+c.path+": ") || !strings.Contains(msg, c.want) {
				t.Errorf("error %q: want the path and %q", msg, c.want)
			}
		})
	}
}

func TestOpenReadOnlyPlaces(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file permissions")
	}
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o500); err != nil {
		t.Fatal(err)
	}
	readOnlyFile := filepath.Join(dir, "ro.db")
	readOnlyDir := filepath.Join(dir, "ro-dir")
	inReadOnlyDir := filepath.Join(readOnlyDir, "orch.db")
	for _, path := range []string{readOnlyFile, inReadOnlyDir} {
		d, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		d.Close() // the last close removes the -wal file
	}
	if err := os.Chmod(readOnlyFile, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(readOnlyDir, 0o500); err != nil { // the file is writable, but no -wal can be made
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(readOnlyDir, 0o700) }) // so that TempDir can remove it
	for _, c := range []struct{ path, want string }{
		{filepath.Join(locked, "orch.db"), "permission denied"},
		{filepath.Join(locked, "new", "orch.db"), "permission denied"},
		{readOnlyFile, "permission denied"},
		{inReadOnlyDir, "create orch.db-wal and orch.db-shm"},
	} {
		d, err := Open(c.path, Options{})
		if err == nil {
			d.Close()
			t.Errorf("Open(%s) succeeded", c.path)
			continue
		}
		if !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s) = %v, want %q", c.path, err, c.want)
		}
	}
}

func TestPathWithURICharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b#c%20d é", "orch.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, d, "r1", "a")
	d.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not where asked: %v", err)
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	d, _ := openTest(t)
	startRun(t, d, "r1", "a")
	d.Log(record.LogLine{RunID: "r1", Cue: "a", Stream: "stderr", Text: "queued before Close"})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := d.Append(context.Background(), record.Event{RunID: "r1", Type: record.EvNote}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v", err)
	}
	if err := d.Flush(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v", err)
	}
	d.Log(record.LogLine{RunID: "r1", Text: "too late"}) // must not panic
	d2, err := Open(d.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	logs, err := d2.Logs(context.Background(), "r1", "", 0, 0)
	if err != nil || len(logs) != 1 {
		t.Fatalf("Close did not flush the queued line: %v %v", logs, err)
	}
}

func TestCommittedSurvivesWithoutClose(t *testing.T) {
	d, path := openTest(t)
	startRun(t, d, "r1", "a")
	appendOK(t, d, record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "go"})
	// No Close: a second handle (another process) sees every commit.
	d2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	r, err := d2.Run(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Cues[0].State != record.CueGo {
		t.Errorf("cue state %s", r.Cues[0].State)
	}
}

// TestKilledProcessLosesNothing runs a child that appends and then kills
// itself with SIGKILL, without Close: everything Append returned for is there.
func TestKilledProcessLosesNothing(t *testing.T) {
	if path := os.Getenv("ORCH_STORE_KILL_DB"); path != "" {
		d, err := Open(path, Options{})
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		startRun(t, d, "r1", "a")
		for i := range 200 {
			appendOK(t, d, record.Event{RunID: "r1", Type: record.EvNote, Reason: strconv.Itoa(i)})
			d.Log(record.LogLine{RunID: "r1", Cue: "a", Stream: "stdout", Text: strconv.Itoa(i)})
		}
		if err := d.Flush(context.Background()); err != nil {
			os.Exit(4)
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	path := filepath.Join(t.TempDir(), "orch.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledProcessLosesNothing$")
	cmd.Env = append(os.Environ(), "ORCH_STORE_KILL_DB="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v\n%s", err, out)
	}
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	events, err := d.Events(context.Background(), "r1", 0, 0)
	if err != nil || len(events) != 201 {
		t.Fatalf("events after kill: %d, %v", len(events), err)
	}
	logs, err := d.Logs(context.Background(), "r1", "", 0, 0)
	if err != nil || len(logs) != 200 {
		t.Fatalf("logs after kill: %d, %v", len(logs), err)
	}
	integrityOK(t, path)
}

// TestMigrateV2ToV3 opens a database written by the orch before schema 3,
// with a run in it: the run reads as before, as plan cues with no parent,
// and the new tables work.
func TestMigrateV2ToLatest(t *testing.T) {
	path := olderDB(t, 2,
		`INSERT INTO runs (id, cuelist, state, created_at, started_at, ended_at) VALUES ('r1', 'deploy', 'completed', 1, 1000000, 2000000)`,
		`INSERT INTO cues (run_id, cue_id, position, agents, state) VALUES ('r1', 'build', 0, '["b"]', 'completed'), ('r1', 'ship', 1, '["s"]', 'completed')`,
		`INSERT INTO events (run_id, seq, at, type) VALUES ('r1', 1, 1000000, 'run/started')`,
		`INSERT INTO events (run_id, seq, at, type, cue_id, agent_id, attempt, data) VALUES ('r1', 2, 1000001, 'message', 'build', 'b', 1,
			'{"direction":"in","message_type":"ack.warning","id":"m2","in_reply_to":"m1","body":{"type":"ack.warning"}}')`,
		`INSERT INTO messages (run_id, seq, direction, type, msg_id, in_reply_to) VALUES ('r1', 2, 'in', 'ack.warning', 'm2', 'm1')`,
		`INSERT INTO blackboard (run_id, key, version, value, author, at) VALUES
			('r1', 'plan', 1, '"draft"', 'lead', 1100000), ('r1', 'plan', 2, '"final"', 'rev', 1300000),
			('r1', 'ticket', 1, '42', 'lead', 1200000)`,
	)

	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if v := queryInt(t, rawDB(t, path), "PRAGMA user_version"); v != int64(schemaVersion) {
		t.Errorf("user_version %d, schemaVersion %d", v, schemaVersion)
	}
	// v4: the messages index is a view of the message events.
	var dir, typ, id, reply, cue, body string
	err = rawDB(t, path).QueryRow(`SELECT direction, type, msg_id, in_reply_to, cue_id, body FROM messages WHERE run_id = 'r1' AND seq = 2`).
		Scan(&dir, &typ, &id, &reply, &cue, &body)
	if err != nil || dir != "in" || typ != "ack.warning" || id != "m2" || reply != "m1" || cue != "build" || body != `{"type":"ack.warning"}` {
		t.Errorf("messages view: %s %s %s %s %s %s %v", dir, typ, id, reply, cue, body, err)
	}
	ctx := context.Background()
	r, err := d.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cues) != 2 || r.Cues[0].Parent != "" || r.Cues[0].Depth != 0 || r.RunSummary.Cues != 2 || r.Completed != 2 ||
		r.Credits != 0 || len(r.Questions) != 0 {
		t.Errorf("migrated run %+v", r)
	}
	// The board keeps its latest versions, and every version in the order written.
	board, err := d.Blackboard(ctx, "r1")
	if err != nil || len(board) != 2 || string(board["plan"].Value) != `"final"` || board["plan"].Version != 2 ||
		board["plan"].Author != "rev" || board["ticket"].Version != 1 {
		t.Errorf("migrated board %+v, %v", board, err)
	}
	if v, err := d.BlackboardWrite(ctx, "r1", "plan", []byte(`"v3"`), "x"); err != nil || v != 3 {
		t.Errorf("write after migration: version %d, %v", v, err)
	}
	var history []string
	rows, err := rawDB(t, path).Query(`SELECT key || ':' || version FROM blackboard_history WHERE run_id = 'r1' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var h string
		rows.Scan(&h)
		history = append(history, h)
	}
	rows.Close()
	if strings.Join(history, " ") != "plan:1 ticket:1 plan:2 plan:3" {
		t.Errorf("history %v", history)
	}
	// The new projections work on the old run.
	appendOK(t, d, taskStartedEvent(t, "r1", "build/1", "helper", "build", "spawn", 1),
		questionEvent(t, "r1", "q1", "build/1", "helper", "person"))
	if q, err := d.Question(ctx, "r1", "q1"); err != nil || q.Cue != "build/1" {
		t.Errorf("Question = %+v, %v", q, err)
	}
	writeMemory(t, d, record.MemoryItem{Key: "k", Text: "migrated fine"})
	if items, err := d.MemorySearch(ctx, "migrated", 0); err != nil || len(items) != 1 {
		t.Errorf("MemorySearch = %+v, %v", items, err)
	}
	integrityOK(t, path)
}
