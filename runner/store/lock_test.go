package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// openLockTest opens a database whose writes wait at most lockTimeout for
// another process's lock.
func openLockTest(t *testing.T, lockTimeout time.Duration) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orch.db")
	d, err := Open(path, Options{LockTimeout: lockTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Abandon(); d.Close() })
	return d, path
}

func noteEvent(runID string) record.Event {
	return record.Event{RunID: runID, Type: record.EvNote, Reason: "note"}
}

// TestLockTimeout: a write that finds the write lock held by another
// connection past the lock timeout fails with a *LockedError saying so;
// the writes queued behind it fail at their first try (the database is
// still locked), and once the lock is let go writes go through again.
func TestLockTimeout(t *testing.T) {
	d, path := openLockTest(t, 300*time.Millisecond)
	startRun(t, d, "r1", "A")
	release := holdWriteLock(t, path)
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- d.Append(context.Background(), noteEvent("r1")) }()
	}
	for range 3 {
		select {
		case err := <-errs:
			var le *LockedError
			if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
				t.Fatalf("a write with the lock held: %v, want a *LockedError", err)
			}
			if !strings.Contains(err.Error(), "the database is locked by another process") || !strings.Contains(err.Error(), path) {
				t.Errorf("the error says %q", err)
			}
		case <-time.After(30 * time.Second): // a hang guard
			t.Fatal("a write waited for the lock far past the lock timeout")
		}
	}
	release()
	appendOK(t, d, noteEvent("r1"))
}

// TestLockWaitGivenUp: a caller that stops waiting for a commit held up by
// another process's lock gets a *LockedError carrying its reason, and a
// read on the writer's connection is not held up meanwhile.
func TestLockWaitGivenUp(t *testing.T) {
	d, path := openLockTest(t, time.Minute)
	startRun(t, d, "r1", "A")
	release := holdWriteLock(t, path)
	defer release()
	stop := errors.New("the run was stopped")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Append(ctx, noteEvent("r1")) }()
	waitFor(t, "the writer to wait for the lock", func() bool { _, ok := d.lockWait.waiting(); return ok })
	if _, err := d.Blackboard(context.Background(), "r1"); err != nil { // on the writer's connection
		t.Fatal(err)
	}
	cancel(stop)
	select {
	case err := <-done:
		if !errors.Is(err, ErrLocked) || !errors.Is(err, stop) {
			t.Fatalf("the given-up write returned %v, want a *LockedError saying why", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the write did not end when its caller gave up")
	}
}

// TestAbandon: Abandon ends the writer's wait for the lock at once, and
// Close does not wait for the lock again.
func TestAbandon(t *testing.T) {
	d, path := openLockTest(t, time.Minute)
	startRun(t, d, "r1", "A")
	release := holdWriteLock(t, path)
	defer release()
	d.Log(record.LogLine{RunID: "r1", Cue: "A", Agent: "A-agent", Attempt: 1, Stream: "stdout", Text: "queued"})
	waitFor(t, "the writer to wait for the lock", func() bool { _, ok := d.lockWait.waiting(); return ok })
	closed := make(chan error, 1)
	go func() { d.Abandon(); closed <- d.Close() }()
	select {
	case err := <-closed:
		if !errors.Is(err, ErrAbandoned) {
			t.Errorf("Close after Abandon: %v, want the lost line's ErrAbandoned", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for the lock after Abandon")
	}
}

// TestFileGone: the database file deleted, or replaced by another, under
// an open handle is the handle's fault: Flush says so at once, and so does
// every write after.
func TestFileGone(t *testing.T) {
	for _, replace := range []bool{false, true} {
		d, path := openLockTest(t, time.Minute)
		startRun(t, d, "r1", "A")
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if replace {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		err := d.Flush(context.Background())
		var ge *GoneError
		if !errors.As(err, &ge) || ge.Replaced != replace || !errors.Is(err, ErrGone) {
			t.Fatalf("Flush after the file was removed (replaced %v): %v", replace, err)
		}
		if err := d.Append(context.Background(), noteEvent("r1")); !errors.Is(err, ErrGone) {
			t.Errorf("a write after: %v, want ErrGone", err)
		}
	}
}

// TestFileGoneNoticed: a handle notices without any Flush, within a few
// checks.
func TestFileGoneNoticed(t *testing.T) {
	d, path := openLockTest(t, time.Minute)
	startRun(t, d, "r1", "A")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the handle to notice", func() bool { return errors.Is(d.faulted(), ErrGone) })
}

// TestFileTruncated: the database file cut below SQLite's header under an
// open handle is its fault at once: the database is damaged.
func TestFileTruncated(t *testing.T) {
	d, path := openLockTest(t, time.Minute)
	startRun(t, d, "r1", "A")
	d.checkpoint(d.sql) // the header is in the file now
	if err := d.checkFile(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(context.Background()); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "truncated to 0 bytes") {
		t.Fatalf("Flush after the file was truncated: %v, want it to say the database is damaged", err)
	}
}

// TestNewConnectionAfterTruncation: a connection the pool opens after the
// file was cut under the handle (a read while the writer commits, the first
// of a short run's that needs one) says at once that the database is
// damaged. SQLite itself retries opening such a file for about ten seconds
// and then answers a protocol or I/O error, which let a run go on that long
// after its database was damaged.
func TestNewConnectionAfterTruncation(t *testing.T) {
	d, path := openLockTest(t, 10*time.Second)
	startRun(t, d, "r1", "A")
	d.checkpoint(d.wconn) // the header is in the file now, and no pooled connection is open
	if err := d.checkFile(); err != nil {
		t.Fatal(err)
	}
	if open := d.sql.Stats().OpenConnections; open != 1 {
		t.Fatalf("%d connections open, want the writer's alone", open)
	}
	if err := errors.Join(os.Truncate(path+"-wal", 0), os.Truncate(path, 0)); err != nil {
		t.Fatal(err)
	}
	d.committing.Lock() // a commit in progress: the read takes a new connection
	defer d.committing.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	if _, err := d.Events(ctx, "r1", 0, 0); !errors.Is(err, ErrDamaged) {
		t.Fatalf("a read on a new connection after the file was truncated: %v, want it to say the database is damaged", err)
	}
}
