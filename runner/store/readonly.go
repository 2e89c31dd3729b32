package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"
)

// ErrReadOnly is returned by the writing methods of a database opened with
// OpenReadOnly.
var ErrReadOnly = errors.New("the run database is open for reading only")

// ErrOlderSchema is wrapped by OpenReadOnly's error for a database an older
// orch wrote: it must be migrated, which only a command that writes does.
var ErrOlderSchema = errors.New("the database was written by an older orch")

// ErrNoTables is wrapped by OpenReadOnly's error for a database file that
// has no tables yet: created by an orch run that has not written its schema
// (or was killed before it did). It holds no runs.
var ErrNoTables = errors.New("the database has no runs yet")

// OpenReadOnly opens an existing run database for reading: the queries of
// orch status, events, logs, bb get and memory search. It never creates,
// migrates or writes the file, starts no writer, and works on a file this
// process cannot write (a read-only mount, another user's file). Its
// writing methods return ErrReadOnly.
func OpenReadOnly(path string) (*DB, error) {
	d, err := openReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("opening run database %s: %w", path, err)
	}
	return d, nil
}

func openReadOnly(path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("no path given")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, err
	}
	db, err := readOnlyPool(abs, false)
	if err != nil && primaryCode(err) == sqlite3.SQLITE_CANTOPEN {
		// Reading a WAL database takes its -shm file, which SQLite cannot
		// create in a directory nobody may write: then nobody can write the
		// database either, and it is read as an immutable file.
		db, err = readOnlyPool(abs, true)
	}
	if err != nil && sqliteCode(err) == sqlite3.SQLITE_READONLY_ROLLBACK {
		// A process was killed in the middle of a transaction on a file in
		// rollback-journal mode (an orch run killed while it created the
		// database): the journal must be played back before anyone reads,
		// which a read-only connection cannot do. Any SQLite reader that
		// may write the file does it; do the same, then read.
		if rerr := rollBackHotJournal(abs); rerr != nil {
			return nil, fmt.Errorf("%w; it holds the unfinished transaction of a process that was killed, and reading it "+
				"needs that rolled back, which failed (%v): a command that writes (orch resume) does it", plain(err, path), rerr)
		}
		db, err = readOnlyPool(abs, false)
	}
	if err != nil {
		return nil, plain(err, path)
	}
	// Its connections hold locks on the -shm file as well: the process's
	// descriptor of it stays open while this handle is (walindex_unix.go).
	return &DB{path: path, sql: db, readOnly: true, writing: writing{walIndex: useWalIndex(abs + "-shm")}}, nil
}

// rollBackHotJournal opens the file for writing just long enough for
// SQLite to play back its hot journal (the first read does it). It sets no
// journal mode and creates nothing: the file keeps what it committed.
func rollBackHotJournal(abs string) error {
	base, _, _ := strings.Cut(dsn(abs, "NORMAL", busyTimeout), "?")
	db, err := sql.Open("sqlite", base+fmt.Sprintf("?mode=rw&_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()))
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	return db.QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&n)
}

// readOnlyPool opens a pool of read-only connections and checks that the
// schema is one this orch reads.
func readOnlyPool(abs string, immutable bool) (*sql.DB, error) {
	db, err := sql.Open("sqlite", readOnlyDSN(abs, immutable))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
	if err := checkSchema(context.Background(), db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func readOnlyDSN(path string, immutable bool) string {
	q := []string{"mode=ro", fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()), "_pragma=temp_store(MEMORY)"}
	if immutable {
		q = append(q, "immutable=1")
	}
	base, _, _ := strings.Cut(dsn(path, "NORMAL", busyTimeout), "?")
	return base + "?" + strings.Join(q, "&")
}

// checkSchema reports whether this orch can read the database as it is,
// without migrating it.
func checkSchema(ctx context.Context, db *sql.DB) error {
	// One snapshot: an orch run migrating the file at this moment commits
	// its tables and its version together; two reads on the pool could see
	// the version from before and the tables from after.
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	version, err := schemaHeader(ctx, tx)
	if err != nil {
		return err
	}
	switch {
	case version == 0:
		if err := notOrch(ctx, tx); err != nil {
			return err
		}
		return fmt.Errorf("%w: it has no tables yet; a command that writes (orch run) creates them", ErrNoTables)
	case version < schemaVersion:
		return fmt.Errorf("%w: its schema version is %d, this orch reads %d; a command that writes (orch run, orch bb set) migrates it",
			ErrOlderSchema, version, schemaVersion)
	}
	return nil
}

func (d *DB) closeReadOnly() error {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		d.closed = true
		d.mu.Unlock()
		d.committing.Lock() // a query on the warm connection ends first
		defer d.committing.Unlock()
		var err error
		for _, st := range d.stmts {
			st.Close()
		}
		if d.wconn != nil {
			err = d.wconn.Close()
		}
		if cerr := d.sql.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		d.walIndex.close() // after the connections: see walindex_unix.go
		if err != nil {
			d.closeErr = fmt.Errorf("closing run database %s: %w", d.path, err)
		}
	})
	return d.closeErr
}
