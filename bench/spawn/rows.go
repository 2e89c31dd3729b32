//go:build unix && !bare

package main

import (
	"fmt"
	"strconv"
	"strings"
)

// minRows is the least a commit-before-GO orchestrator records: one row
// when a child is about to start, one when it has ended, appended to one
// table (an INTEGER PRIMARY KEY table: each row goes at the end of its
// B-tree). A decision's end and start go in one INSERT.
type minRows struct{ run int64 }

func (m *minRows) schema() string {
	return `CREATE TABLE IF NOT EXISTS children (
		id        INTEGER PRIMARY KEY,
		run       INTEGER NOT NULL,
		child     INTEGER NOT NULL,
		at        INTEGER NOT NULL,
		pid       INTEGER,
		exit_code INTEGER -- NULL: about to start; else ended with it
	)`
}

const (
	minStart = "INSERT INTO children (run, child, at) VALUES (?, ?, ?)"
	minEnd   = "INSERT INTO children (run, child, at, pid, exit_code) VALUES (?, ?, ?, ?, ?)"
	minBoth  = "INSERT INTO children (run, child, at, pid, exit_code) VALUES (?, ?, ?, ?, ?), (?, ?, ?, NULL, NULL)"
)

func (m *minRows) begin(*recorder, int) error { return nil }
func (m *minRows) end(*recorder) error        { return nil }

func (m *minRows) decision(r *recorder, prev, prevPID, prevExit, i int) error {
	at := now()
	if prev < 0 {
		return r.exec(minStart, m.run, i, at)
	}
	return r.exec(minBoth, m.run, prev, at, prevPID, prevExit, m.run, i, at)
}

func (m *minRows) last(r *recorder, prev, prevPID, prevExit int) error {
	return r.exec(minEnd, m.run, prev, now(), prevPID, prevExit)
}

// orchRows writes orch's rows: the tables cues, attempts and events as
// runner/store's schema has them (columns, keys, indexes; runs cut to what
// is written here), and per decision the statements of its chained commit
// (runner/store/commitcost_test.go): the previous attempt's end (UPDATE
// attempts) and its cue's completion (UPDATE cues), the next cue's WARNING
// (UPDATE cues) and attempt (INSERT attempts), its STANDBY and GO (UPDATE
// cues), and the six events saying so (one INSERT). orch warns the cue
// after next in the decision before its GO; here a child's WARNING and GO
// go in one decision, which writes the same statements and rows, but needs
// no knowledge of which child a worker runs next.
type orchRows struct {
	run     string
	seq     int            // the run's last event; its writer holds the recorder's lock
	inserts map[int]string // the events INSERT of n rows, kept as the store keeps it
}

