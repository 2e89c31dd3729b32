package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// eventsIsRowidTable reports whether the events table is the rowid table of
// schema 10 (true) or the WITHOUT ROWID table before it (false).
func eventsIsRowidTable(t testing.TB, db *sql.DB) bool {
	t.Helper()
	var ddl string
	if err := db.QueryRow(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'events'`).Scan(&ddl); err != nil {
		t.Fatal(err)
	}
	return !strings.Contains(strings.ToUpper(ddl), "WITHOUT ROWID")
}

// TestMigrateV9ToV10 opens a database of schema 9 holding a run with a big
// run/started row, an escalation and a protocol message: events becomes a
// rowid table, every event reads back as it was, the messages view and the
// inbox's indexes work on it, and a new event takes the run's next seq.
func TestMigrateV9ToV10(t *testing.T) {
	big := `{"cuelist":"big","pad":"` + strings.Repeat("x", 200_000) + `"}`
	path := olderDB(t, 9,
		`INSERT INTO runs (id, cuelist, state, created_at, started_at) VALUES ('old', 'big', 'running', 1, 1000000)`,
		`INSERT INTO cues (run_id, cue_id, position, agents, state) VALUES ('old', 'a', 0, '["b"]', 'go')`,
		`INSERT INTO events (run_id, seq, at, type, data) VALUES ('old', 1, 1000000, 'run/started', '`+big+`')`,
		`INSERT INTO events (run_id, seq, at, type, cue_id, agent_id, attempt, data) VALUES ('old', 2, 1000001, 'message', 'a', 'b', 1,
			'{"direction":"in","message_type":"ack.warning","id":"m2","in_reply_to":"m1","body":{"type":"ack.warning"}}')`,
		`INSERT INTO events (run_id, seq, at, type, cue_id, agent_id, data) VALUES ('old', 3, 1000002, 'message/user', 'a', 'b',
			'{"kind":"escalation","body":{"severity":"high","error":"help"}}')`,
		`INSERT INTO events (run_id, seq, at, type, reason) VALUES ('old', 4, 1000003, 'note', 'before')`,
	)
	raw := rawDB(t, path)
	if eventsIsRowidTable(t, raw) {
		t.Fatal("schema 9's events table is already a rowid table")
	}

	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	if !eventsIsRowidTable(t, raw) {
		t.Error("after the migration, events is still a WITHOUT ROWID table")
	}
	evs, err := d.Events(ctx, "old", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 4 || evs[0].Type != record.EvRunStarted || evs[3].Reason != "before" || evs[1].Cue != "a" || evs[1].Attempt != 1 {
		t.Fatalf("events after the migration: %+v", evs)
	}
	if n := queryInt(t, raw, `SELECT length(data) FROM events WHERE run_id = 'old' AND seq = 1`); n != int64(len(big)) {
		t.Errorf("the big run/started row is %d bytes, want %d", n, len(big))
	}
	if n := queryInt(t, raw, `SELECT count(*) FROM messages WHERE run_id = 'old' AND msg_id = 'm2' AND in_reply_to = 'm1'`); n != 1 {
		t.Errorf("the messages view finds %d of the message", n)
	}
	for _, idx := range []string{"events_user_messages", "events_escalation_acks"} {
		if n := queryInt(t, raw, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = ? AND tbl_name = 'events'`, idx); n != 1 {
			t.Errorf("index %s: %d", idx, n)
		}
	}
	escs, err := d.Escalations(ctx, "", false)
	if err != nil || len(escs) != 1 {
		t.Errorf("Escalations = %+v, %v", escs, err)
	}

	appendOK(t, d, record.Event{RunID: "old", Type: record.EvNote, Reason: "after"})
	evs, err = d.Events(ctx, "old", 4, 0)
	if err != nil || len(evs) != 1 || evs[0].Seq != 5 || evs[0].Reason != "after" {
		t.Fatalf("the event appended after the migration: %+v, %v", evs, err)
	}
	if _, err := raw.Exec(`INSERT INTO events (run_id, seq, at, type) VALUES ('old', 5, 1, 'note')`); err == nil {
		t.Error("a second event with the same (run_id, seq) was accepted")
	}
	integrityOK(t, path)
}

// fillV9 writes runs events of schema 9 into path, each run with a big
// run/started row, enough that migrating them takes a while.
func fillV9(t testing.TB, path string, runs, perRun int) {
	t.Helper()
	raw := rawDB(t, path)
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("p", 100_000)
	for r := range runs {
		id := fmt.Sprintf("r%03d", r)
		if _, err := tx.Exec(`INSERT INTO runs (id, cuelist, state, created_at, started_at) VALUES (?, 'c', 'completed', 1, 1)`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO events (run_id, seq, at, type, data) VALUES (?, 1, 1, 'run/started', ?)`, id, `{"pad":"`+pad+`"}`); err != nil {
			t.Fatal(err)
		}
		for s := 2; s <= perRun; s++ {
			if _, err := tx.Exec(`INSERT INTO events (run_id, seq, at, type, cue_id, data) VALUES (?, ?, ?, 'cue/state', 'a', '{"state":"go"}')`, id, s, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil { // the last connection: its WAL goes into the file
		t.Fatal(err)
	}
}
