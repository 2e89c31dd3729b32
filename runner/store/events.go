package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/orch-cli/orch/runner/record"
)

// LogRecord is one stored line of agent output; ID orders the lines of a
// database and pages through them (orch logs --follow passes the last ID).
type LogRecord struct {
	ID int64
	record.LogLine
}

// Events returns the run's events after afterSeq in order, at most limit of
// them (0: all). orch events --follow passes the last Seq it printed. Each
// event's data is decoded; one that cannot be is returned as runner.RawData,
// which says why, rather than fail the whole read.
func (d *DB) Events(ctx context.Context, runID string, afterSeq int64, limit int) ([]record.Event, error) {
	if d.noEventsAfter(runID, afterSeq) {
		return nil, nil
	}
	if limit <= 0 {
		limit = -1
	}
	d.stats.eventReads.Add(1)
	events, err := d.eventsWhere(ctx, runID, `seq > ? ORDER BY seq LIMIT ?`, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the events of run %s: %w", runID, d.plain(err))
	}
	return events, nil
}

// noEventsAfter says, without a query, that run runID has no event after
// seq: this handle's last commit left the run's last seq at most seq (its
// writer knows the seqs of the runs it wrote), and the WAL index's header
// is still where that commit left it, so nobody else has committed since
// (walindex.go, ownChange). orch run asks for what other processes appended
// after the runner's last event as the run ends: usually nothing. When the
// writer is busy (or has never written the run) the store is read.
func (d *DB) noEventsAfter(runID string, seq int64) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed || d.unfinished.Load() > 0 || !d.committing.TryLock() {
		return false
	}
	defer d.committing.Unlock()
	rs := d.seqs[runID]
	if rs == nil || !rs.exists || rs.last > seq || !d.ownChange.known {
		return false
	}
	hdr, ok := d.walHeader()
	return ok && hdr == d.ownChange.hdr
}

// eventsWhere returns the run's events that match the condition.
func (d *DB) eventsWhere(ctx context.Context, runID, cond string, args ...any) ([]record.Event, error) {
	q, done := d.reader()
	defer done()
	rows, err := q.QueryContext(ctx, `SELECT seq, at, type, cue_id, agent_id, attempt, state, reason, data
		FROM events WHERE run_id = ? AND `+cond, append([]any{runID}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []record.Event
	for rows.Next() {
		ev := record.Event{RunID: runID}
		var at sql.NullInt64
		var data sql.NullString
		if err := rows.Scan(&ev.Seq, &at, &ev.Type, &ev.Cue, &ev.Agent, &ev.Attempt, &ev.State, &ev.Reason, &data); err != nil {
			return nil, err
		}
		ev.At = fromMicros(at)
		if data.Valid {
			ev.Data, _ = record.DecodeEventData(ev.Type, json.RawMessage(data.String)) // RawData keeps the error
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}

// EventsOfType returns the run's events of one type, in order. It reads
// the whole log of the run: for rare events (orch's own records about a
// run), not for the runner's.
func (d *DB) EventsOfType(ctx context.Context, runID, typ string) ([]record.Event, error) {
	events, err := d.eventsWhere(ctx, runID, `type = ? ORDER BY seq`, typ)
	if err != nil {
		return nil, fmt.Errorf("reading the %s events of run %s: %w", typ, runID, d.plain(err))
	}
	return events, nil
}

// Logs returns the run's output lines after afterID in order, at most limit
// of them (0: all), of one cue or, with cue "", of all.
func (d *DB) Logs(ctx context.Context, runID, cue string, afterID int64, limit int) ([]LogRecord, error) {
	if limit <= 0 {
		limit = -1
	}
	const cols = `SELECT ` + logColumns + ` FROM output `
	var rows *sql.Rows
	var err error
	if cue == "" {
		rows, err = d.sql.QueryContext(ctx, cols+`WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?`,
			runID, afterID, limit)
	} else { // the cue's lines, and its items' when it fanned out (CUE[...], between "CUE[" and "CUE\\")
		rows, err = d.sql.QueryContext(ctx, cols+`WHERE run_id = ?1 AND (cue_id = ?2 OR cue_id > ?3 AND cue_id < ?4) AND id > ?5 ORDER BY id LIMIT ?6`,
			runID, cue, cue+"[", cue+"\\", afterID, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the output of run %s: %w", runID, d.plain(err))
	}
	return d.scanLogs(rows, runID)
}

// logColumns are the columns scanLogs reads, in its order.
const logColumns = `id, cue_id, agent_id, attempt, stream, at, text`

// LogsTail returns the last n output lines of each of the run's cues (of
// one cue, when cue is not ""), in order, and the ID of the run's last line
// when it read them, after which orch logs --tail N --follow goes on. Every
// cue is cut apart, so one chatty cue does not push the others out.
func (d *DB) LogsTail(ctx context.Context, runID, cue string, n int) ([]LogRecord, int64, error) {
	var last int64
	err := d.sql.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM output WHERE run_id = ?`, runID).Scan(&last)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the output of run %s: %w", runID, d.plain(err))
	}
	var rows *sql.Rows
	if cue == "" {
		rows, err = d.sql.QueryContext(ctx, `SELECT `+logColumns+` FROM (
				SELECT *, row_number() OVER (PARTITION BY cue_id ORDER BY id DESC) AS back
				FROM output WHERE run_id = ? AND id <= ?)
			WHERE back <= ? ORDER BY id`, runID, last, n)
	} else { // the cue, and each of its items when it fanned out, cut apart
		rows, err = d.sql.QueryContext(ctx, `SELECT `+logColumns+` FROM (
				SELECT `+logColumns+` FROM (SELECT * FROM output WHERE run_id = ?1 AND cue_id = ?2 AND id <= ?5 ORDER BY id DESC LIMIT ?6)
				UNION ALL
				SELECT `+logColumns+` FROM (
					SELECT *, row_number() OVER (PARTITION BY cue_id ORDER BY id DESC) AS back
					FROM output WHERE run_id = ?1 AND cue_id > ?3 AND cue_id < ?4 AND id <= ?5)
				WHERE back <= ?6)
			ORDER BY id`, runID, cue, cue+"[", cue+"\\", last, n)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading the output of run %s: %w", runID, d.plain(err))
	}
	lines, err := d.scanLogs(rows, runID)
	return lines, last, err
}

// scanLogs reads rows of logColumns and closes them.
func (d *DB) scanLogs(rows *sql.Rows, runID string) ([]LogRecord, error) {
	defer rows.Close()
	var out []LogRecord
	for rows.Next() {
		l := LogRecord{LogLine: record.LogLine{RunID: runID}}
		var at sql.NullInt64
		if err := rows.Scan(&l.ID, &l.Cue, &l.Agent, &l.Attempt, &l.Stream, &at, &l.Text); err != nil {
			return nil, fmt.Errorf("reading the output of run %s: %w", runID, d.plain(err))
		}
		l.At = fromMicros(at)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the output of run %s: %w", runID, d.plain(err))
	}
	return out, nil
}