func (o *orchRows) schema() string {
	return `CREATE TABLE IF NOT EXISTS runs (
		id         TEXT PRIMARY KEY,
		cuelist    TEXT NOT NULL,
		state      TEXT NOT NULL,
		started_at INTEGER NOT NULL,
		ended_at   INTEGER
	);
	CREATE TABLE IF NOT EXISTS cues (
		run_id     TEXT NOT NULL REFERENCES runs (id),
		cue_id     TEXT NOT NULL,
		position   INTEGER NOT NULL,
		agents     TEXT NOT NULL DEFAULT '[]',
		state      TEXT NOT NULL,
		reason     TEXT NOT NULL DEFAULT '',
		attempts   INTEGER NOT NULL DEFAULT 0,
		warning_at INTEGER,
		standby_at INTEGER,
		go_at      INTEGER,
		ended_at   INTEGER,
		outputs    TEXT,
		approved   INTEGER NOT NULL DEFAULT 0,
		parent     TEXT NOT NULL DEFAULT '',
		kind       TEXT NOT NULL DEFAULT '',
		depth      INTEGER NOT NULL DEFAULT 0,
		task_ref   TEXT NOT NULL DEFAULT '',
		context    TEXT,
		after_cues TEXT NOT NULL DEFAULT '[]',
		manual     INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (run_id, cue_id)
	) WITHOUT ROWID;
	CREATE INDEX IF NOT EXISTS cues_by_position ON cues (run_id, position);
	CREATE TABLE IF NOT EXISTS attempts (
		run_id          TEXT NOT NULL,
		cue_id          TEXT NOT NULL,
		number          INTEGER NOT NULL,
		agent_id        TEXT NOT NULL,
		state           TEXT NOT NULL,
		reason          TEXT NOT NULL DEFAULT '',
		class           TEXT NOT NULL DEFAULT '',
		exit_code       INTEGER,
		pid             INTEGER NOT NULL DEFAULT 0,
		fallback        INTEGER NOT NULL DEFAULT 0,
		started_at      INTEGER NOT NULL,
		ended_at        INTEGER,
		outputs         TEXT,
		credits         REAL NOT NULL DEFAULT 0,
		cost_usd        REAL NOT NULL DEFAULT 0,
		input_tokens    INTEGER NOT NULL DEFAULT 0,
		output_tokens   INTEGER NOT NULL DEFAULT 0,
		worktree_branch TEXT NOT NULL DEFAULT '',
		worktree_commit TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (run_id, cue_id, number, agent_id),
		FOREIGN KEY (run_id, cue_id) REFERENCES cues (run_id, cue_id)
	) WITHOUT ROWID;
	CREATE TABLE IF NOT EXISTS events (
		run_id   TEXT NOT NULL,
		seq      INTEGER NOT NULL,
		at       INTEGER NOT NULL,
		type     TEXT NOT NULL,
		cue_id   TEXT NOT NULL DEFAULT '',
		agent_id TEXT NOT NULL DEFAULT '',
		attempt  INTEGER NOT NULL DEFAULT 0,
		state    TEXT NOT NULL DEFAULT '',
		reason   TEXT NOT NULL DEFAULT '',
		data     TEXT,
		PRIMARY KEY (run_id, seq)
	);
	CREATE INDEX IF NOT EXISTS events_user_messages ON events (run_id, seq) WHERE type = 'message/user';
	CREATE INDEX IF NOT EXISTS events_escalation_acks ON events (run_id, seq) WHERE type = 'escalation/acknowledged'`
}

// The statements of orch's chained commit, as runner/store builds them
// (project.go, cueupdate.go): each cue UPDATE sets only what changes.
const (
	orchAttemptStarted = `INSERT INTO attempts (run_id, cue_id, number, agent_id, state, fallback, started_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, cue_id, number, agent_id) DO UPDATE SET state = excluded.state, reason = '', class = '',
			exit_code = NULL, pid = 0, ended_at = NULL, started_at = excluded.started_at
		WHERE attempts.state = ?`
	orchAttemptEnded = `UPDATE attempts SET state = ?, reason = ?, class = ?, exit_code = ?,
			pid = coalesce(nullif(?, 0), pid), outputs = coalesce(?, outputs), ended_at = ?
		WHERE run_id = ? AND cue_id = ? AND number = ? AND agent_id = ?`
	orchCueWarning   = "UPDATE cues SET state = ?, reason = ?, warning_at = ?, ended_at = ?, attempts = max(attempts, ?) WHERE run_id = ? AND cue_id = ?"
	orchCueStandbyGo = "UPDATE cues SET state = ?, reason = ?, standby_at = ?, go_at = ?, ended_at = ? WHERE run_id = ? AND cue_id = ?"
	orchCueCompleted = "UPDATE cues SET state = ?, reason = ?, ended_at = ?, outputs = ? WHERE run_id = ? AND cue_id = ?"
	orchEventsPrefix = "INSERT INTO events (run_id, seq, at, type, cue_id, agent_id, attempt, state, reason, data) VALUES "
)

// event is one row of events, but its run.
type event struct {
	at              int64
	typ, cue, agent string
	attempt         int
	state           string
	data            any
}

func cueID(i int) string   { return "C" + strconv.Itoa(i) }
func agentID(i int) string { return "agent-" + strconv.Itoa(i) }

