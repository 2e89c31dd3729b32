package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/orch-cli/orch/runner"
)

// blackboardWrite is a queued BlackboardWrite.
type blackboardWrite struct {
	runID, key, author string
	value              json.RawMessage
	at                 time.Time
}

type blackboardResult struct {
	version int64
	seq     int64
}

// BlackboardWrite stores a new version of key (1 for a new key) and the
// blackboard/updated event that announces it, in one transaction, and
// returns the version. Another process (a shell agent's `orch bb set`) may
// write the same run's board; versions stay contiguous per key.
func (d *DB) BlackboardWrite(ctx context.Context, runID, key string, value json.RawMessage, author string) (int64, error) {
	r := &request{kind: kindBlackboard, bb: blackboardWrite{runID: runID, key: key, author: author, value: value, at: now()}}
	err := func() error {
		switch {
		case runID == "":
			return errors.New("no run id")
		case key == "":
			return errors.New("the key is empty")
		case !json.Valid(value):
			return errors.New("the value is not valid JSON")
		}
		return d.do(ctx, r)
	}()
	if err != nil {
		return 0, fmt.Errorf("writing blackboard key %q of run %s: %w", key, runID, err)
	}
	return r.result.version, nil
}

func (t *txn) writeBlackboard(r *request) error {
	w := &r.bb
	seq, err := t.nextSeq(w.runID, false)
	if err != nil {
		return err
	}
	// max() alone in its SELECT is answered from the primary key's last entry.
	var last *int64
	err = t.queryRow(`SELECT (SELECT max(version) FROM blackboard WHERE run_id = ? AND key = ?)`,
		w.runID, w.key).Scan(&last)
	if err != nil {
		return err
	}
	version := int64(1)
	if last != nil {
		version = *last + 1
	}
	at := w.at.UnixMicro()
	_, err = t.exec(`INSERT INTO blackboard (run_id, key, version, value, author, at) VALUES (?, ?, ?, ?, ?, ?)`,
		w.runID, w.key, version, string(w.value), w.author, at)
	if err != nil {
		return err
	}
	data, err := json.Marshal(runner.BlackboardData{Key: w.key, Version: version})
	if err != nil {
		return err
	}
	ev := record{
		ev:  runner.Event{RunID: w.runID, At: w.at, Type: runner.EvBlackboard, Agent: w.author, Data: data},
		at:  at,
		seq: seq,
	}
	if err := t.insertEvent(&ev); err != nil {
		return err
	}
	r.result = blackboardResult{version: version, seq: seq}
	return nil
}

// BlackboardRead returns the latest version of key; false when the run's
// board does not have it.
func (d *DB) BlackboardRead(ctx context.Context, runID, key string) (runner.BlackboardEntry, bool, error) {
	row := d.sql.QueryRowContext(ctx, `SELECT key, value, version, author, at FROM blackboard
		WHERE run_id = ? AND key = ? ORDER BY version DESC LIMIT 1`, runID, key)
	e, err := scanEntry(row)
	if errors.Is(err, sql.ErrNoRows) {
		return runner.BlackboardEntry{}, false, nil
	}
	if err != nil {
		return runner.BlackboardEntry{}, false, fmt.Errorf("reading blackboard key %q of run %s: %w", key, runID, err)
	}
	return e, true, nil
}

// Blackboard returns the latest version of every key of the run's board.
func (d *DB) Blackboard(ctx context.Context, runID string) (map[string]runner.BlackboardEntry, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT key, value, version, author, at FROM blackboard b
		WHERE run_id = ? AND version = (SELECT max(version) FROM blackboard WHERE run_id = b.run_id AND key = b.key)`,
		runID)
	if err != nil {
		return nil, fmt.Errorf("reading the blackboard of run %s: %w", runID, err)
	}
	defer rows.Close()
	board := map[string]runner.BlackboardEntry{}
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("reading the blackboard of run %s: %w", runID, err)
		}
		board[e.Key] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the blackboard of run %s: %w", runID, err)
	}
	return board, nil
}

func scanEntry(s interface{ Scan(...any) error }) (runner.BlackboardEntry, error) {
	var e runner.BlackboardEntry
	var value string
	var at sql.NullInt64
	if err := s.Scan(&e.Key, &value, &e.Version, &e.Author, &at); err != nil {
		return e, err
	}
	e.Value = json.RawMessage(value)
	e.At = fromMicros(at)
	return e, nil
}
