package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Escalation is a high or critical escalation an agent sent the person (an
// escalation.* message), acknowledged or not. Its ID is "e" and the seq of
// the event that recorded it: stable, and unique in its run.
type Escalation struct {
	Run      string
	ID       string // e42
	Cue      string // the sender's task
	Agent    string // the sender
	Severity string // high or critical
	Text     string
	At       time.Time
	AckedAt  time.Time // zero while not acknowledged
	AckedBy  string
}

// ErrNoEscalation is wrapped by Escalation's error when the run has no high
// or critical escalation with that id.
var ErrNoEscalation = errors.New("no such escalation")

// EscalationID is the id of the escalation recorded by the event seq.
func EscalationID(seq int64) string { return "e" + strconv.FormatInt(seq, 10) }

// escalationSeq reads an escalation id ("e42", or the bare seq "42").
func escalationSeq(id string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimPrefix(id, "e"), 10, 64)
	return n, err == nil && n > 0
}

// The escalations that need the person at once: message/user events of
// kind escalation with a high or critical severity (orch's own notice
// rings for the same ones). Both queries read a partial index (v8), so
// their cost follows the messages to the person, not the events.
const (
	escalationQuery = `SELECT run_id, seq, at, cue_id, agent_id,
		json_extract(data, '$.body.severity'), coalesce(json_extract(data, '$.body.error'), '')
		FROM events WHERE type = 'message/user' AND json_extract(data, '$.kind') = 'escalation'
			AND json_extract(data, '$.body.severity') IN ('high', 'critical')`
	ackQuery = `SELECT run_id, coalesce(json_extract(data, '$.id'), ''), at, coalesce(json_extract(data, '$.by'), '')
		FROM events WHERE type = 'escalation/acknowledged'`
)

// escalations reads the escalations of runID ("": of every run), each with
// its first acknowledgement; with openOnly, those not acknowledged.
func escalations(ctx context.Context, q querier, runID string, openOnly bool) ([]Escalation, error) {
	where, args := "", []any(nil)
	if runID != "" {
		where, args = " AND run_id = ?", []any{runID}
	}
	type ack struct {
		at int64
		by string
	}
	acks := map[[2]string]ack{}
	rows, err := q.QueryContext(ctx, ackQuery+where+" ORDER BY run_id, seq", args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var run, id string
		var a ack
		if err := rows.Scan(&run, &id, &a.at, &a.by); err != nil {
			rows.Close()
			return nil, err
		}
		if _, seen := acks[[2]string{run, id}]; !seen {
			acks[[2]string{run, id}] = a
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, escalationQuery+where+" ORDER BY run_id, seq", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Escalation
	for rows.Next() {
		var es Escalation
		var seq, at int64
		if err := rows.Scan(&es.Run, &seq, &at, &es.Cue, &es.Agent, &es.Severity, &es.Text); err != nil {
			return nil, err
		}
		es.ID, es.At = EscalationID(seq), time.UnixMicro(at).UTC()
		if a, ok := acks[[2]string{es.Run, es.ID}]; ok {
			if openOnly {
				continue
			}
			es.AckedAt, es.AckedBy = time.UnixMicro(a.at).UTC(), a.by
		}
		out = append(out, es)
	}
	return out, rows.Err()
}

// Escalations returns a run's high and critical escalations in the order
// sent; with openOnly, those not acknowledged yet.
func (d *DB) Escalations(ctx context.Context, runID string, openOnly bool) ([]Escalation, error) {
	out, err := escalations(ctx, d.sql, runID, openOnly)
	if err != nil {
		return nil, fmt.Errorf("reading the escalations of run %s: %w", runID, d.plain(err))
	}
	return out, nil
}

// Escalation returns one high or critical escalation of a run, by its id.
func (d *DB) Escalation(ctx context.Context, runID, id string) (Escalation, error) {
	seq, ok := escalationSeq(id)
	if ok {
		all, err := d.Escalations(ctx, runID, false)
		if err != nil {
			return Escalation{}, err
		}
		for _, es := range all {
			if es.ID == EscalationID(seq) {
				return es, nil
			}
		}
	}
	return Escalation{}, fmt.Errorf("run %s: %w %q", runID, ErrNoEscalation, id)
}

// openEscalations is every run's high and critical escalations not yet
// acknowledged, for the inbox: whatever the run's state, since only the
// person's acknowledgement takes one out (the agent never waited for it).
func openEscalations(ctx context.Context, tx *sql.Tx) ([]InboxItem, error) {
	list, err := escalations(ctx, tx, "", true)
	if err != nil {
		return nil, err
	}
	out := make([]InboxItem, 0, len(list))
	for _, es := range list {
		out = append(out, InboxItem{Run: es.Run, Kind: "escalation", ID: es.ID, Cue: es.Cue, Text: es.Text,
			Severity: es.Severity, Asker: es.Agent, At: es.At})
	}
	return out, nil
}
