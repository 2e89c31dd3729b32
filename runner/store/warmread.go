package store

import (
	"context"
	"database/sql"
)

// A handle that writes keeps one connection for its writes (writeConn).
// While the pool holds no idle connection, its reads take that connection
// too if the writer is idle, rather than have the pool open a second one:
// opening one costs a process about a millisecond of CPU (the DSN's pragmas
// read the whole schema), which every short orch run paid only to show its
// last events and its verdict. A read that would make a commit wait (one is
// queued or in progress) goes to the pool, as every read does once the pool
// has a connection (the first checkpoint's, 100 ms after the first commit,
// or a read's that found the writer busy): a process that has been at work
// for a while never holds up its commits for a read. The pool's new
// connections look at the file first (connector.go).

// readConn is what a read runs on: the pool or the write connection.
type readConn interface {
	querier
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// reader returns what a read runs on and the function to call when the
// read is over (its rows closed).
func (d *DB) reader() (readConn, func()) {
	if d.sql.Stats().Idle > 0 {
		return d.sql, func() {}
	}
	d.mu.RLock()
	if d.closed || d.unfinished.Load() > 0 || !d.committing.TryLock() {
		d.mu.RUnlock()
		return d.sql, func() {}
	}
	if d.wconn == nil || d.unfinished.Load() > 0 {
		d.committing.Unlock()
		d.mu.RUnlock()
		return d.sql, func() {}
	}
	return d.wconn, func() {
		d.committing.Unlock()
		d.mu.RUnlock()
	}
}

// readTx begins a read transaction: a consistent snapshot that does not take
// the write lock (_txlock=immediate applies to read-write transactions
// only). done ends it.
func (d *DB) readTx(ctx context.Context) (tx *sql.Tx, done func(), err error) {
	q, release := d.reader()
	tx, err = q.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		release()
		return nil, nil, err
	}
	return tx, func() {
		tx.Rollback()
		release()
	}, nil
}
