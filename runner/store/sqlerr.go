package store

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's errors are told apart by their result codes, never by their
// text: the driver's *sqlite.Error carries the extended code (the primary
// code is its low byte).

// sqliteCode is err's extended SQLite result code, or 0 for another error.
func sqliteCode(err error) int {
	if err == nil { // the usual case, asked of every commit: no allocation for errors.As
		return 0
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

// primaryCode is err's primary SQLite result code (SQLITE_BUSY,
// SQLITE_CORRUPT, ...), or 0 for another error.
func primaryCode(err error) int { return sqliteCode(err) & 0xff }

// isUniqueViolation: err is a UNIQUE or PRIMARY KEY constraint failing.
func isUniqueViolation(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// isForeignKeyViolation: err is a FOREIGN KEY constraint failing.
func isForeignKeyViolation(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// ErrDamaged is matched (errors.Is) by the error of any read or write that
// found the database file damaged: not a database, or malformed.
var ErrDamaged = errors.New("the database is damaged")

// FileError is an SQLite error that is about the database file or the disk
// under it rather than about orch's data: its message says so plainly and
// names the file ("the database /p/orch.db is damaged: ...").
type FileError struct {
	Path string
	Err  error // the driver's error
	// Problem is what a look at the files found for an I/O error or a file
	// SQLite could not open ("full", "read-only"; "": nothing), and Detail
	// what it saw.
	Problem, Detail string
}

func (e *FileError) Error() string {
	var problem string
	switch code := primaryCode(e.Err); {
	case code == sqlite3.SQLITE_FULL || e.Problem == "full":
		problem = "the disk holding the database %s is full"
	case code == sqlite3.SQLITE_READONLY || e.Problem == "read-only":
		problem = "the database %s is read-only"
	case code == sqlite3.SQLITE_CORRUPT, code == sqlite3.SQLITE_NOTADB:
		problem = "the database %s is damaged"
	case code == sqlite3.SQLITE_IOERR:
		problem = "the database %s could not be read or written (I/O error)"
	default:
		problem = "the database %s cannot be opened"
	}
	msg := fmt.Sprintf(problem, e.Path)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrDamaged) hold for a damaged file.
func (e *FileError) Is(target error) bool {
	return target == ErrDamaged && isDamage(e.Err)
}

func isDamage(err error) bool {
	c := primaryCode(err)
	return c == sqlite3.SQLITE_CORRUPT || c == sqlite3.SQLITE_NOTADB
}

// plain wraps err in a *FileError when its SQLite code says that the disk
// or the file failed; any other error (nil too) is returned as it is. An
// error already wrapped is not wrapped again.
func plain(err error, path string) error {
	var fe *FileError
	if err == nil || errors.As(err, &fe) {
		return err
	}
	switch primaryCode(err) {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return &FileError{Path: path, Err: err}
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		// SQLite's words for these ("disk I/O error", "unable to open
		// database file") do not say that the disk is full or the file
		// read-only: a look at the files may.
		fe := &FileError{Path: path, Err: err}
		fe.Problem, fe.Detail = whyUnwritable(path)
		return fe
	}
	return err
}

// plain is the package function for this database's file. An I/O error is
// often how SQLite first meets a file cut under it (a short read, before the
// periodic look at the file): a look now tells "damaged" from a disk's fault.
func (d *DB) plain(err error) error {
	if primaryCode(err) == sqlite3.SQLITE_IOERR {
		var cut *TruncatedError
		if errors.As(d.checkFile(), &cut) {
			return cut
		}
	}
	return plain(err, d.path)
}
