package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// RunSummary is one line of `orch status`.
type RunSummary struct {
	ID        string
	Cuelist   string
	State     record.RunState
	Reason    string
	StartedAt time.Time
	EndedAt   time.Time // zero while the run has not ended
	Cues      int
	Completed int
	Failed    int
	Active    int // cues in warning, standby or go
	// The counts above are of the plan's cues, not of child tasks.
	OpenQuestions int          // questions waiting for an answer
	Used          record.Usage // what the agents reported they used
}

// ErrNoRuns says the database holds no run at all, so no reference to one
// can match.
var ErrNoRuns = errors.New("no runs recorded")

// NotFoundError says no run matches a reference.
type NotFoundError struct{ Ref string }

func (e *NotFoundError) Error() string {
	if e.Ref == "" {
		return "no run given"
	}
	return fmt.Sprintf("no run %q (orch status lists the runs)", e.Ref)
}

// AmbiguousError says a prefix matches several runs; Matches holds up to
// five of them, More says there are others.
type AmbiguousError struct {
	Ref     string
	Matches []string
	More    bool
}

func (e *AmbiguousError) Error() string {
	list := strings.Join(e.Matches, ", ")
	if e.More {
		list += ", …"
	}
	return fmt.Sprintf("run prefix %q is ambiguous: %s; give more characters", e.Ref, list)
}

// maxMatches is how many runs an AmbiguousError names.
const maxMatches = 5

// Runs returns the newest runs first, at most limit of them (0: all), and
// the number of runs in the database. Cues are counted for the runs returned
// only, so the cost follows limit, not the size of the database.
func (d *DB) Runs(ctx context.Context, limit int) ([]RunSummary, int, error) {
	runs, total, err := d.runs(ctx, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("listing the runs in %s: %w", d.path, d.plain(err))
	}
	return runs, total, nil
}

