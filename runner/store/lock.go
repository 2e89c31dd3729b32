package store

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Another process holding the database's write lock (a sqlite3 shell in a
// transaction, a backup, another orch suspended with Ctrl-Z in the middle
// of a commit) must neither hang orch nor keep it from ending. So the
// writer never waits inside SQLite for longer than lockPoll: it tries
// BEGIN IMMEDIATE again and again, letting go of its connection in between
// (a read on it, a signal, Abandon get their turn), for at most the lock
// timeout, then fails the batch with a *LockedError that names the holder.
// While it waits, nothing of the batch is committed, so nothing of it is
// acted on: a run's GOs pause, and its agents go on.

// DefaultLockTimeout is how long a write waits for another process's write
// lock before it fails (Options.LockTimeout, orch's --lock-timeout).
const DefaultLockTimeout = 10 * time.Second

// lockPoll is the busy timeout of the writer's connection: the longest one
// BEGIN IMMEDIATE waits inside SQLite before the writer looks again at
// what else goes on.
const lockPoll = 50 * time.Millisecond

// ErrLocked is matched (errors.Is) by the error of a write that found the
// database locked by another process for too long.
var ErrLocked = errors.New("the database is locked by another process")

// ErrAbandoned is the error of a write that was not committed because its
// process gave up on the database (Abandon).
var ErrAbandoned = errors.New("the write was given up: orch is ending without waiting for the database")

// LockedError is a write that could not take the database's write lock:
// another process (PID, when it can be found) held it for Waited.
type LockedError struct {
	Path   string
	PID    int           // the holder of the write lock; 0: not known
	Waited time.Duration // how long the write waited
	// Err is why the write stopped waiting before the lock timeout (its
	// caller gave up: the run was stopped); nil when the timeout passed.
	Err error
}

func (e *LockedError) Error() string {
	s := ErrLocked.Error()
	if e.PID > 0 {
		s += fmt.Sprintf(" (pid %d)", e.PID)
	}
	waited := e.Waited.Round(100 * time.Millisecond)
	if e.Err != nil {
		return fmt.Sprintf("%s: gave up waiting to write %s after %s: %v", s, e.Path, waited, e.Err)
	}
	return fmt.Sprintf("%s: no write to %s for %s", s, e.Path, waited)
}

func (e *LockedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// lockWait is since when the writer has found the write lock taken (unix
// ns; 0: it took the lock at its last try). Callers that stop waiting for
// their commit read it (wait).
type lockWait struct{ since atomic.Int64 }

// start notes that the lock was found taken at, unless it already was since
// an earlier time, and returns since when.
func (w *lockWait) start(at time.Time) time.Time {
	w.since.CompareAndSwap(0, at.UnixNano())
	return time.Unix(0, w.since.Load())
}

func (w *lockWait) end() {
	if w.since.Load() != 0 {
		w.since.Store(0)
	}
}

// waiting is since when the writer waits for the lock, and whether it does.
func (w *lockWait) waiting() (time.Time, bool) {
	n := w.since.Load()
	return time.Unix(0, n), n != 0
}

// lockedError is the error of a write that waited since for the lock.
func (d *DB) lockedError(since time.Time, cause error) *LockedError {
	return &LockedError{Path: d.path, PID: lockHolder(d.path), Waited: time.Since(since), Err: cause}
}

// Abandon gives up every write not yet committed, and every one after: they
// fail at once with ErrAbandoned, whatever holds the write lock. A run that
// ends because it cannot be recorded calls it, so that Close does not wait
// for the lock again.
func (d *DB) Abandon() {
	if d.readOnly {
		return
	}
	d.abandonOnce.Do(func() { close(d.abandoned) })
}

func (d *DB) isAbandoned() bool {
	select {
	case <-d.abandoned:
		return true
	default:
		return false
	}
}