// insertEvents appends events to the run in one statement that binds the
// run once (?1), as the store's does.
func (o *orchRows) insertEvents(r *recorder, events ...event) error {
	query, ok := o.inserts[len(events)]
	if !ok {
		row := "(?1" + strings.Repeat(", ?", 9) + ")"
		query = orchEventsPrefix + row + strings.Repeat(", "+row, len(events)-1)
		o.inserts[len(events)] = query
	}
	args := []any{o.run}
	for _, e := range events {
		o.seq++
		args = append(args, o.seq, e.at, e.typ, e.cue, e.agent, e.attempt, e.state, "", e.data)
	}
	return r.exec(query, args...)
}

func (o *orchRows) begin(r *recorder, n int) error {
	at := now()
	if err := r.exec("INSERT INTO runs (id, cuelist, state, started_at) VALUES (?, ?, 'running', ?)", o.run, "spawn", at); err != nil {
		return err
	}
	for i := range n {
		after := "[]"
		if i > 0 {
			after = `["` + cueID(i-1) + `"]`
		}
		if err := r.exec("INSERT INTO cues (run_id, cue_id, position, agents, state, after_cues) VALUES (?, ?, ?, ?, 'pending', ?)",
			o.run, cueID(i), i, `["`+agentID(i)+`"]`, after); err != nil {
			return err
		}
	}
	return o.insertEvents(r, event{at: at, typ: "run/started", data: fmt.Sprintf(`{"cuelist":"spawn","cues":%d}`, n)})
}

// ended writes child prev's end: its attempt and its cue.
func (o *orchRows) ended(r *recorder, at int64, prev, pid, exit int) ([]event, error) {
	data := `{"exit_code":` + strconv.Itoa(exit) + `,"pid":` + strconv.Itoa(pid) + `}`
	if err := r.exec(orchAttemptEnded, "completed", "", "", exit, pid, "{}", at, o.run, cueID(prev), 1, agentID(prev)); err != nil {
		return nil, err
	}
	if err := r.exec(orchCueCompleted, "completed", "", at, "{}", o.run, cueID(prev)); err != nil {
		return nil, err
	}
	return []event{
		{at: at, typ: "attempt/ended", cue: cueID(prev), agent: agentID(prev), attempt: 1, state: "completed", data: data},
		{at: at, typ: "cue/state", cue: cueID(prev), state: "completed", data: "{}"},
	}, nil
}

func (o *orchRows) decision(r *recorder, prev, prevPID, prevExit, i int) error {
	at := now()
	var events []event
	if prev >= 0 {
		var err error
		if events, err = o.ended(r, at, prev, prevPID, prevExit); err != nil {
			return err
		}
	}
	cue, agent := cueID(i), agentID(i)
	if err := r.exec(orchCueWarning, "warning", "", at, nil, 1, o.run, cue); err != nil {
		return err
	}
	if err := r.exec(orchAttemptStarted, o.run, cue, 1, agent, "running", 0, at, "paused"); err != nil {
		return err
	}
	if err := r.exec(orchCueStandbyGo, "go", "", at, at, nil, o.run, cue); err != nil {
		return err
	}
	return o.insertEvents(r, append(events,
		event{at: at, typ: "cue/state", cue: cue, state: "warning"},
		event{at: at, typ: "attempt/started", cue: cue, agent: agent, attempt: 1, data: "{}"},
		event{at: at, typ: "cue/state", cue: cue, state: "standby"},
		event{at: at, typ: "cue/state", cue: cue, state: "go"})...)
}

func (o *orchRows) last(r *recorder, prev, prevPID, prevExit int) error {
	events, err := o.ended(r, now(), prev, prevPID, prevExit)
	if err != nil {
		return err
	}
	return o.insertEvents(r, events...)
}

func (o *orchRows) end(r *recorder) error {
	at := now()
	if err := r.exec("UPDATE runs SET state = 'completed', ended_at = ? WHERE id = ?", at, o.run); err != nil {
		return err
	}
	return o.insertEvents(r, event{at: at, typ: "run/state", state: "completed"})
}