func (d *DB) runs(ctx context.Context, limit int) ([]RunSummary, int, error) {
	tx, done, err := d.readTx(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&total); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := tx.QueryContext(ctx, `
		WITH page AS (
			SELECT id, cuelist, state, reason, started_at, ended_at, owner_pid, owner_host, owner_token, heartbeat_at,
				cost_usd, input_tokens, output_tokens, credits FROM runs
			ORDER BY started_at DESC, id DESC LIMIT ?)
		SELECT p.id, p.cuelist, p.state, p.reason, p.started_at, p.ended_at,
			p.owner_pid, p.owner_host, p.owner_token, p.heartbeat_at, count(c.cue_id),
			coalesce(sum(c.state = 'completed'), 0), coalesce(sum(c.state = 'failed'), 0),
			coalesce(sum(c.state IN ('warning', 'standby', 'go')), 0),
			(SELECT count(*) FROM questions q WHERE q.run_id = p.id AND q.state = 'open'),
			p.cost_usd, p.input_tokens, p.output_tokens, p.credits
		FROM page p LEFT JOIN cues c ON c.run_id = p.id AND c.parent = ''
		GROUP BY p.id ORDER BY p.started_at DESC, p.id DESC`, limit)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []RunSummary
	lapsed := map[int]bool{} // running runs whose owner's lease lapsed
	for rows.Next() {
		var s RunSummary
		var started, ended, heartbeat sql.NullInt64
		var pid int
		var host, token string
		if err := rows.Scan(&s.ID, &s.Cuelist, &s.State, &s.Reason, &started, &ended, &pid, &host, &token, &heartbeat,
			&s.Cues, &s.Completed, &s.Failed, &s.Active, &s.OpenQuestions,
			&s.Used.CostUSD, &s.Used.InputTokens, &s.Used.OutputTokens, &s.Used.Credits); err != nil {
			return nil, 0, err
		}
		s.StartedAt, s.EndedAt = fromMicros(started), fromMicros(ended)
		if s.State == record.RunRunning && !alive(pid, host, token, fromMicros(heartbeat)) {
			s.State = record.RunInterrupted // its owner died: orch resume continues it
			lapsed[len(out)] = true
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	for i := range out { // after the rows: one statement at a time on tx
		if lapsed[i] {
			reason, onTemporal, err := unfollowed(ctx, tx, out[i].ID)
			if err != nil {
				return nil, 0, err
			}
			if onTemporal {
				out[i].State, out[i].Reason = record.RunRunning, reason
			}
		}
		if out[i].State == record.RunInterrupted && out[i].EndedAt.IsZero() {
			if out[i].EndedAt, err = lastEventAt(ctx, tx, out[i].ID); err != nil {
				return nil, 0, err
			}
		}
	}
	return out, total, nil
}

// ResolveRun turns what a person typed into a run id: a whole id, "last"
// (the most recently started run) or a unique prefix of an id. A whole id
// wins over "last", and "last" over a prefix.
func (d *DB) ResolveRun(ctx context.Context, ref string) (string, error) {
	id, err := d.resolveRun(ctx, ref)
	var nf *NotFoundError
	var amb *AmbiguousError
	if err != nil && !errors.Is(err, ErrNoRuns) && !errors.As(err, &nf) && !errors.As(err, &amb) {
		err = fmt.Errorf("finding run %q in %s: %w", ref, d.path, d.plain(err))
	}
	return id, err
}

func (d *DB) resolveRun(ctx context.Context, ref string) (string, error) {
	tx, done, err := d.readTx(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	var id string
	err = tx.QueryRowContext(ctx, `SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w in %s", ErrNoRuns, d.path)
	}
	if err != nil {
		return "", err
	}
	if ref == "" {
		return "", &NotFoundError{}
	}
	last := id
	var exact bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`, ref).Scan(&exact); err != nil {
		return "", err
	}
	switch {
	case exact:
		return ref, nil
	case ref == "last":
		return last, nil
	}
	// Every id with the prefix sorts in [ref, ref+"\xff"): 0xff never occurs
	// in UTF-8, and the range is a search of the primary key.
	rows, err := tx.QueryContext(ctx, `SELECT id FROM runs WHERE id >= ? AND id < ? ORDER BY id LIMIT ?`,
		ref, ref+"\xff", maxMatches+1)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var matches []string
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return "", err
		}
		if strings.HasPrefix(id, ref) {
			matches = append(matches, id)
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	switch len(matches) {
	case 0:
		return "", &NotFoundError{Ref: ref}
	case 1:
		return matches[0], nil
	}
	amb := &AmbiguousError{Ref: ref, Matches: matches}
	if len(matches) > maxMatches {
		amb.Matches, amb.More = matches[:maxMatches], true
	}
	return "", amb
}

// RunState returns a run's state as orch status shows it (a running run
// whose owner is gone reads interrupted), reading the run's row alone: for
// commands such as orch bb set that only need to know whether the run is
// still going.
func (d *DB) RunState(ctx context.Context, id string) (record.RunState, error) {
	var state record.RunState
	var pid int
	var host, token string
	var heartbeat sql.NullInt64
	err := d.sql.QueryRowContext(ctx, `SELECT state, owner_pid, owner_host, owner_token, heartbeat_at FROM runs WHERE id = ?`, id).
		Scan(&state, &pid, &host, &token, &heartbeat)
	if errors.Is(err, sql.ErrNoRows) {
		return "", &NotFoundError{Ref: id}
	}
	if err != nil {
		return "", fmt.Errorf("reading the state of run %s from %s: %w", id, d.path, d.plain(err))
	}
	if state == record.RunRunning && !alive(pid, host, token, fromMicros(heartbeat)) {
		_, onTemporal, err := unfollowed(ctx, d.sql, id)
		if err != nil {
			return "", fmt.Errorf("reading the state of run %s from %s: %w", id, d.path, d.plain(err))
		}
		if !onTemporal {
			state = record.RunInterrupted
		}
	}
	return state, nil
}
