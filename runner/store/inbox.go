package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// InboxItem is something a person is waiting on, in any run: a question
// asked of the person, a cue waiting for GO, or a high or critical
// escalation not yet acknowledged.
type InboxItem struct {
	Run        string
	Kind       string // "question", "go" or "escalation"
	ID         string // the question's id (q1), the cue's, or the escalation's (e42)
	Cue        string // the asker's task, or the cue waiting for GO
	Text       string
	Complexity string // a question's: quick or deep
	Severity   string // an escalation's: high or critical
	Asker      string // the agent that asked (or escalated)
	At         time.Time
}

// Inbox returns what waits for a person across every run, newest first: the
// open questions asked of the person and the cues waiting for GO (manual
// cues standing by since they did, or, in a paused run, not yet approved,
// since the run's last event; cues interrupted
// in GO that orch go runs again), of runs that are running (with a live
// owner) or paused; and the high or critical escalations of any run not
// yet acknowledged. Three statements in one snapshot, whatever the number
// of runs.
func (d *DB) Inbox(ctx context.Context) ([]InboxItem, error) {
	items, err := d.inbox(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading what waits for a person in %s: %w", d.path, d.plain(err))
	}
	return items, nil
}

// The owner's columns, to leave out runs whose owner died (interrupted:
// orch resume continues them, and nothing waits there for an answer).
const inboxOwner = `r.state, r.owner_pid, r.owner_host, r.owner_token, r.heartbeat_at`

func (d *DB) inbox(ctx context.Context) ([]InboxItem, error) {
	tx, done, err := d.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var out []InboxItem
	rows, err := tx.QueryContext(ctx, `SELECT q.run_id, q.qid, q.cue_id, q.agent_id, q.question, q.complexity, q.asked_at, `+inboxOwner+`
		FROM questions q JOIN runs r ON r.id = q.run_id
		WHERE q.state = 'open' AND q.asked_to = 'person' AND r.state IN ('running', 'paused')`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var it InboxItem
		var at int64
		var o owner
		if err := rows.Scan(&it.Run, &it.ID, &it.Cue, &it.Asker, &it.Text, &it.Complexity, &at, &o.state, &o.pid, &o.host, &o.token, &o.heartbeat); err != nil {
			rows.Close()
			return nil, err
		}
		if o.waiting() {
			it.Kind, it.At = "question", time.UnixMicro(at).UTC()
			out = append(out, it)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.QueryContext(ctx, `SELECT c.run_id, c.cue_id, c.agents, c.state, c.reason,
			coalesce(c.standby_at, (SELECT max(e.at) FROM events e WHERE e.run_id = r.id)), `+inboxOwner+`
		FROM runs r JOIN cues c ON c.run_id = r.id
		WHERE r.state IN ('running', 'paused') AND (c.parent = '' OR c.kind = 'item') AND c.approved = 0 AND (c.state = 'interrupted'
			OR c.manual = 1 AND (c.state = 'standby' OR r.state = 'paused' AND c.state IN ('pending', 'warning')))`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var it InboxItem
		var agents, state, reason string
		var at int64
		var o owner
		if err := rows.Scan(&it.Run, &it.ID, &agents, &state, &reason, &at, &o.state, &o.pid, &o.host, &o.token, &o.heartbeat); err != nil {
			return nil, err
		}
		if !o.waiting() {
			continue
		}
		var names []string
		_ = unmarshalColumn(agents, &names, "agents") // only for the text
		it.Kind, it.Cue, it.At = "go", it.ID, time.UnixMicro(at).UTC()
		it.Text = fmt.Sprintf("%s (%s) waits for GO", it.ID, strings.Join(names, ", "))
		if state == string(record.CueInterrupted) {
			it.Text = reason
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	escalations, err := openEscalations(ctx, tx)
	if err != nil {
		return nil, err
	}
	out = append(out, escalations...)
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		if out[i].Run != out[j].Run {
			return out[i].Run < out[j].Run
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// owner is a run's state and lease as an inbox row carries them.
type owner struct {
	state     record.RunState
	pid       int
	host      string
	token     string
	heartbeat sql.NullInt64
}

// waiting: the run can take an answer or a GO now. A paused run can (orch go
// continues it); a running one only while its owner lives.
func (o owner) waiting() bool {
	return o.state == record.RunPaused || alive(o.pid, o.host, o.token, fromMicros(o.heartbeat))
}
