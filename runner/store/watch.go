package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Watch tells whether anything was committed to the database, by any
// process, since it last looked: SQLite's PRAGMA data_version, which changes
// for a connection when another one commits. It only means something on the
// same connection each time, so a Watch holds one of its own, outside the
// DB's pool.
type Watch struct {
	pool *sql.DB
	conn *sql.Conn
	last int64
}

// Watch opens a connection (read-only) that watches the database for commits.
func (d *DB) Watch(ctx context.Context) (*Watch, error) {
	pool, err := sql.Open("sqlite", readOnlyDSN(d.path, false))
	if err != nil {
		return nil, err
	}
	pool.SetMaxOpenConns(1)
	conn, err := pool.Conn(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("watching %s: %w", d.path, d.plain(err))
	}
	w := &Watch{pool: pool, conn: conn, last: -1}
	return w, nil
}

// Changed reports whether a commit happened since the last call (true on
// the first).
func (w *Watch) Changed(ctx context.Context) (bool, error) {
	var v int64
	if err := w.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return true, err
	}
	changed := v != w.last
	w.last = v
	return changed, nil
}

// Close releases the watching connection.
func (w *Watch) Close() error {
	w.conn.Close()
	return w.pool.Close()
}
