package store

import (
	"context"
	"database/sql"
)

// A handle that writes keeps one connection for its writes (writeConn). Its
// reads take that connection too while the writer is idle, rather than a
// second connection from the pool: opening one costs a process about a
// millisecond of CPU (the DSN's pragmas read the whole schema), which every
// short orch run paid only to show its last events and its verdict; and the
// write connection's page cache holds what was just written. A read that
// would make a commit wait (one is queued or in progress) goes to the pool,
// as every read of a handle that has not written does.

// readConn is what a read runs on: the pool or the write connection.
type readConn interface {
	querier
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// reader returns what a read runs on and the function to call when the
// read is over (its rows closed).
func (d *DB) reader() (readConn, func()) {
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
