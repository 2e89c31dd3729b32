package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// blackboardWrite is a queued group of blackboard writes to one run, in
// order; at is when they were queued (each write's time).
type blackboardWrite struct {
	runID string
	puts  []record.BlackboardPut
	at    time.Time
}

// blackboardResult is what the writer filled in: each put's version.
type blackboardResult struct {
	written []record.BlackboardWritten
}

// maxPutsPerRequest caps the writes of one queued request: a larger group is
// queued as several requests at once, so that no single request exceeds the
// writer's batch (each write is two rows: the value and its event).
const maxPutsPerRequest = maxBatch / 4

// BlackboardWrite stores a new version of key (1 for a new key) and the
// blackboard/updated event that announces it, in one transaction, and
// returns the version. Another process (a shell agent's `orch bb set`) may
// write the same run's board; versions stay contiguous per key.
func (d *DB) BlackboardWrite(ctx context.Context, runID, key string, value json.RawMessage, author string) (int64, error) {
	written, err := d.BlackboardWriteMany(ctx, runID, []record.BlackboardPut{{Key: key, Value: value, Author: author}})
	if err != nil {
		return 0, err
	}
	return written[0].Version, nil
}

// BlackboardWriteMany stores several writes in order, each a new version of
// its key and a blackboard/updated event (Cue, Attempt and Agent = Author of
// the put; Data: key, version, message id). They are all queued before the
// first is waited for, so the group-commit writer puts them in as few
// transactions as it can. It returns each write's version and event. A put that is
// malformed (no key, a value that is not JSON) stops the group there: the
// writes before it are stored and returned with the error.
func (d *DB) BlackboardWriteMany(ctx context.Context, runID string, puts []record.BlackboardPut) ([]record.BlackboardWritten, error) {
	valid := len(puts)
	var bad error
	for i, p := range puts {
		if err := checkPut(runID, p); err != nil {
			valid, bad = i, fmt.Errorf("writing blackboard key %q of run %s: %w", p.Key, runID, d.plain(err))
			break
		}
	}
	at := now()
	var reqs []*request
	for start := 0; start < valid; start += maxPutsPerRequest {
		end := min(start+maxPutsPerRequest, valid)
		r := &request{kind: kindBlackboard, bb: blackboardWrite{runID: runID, puts: puts[start:end], at: at}, done: make(chan error, 1)}
		if err := d.send(ctx, r); err != nil {
			bad = fmt.Errorf("writing the blackboard of run %s: %w", runID, d.plain(err))
			break
		}
		reqs = append(reqs, r)
	}
	written := make([]record.BlackboardWritten, 0, valid)
	for _, r := range reqs {
		if err := d.wait(ctx, r); err != nil {
			// The writes of the requests after this one may be stored
			// too, but the caller learns of the first failure only.
			return written, fmt.Errorf("writing the blackboard of run %s: %w", runID, d.plain(err))
		}
		written = append(written, r.result.written...)
	}
	return written, bad
}

func checkPut(runID string, p record.BlackboardPut) error {
	switch {
	case runID == "":
		return errors.New("no run id")
	case p.Key == "":
		return errors.New("the key is empty")
	case !json.Valid(p.Value):
		return errors.New("the value is not valid JSON")
	}
	return nil
}

// writeBlackboard stores a request's writes: every version in
// blackboard_history, the latest of each key in blackboard. The latest
// version of each key is read once per transaction and then counted up in
// t.bbVersions: the transaction holds the write lock, so no other process
// can write between.
func (t *txn) writeBlackboard(r *request) error {
	w := &r.bb
	delete(t.d.boards, w.runID)
	at := w.at.UnixMicro()
	if err := t.loadVersions(w.runID, w.puts); err != nil {
		return err
	}
	r.result.written = make([]record.BlackboardWritten, 0, len(w.puts))
	for i := range w.puts {
		p := &w.puts[i]
		seq, err := t.nextSeq(w.runID, false)
		if err != nil {
			return err
		}
		k := [2]string{w.runID, p.Key}
		if cur := t.bbVersions[k]; p.Conflicts(cur.version) {
			// A fenced write that lost the race: nothing is written, and
			// the refusal is recorded in the same transaction.
			data := record.BlackboardConflictData{Key: p.Key, ExpectedVersion: *p.IfVersion, CurrentVersion: cur.version,
				Author: cur.author, MessageID: p.MessageID}
			ev, err := t.boardEvent(w, p, seq, record.EvBlackboardConflict, data)
			if err != nil {
				return err
			}
			r.result.written = append(r.result.written, record.BlackboardWritten{Version: cur.version, Author: cur.author, Conflict: true, Event: ev})
			continue
		}
		version := t.bbVersions[k].version + 1
		t.bbVersions[k] = bbLatest{version: version, author: p.Author}
		t.bbRows = append(t.bbRows, bbRow{key: p.Key, version: version, value: string(p.Value), author: p.Author})
		ev, err := t.boardEvent(w, p, seq, record.EvBlackboard, record.BlackboardData{Key: p.Key, Version: version, MessageID: p.MessageID})
		if err != nil {
			return err
		}
		r.result.written = append(r.result.written, record.BlackboardWritten{Version: version, Author: p.Author, Event: ev})
	}
	return t.flushBlackboard(w.runID, at)
}

