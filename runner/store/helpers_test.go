package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// openTest opens a new database in a temporary directory, closed when the
// test ends.
func openTest(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".orch", "orch.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, path
}

// startedEvent is the run/started event of a run whose cues each have one
// agent named after the cue.
func startedEvent(t testing.TB, runID string, at time.Time, cues ...string) record.Event {
	data := record.RunStartedData{Cuelist: "deploy", SpecPath: "/p/deploy.yaml", SpecHash: "h" + runID,
		Inputs: map[string]any{"env": "prod"}, OwnerPID: 42, OwnerHost: "box"}
	for _, c := range cues {
		data.Cues = append(data.Cues, record.CueInfo{ID: c, Agents: []string{c + "-agent"}})
	}
	return record.Event{RunID: runID, At: at, Type: record.EvRunStarted, Data: data}
}

// ownedStartedEvent is startedEvent with an owner's lease: the handle that
// records it owns the run, and its writes to the run are fenced.
func ownedStartedEvent(t testing.TB, runID string, owner record.Owner, cues ...string) record.Event {
	ev := startedEvent(t, runID, time.Time{}, cues...)
	data := ev.Data.(record.RunStartedData)
	data.OwnerPID, data.OwnerHost, data.OwnerToken = owner.PID, owner.Host, owner.Token
	ev.Data = data
	return ev
}

func startRun(t testing.TB, d *DB, runID string, cues ...string) {
	t.Helper()
	if err := d.Append(context.Background(), startedEvent(t, runID, time.Time{}, cues...)); err != nil {
		t.Fatal(err)
	}
}

func appendOK(t testing.TB, d *DB, events ...record.Event) {
	t.Helper()
	if err := d.Append(context.Background(), events...); err != nil {
		t.Fatal(err)
	}
}

// rawDB opens the file with a second, plain connection pool, to look at or
// tamper with what the store wrote.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	if err := createFile(path); err != nil { // orch's connections never create the file (dsn's mode=rw)
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path, "NORMAL", busyTimeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryInt(t testing.TB, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// holdWriteLock takes the database's write lock from another connection
// until release is called: the writer's next BEGIN waits for it, so requests
// pile up in the queue.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db := rawDB(t, path)
	tx, err := db.Begin() // _txlock=immediate: takes the lock now
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() }) // a failed test must not leave the writer waiting
	return func() { tx.Rollback() }
}

// waitFor polls cond until it holds or the test has waited too long.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func integrityOK(t testing.TB, path string) {
	t.Helper()
	var res string
	if err := rawDB(t, path).QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		t.Fatal(err)
	}
	if res != "ok" {
		t.Fatalf("integrity_check: %s", res)
	}
}

// olderDB writes a database at schema version (its migrations up to it, as
// an older orch left it) with the rows of rows (SQL statements), and
// returns its path.
func olderDB(t *testing.T, version int, rows ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orch.db")
	if err := createFile(path); err != nil {
		t.Fatal(err)
	}
	old := rawDB(t, path)
	defer old.Close()
	for _, m := range migrations[:version] {
		if _, err := old.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	head := []string{fmt.Sprintf("PRAGMA user_version = %d", version), fmt.Sprintf("PRAGMA application_id = %d", applicationID)}
	for _, q := range append(head, rows...) {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}
