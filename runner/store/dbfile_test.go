//go:build unix

package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenMakesFilesPrivate: a database file others may read (made before
// orch, or by an older one) is made 0600 on open, and so are its -wal and
// -shm files, those already there and those SQLite creates.
func TestOpenMakesFilesPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orch.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, d, "r1", "a")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-wal", nil, 0o644); err != nil { // an empty WAL: nothing to replay
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal"} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	startRun(t, d, "r2", "a")
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s has mode %04o after Open, want 0600", filepath.Base(p), m)
		}
	}
}

// TestOpenRefusesNonRegularFile: a path that is a device, a named pipe or a
// directory is refused before SQLite opens it, so nothing is left beside it
// (SQLite would create PATH-journal next to /dev/null).
func TestOpenRefusesNonRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, devNullJournal := os.Stat("/dev/null-journal")
	for _, tc := range []struct{ path, kind string }{
		{"/dev/null", "a character device"},
		{fifo, "a named pipe"},
		{dir, "a directory"},
	} {
		d, err := Open(tc.path, Options{})
		if err == nil {
			d.Close()
			t.Errorf("Open(%s) succeeded, want it refused", tc.path)
			continue
		}
		if want := "it is " + tc.kind + ", not a regular file"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("Open(%s) = %q, want it to name the path and say %q", tc.path, err, want)
		}
	}
	if _, err := os.Stat("/dev/null-journal"); err == nil && devNullJournal != nil {
		t.Errorf("Open(/dev/null) left /dev/null-journal behind")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("Open left files beside the named pipe: %v", entries)
	}
}