// boardEvent queues the event of one blackboard write (or refusal).
func (t *txn) boardEvent(w *blackboardWrite, p *record.BlackboardPut, seq int64, typ string, data record.EventData) (record.Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return record.Event{}, err
	}
	ev := record.Event{RunID: w.runID, Seq: seq, At: w.at, Type: typ, Cue: p.Cue, Agent: p.Author, Attempt: p.Attempt, Data: data}
	t.rows = append(t.rows, &prepared{ev: ev, at: w.at.UnixMicro(), data: string(raw), seq: seq})
	return ev, nil
}

// bbLatest is a key's latest version and its author.
type bbLatest struct {
	version int64
	author  string
}

// loadVersions reads the latest version of the keys of puts that this
// transaction has not seen yet, with one query for all of them rather than
// one per key.
func (t *txn) loadVersions(runID string, puts []record.BlackboardPut) error {
	if t.bbVersions == nil {
		t.bbVersions = map[[2]string]bbLatest{}
	}
	var missing []string
	seen := map[string]bool{}
	for _, p := range puts {
		if _, ok := t.bbVersions[[2]string{runID, p.Key}]; !ok && !seen[p.Key] {
			seen[p.Key] = true
			missing = append(missing, p.Key)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	for _, k := range missing {
		t.bbVersions[[2]string{runID, k}] = bbLatest{} // a new key, unless the board has it
	}
	keys, err := json.Marshal(missing)
	if err != nil {
		return err
	}
	st, err := t.stmt(`SELECT key, version, author FROM blackboard WHERE run_id = ? AND key IN (SELECT value FROM json_each(?))`)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(t.ctx, runID, string(keys))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var latest bbLatest
		if err := rows.Scan(&key, &latest.version, &latest.author); err != nil {
			return err
		}
		t.bbVersions[[2]string{runID, key}] = latest
	}
	return rows.Err()
}

// bbRow is a blackboard write waiting for flushBlackboard.
type bbRow struct {
	key, value, author string
	version            int64
}

// bbChunks are the row counts of the prepared multi-row INSERTs.
var bbChunks = []int{32, 8, 1}

const (
	insertHistoryPrefix = "INSERT INTO blackboard_history (run_id, key, version, value, author, at) VALUES "
	upsertLatestPrefix  = "INSERT INTO blackboard (run_id, key, version, value, author, at) VALUES "
	upsertLatestSuffix  = ` ON CONFLICT (run_id, key) DO UPDATE SET version = excluded.version, value = excluded.value,
		author = excluded.author, at = excluded.at`
)

// flushBlackboard writes the gathered writes of one run, a few multi-row
// statements rather than one per write: all of them to the history, and the
// last of each key to the latest versions.
func (t *txn) flushBlackboard(runID string, at int64) error {
	rows := t.bbRows
	t.bbRows = t.bbRows[:0]
	if err := t.insertBB(insertHistoryPrefix, "", runID, at, rows); err != nil {
		return err
	}
	// Keep the last write of each key, in the order the keys came.
	last := make(map[string]int, len(rows))
	latest := make([]bbRow, 0, len(rows))
	for _, b := range rows {
		if i, ok := last[b.key]; ok {
			latest[i] = b
			continue
		}
		last[b.key] = len(latest)
		latest = append(latest, b)
	}
	return t.insertBB(upsertLatestPrefix, upsertLatestSuffix, runID, at, latest)
}

func (t *txn) insertBB(prefix, suffix, runID string, at int64, rows []bbRow) error {
	for len(rows) > 0 {
		n := 1
		for _, c := range bbChunks {
			if c <= len(rows) {
				n = c
				break
			}
		}
		args := make([]any, 0, 1+n*5)
		args = append(args, runID) // bound once: see insertRowsSQL
		for _, b := range rows[:n] {
			args = append(args, b.key, b.version, b.value, b.author, at)
		}
		if _, err := t.exec(t.d.insertRowsSQL(prefix, suffix, 6, n), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// BlackboardRead returns the latest version of key; false when the run's
// board does not have it.
func (d *DB) BlackboardRead(ctx context.Context, runID, key string) (record.BlackboardEntry, bool, error) {
	var e record.BlackboardEntry
	found := false
	err := d.withWarm(func() error {
		return d.queryWarm(ctx, `SELECT key, value, version, author, at FROM blackboard WHERE run_id = ? AND key = ?`,
			[]any{runID, key}, func(rows *sql.Rows) error {
				var err error
				e, err = scanEntry(rows)
				found = err == nil
				return err
			})
	})
	if err != nil {
		return record.BlackboardEntry{}, false, fmt.Errorf("reading blackboard key %q of run %s: %w", key, runID, d.plain(err))
	}
	return e, found, nil
}

// Blackboard returns the latest version of every key of the run's board,
// another process's writes included. A run reads its board for every task
// it hands out; while nobody has written the database since the board was
// last read (the WAL index's change counter says so, see walindex.go; else
// PRAGMA data_version on the warm connection, which changes exactly when
// another connection commits; this handle's own board writes drop it), the
// board comes from memory instead of a query of every key.
func (d *DB) Blackboard(ctx context.Context, runID string) (map[string]record.BlackboardEntry, error) {
	var board map[string]record.BlackboardEntry
	err := d.withWarm(func() error {
		if c, ok := d.boards[runID]; ok && c.fresh {
			if change, ok := d.walChange(); ok && change == c.change {
				board = maps.Clone(c.board)
				return nil
			}
		}
		// The counter before the read: a commit after it makes it move.
		change, fresh := d.walChange()
		var version int64
		err := d.queryWarm(ctx, "PRAGMA data_version", nil, func(rows *sql.Rows) error { return rows.Scan(&version) })
		if err != nil {
			return err
		}
		if c, ok := d.boards[runID]; ok && c.version == version {
			board = maps.Clone(c.board)
		} else if board, err = d.readBoard(ctx, runID); err != nil {
			return err
		}
		if d.boards == nil || len(d.boards) >= maxBoards {
			d.boards = map[string]cachedBoard{}
		}
		d.boards[runID] = cachedBoard{version: version, board: maps.Clone(board), change: change, fresh: fresh}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the blackboard of run %s: %w", runID, d.plain(err))
	}
	return board, nil
}

// cachedBoard is a run's board as read at a data_version of the warm
// connection; fresh: and at the WAL index's change counter change, through
// this handle's commits since (see boardsAfterCommit).
type cachedBoard struct {
	version int64
	board   map[string]record.BlackboardEntry
	change  uint32
	fresh   bool
}

// maxBoards caps the boards kept: a process runs one run at a time, a test
// many.
const maxBoards = 16

// readBoard reads the run's board on the writer's connection; the caller
// holds it (withWarm).
func (d *DB) readBoard(ctx context.Context, runID string) (map[string]record.BlackboardEntry, error) {
	board := map[string]record.BlackboardEntry{}
	err := d.queryWarm(ctx, `SELECT key, value, version, author, at FROM blackboard WHERE run_id = ?`,
		[]any{runID}, func(rows *sql.Rows) error {
			e, err := scanEntry(rows)
			board[e.Key] = e
			return err
		})
	return board, err
}

// withWarm runs read while holding the writer's connection, for queryWarm,
// or returns ErrClosed.
func (d *DB) withWarm(read func() error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	d.committing.Lock()
	defer d.committing.Unlock()
	return read()
}

// queryWarm runs a query on the writer's connection, which the caller holds,
// and calls each for each row. That connection's page cache holds what the
// writer just wrote, where a pooled connection would read the pages again
// from the file after every commit; a run reads its board for conditions,
// jsonl GOs and blackboard.read. The query waits for a commit in progress,
// and sees the latest one (another process's too).
func (d *DB) queryWarm(ctx context.Context, query string, args []any, each func(*sql.Rows) error) error {
	st, err := d.prepared(ctx, query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func scanEntry(s interface{ Scan(...any) error }) (record.BlackboardEntry, error) {
	var e record.BlackboardEntry
	var value string
	var at sql.NullInt64
	if err := s.Scan(&e.Key, &value, &e.Version, &e.Author, &at); err != nil {
		return e, err
	}
	e.Value = json.RawMessage(value)
	e.At = fromMicros(at)
	return e, nil
}
