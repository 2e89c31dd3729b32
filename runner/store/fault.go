package store

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A run must never go on as if recorded when its database can no longer be
// written or read back: a file truncated or overwritten under a live run
// still takes commits (SQLite appends them to the WAL, and the pages the
// writer needs are in its cache) but its checkpoints fail. So the first such
// failure, of a checkpoint or of any commit that finds the file damaged, is
// the handle's fault: every later write returns it, and so do Flush and
// Close.

// setFault records the handle's first fault.
func (d *DB) setFault(err error) {
	d.faultMu.Lock()
	defer d.faultMu.Unlock()
	if d.fault == nil {
		d.fault = err
	}
}

// faulted is the handle's fault, or nil.
func (d *DB) faulted() error {
	d.faultMu.Lock()
	defer d.faultMu.Unlock()
	return d.fault
}

// checkpointFailed says whether a checkpoint's error is a fault: a busy
// database only postpones a checkpoint.
func checkpointFailed(err error) bool {
	switch primaryCode(err) {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return false
	}
	return err != nil && !errors.Is(err, context.DeadlineExceeded)
}

// Diagnose says what is wrong with the damaged database at path, whose
// read or write failed with err: what SQLite's quick_check finds, through a
// connection of its own, or else err's own SQLite message.
func Diagnose(path string, err error) string {
	if found, qerr := quickCheck(path); qerr == nil && found != "" {
		return found
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Error()
	}
	return err.Error()
}

// quickCheck runs PRAGMA quick_check and returns its first findings ("":
// none).
func quickCheck(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	// Read-only, and none of dsn's pragmas: a look must not write to a
	// damaged file.
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath()+"?mode=ro")
	if err != nil {
		return "", err
	}
	defer db.Close()
	rows, err := db.Query("PRAGMA quick_check(3)")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		if line != "ok" {
			line = strings.ReplaceAll(strings.TrimPrefix(line, "*** in database main ***\n"), "\n", "; ")
			found = append(found, line)
		}
	}
	return strings.Join(found, "; "), rows.Err()
}
