package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The run database holds agents' output and the blackboard, which may be
// secret: it and the -wal and -shm files beside it are 0600, in a 0700
// directory when orch makes it.

// createFile makes the parent directory (0700) and the database file (0600)
// before SQLite sees them: SQLite would create the file with the umask's
// mode, and it gives the -wal and -shm files the database file's mode. A
// file that is already there must be a regular file (SQLite would open a
// device or a FIFO and leave a PATH-journal beside it), and one that others
// may read is made 0600 (with its -wal and -shm), or refused when orch
// cannot change its mode.
func createFile(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		f, cerr := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if cerr == nil {
			return f.Close()
		}
		if !errors.Is(cerr, fs.ErrExist) {
			return cerr
		}
		fi, err = os.Stat(path) // another process made it just now
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("it is %s, not a regular file: orch keeps its runs in a regular file (and creates %s-wal and %s-shm beside it)",
			kind(fi.Mode()), filepath.Base(path), filepath.Base(path))
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := private(p); err != nil {
			return err
		}
	}
	return nil
}

// creationError says what createFile's error means for the database: the
// disk full, or the file or its directory read-only, as SQLite's errors do
// (sqlerr.go).
func creationError(path string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("the disk holding the database %s is full: %w", path, err)
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("the database %s is read-only: %w", path, err)
	}
	return err
}

// private makes a file of the database 0600 if others may read or write it;
// a file that does not exist is fine.
func private(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 == 0 || !fi.Mode().IsRegular() {
		return nil
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("%s may be read by others (mode %04o) and orch cannot make it private: %w (its owner can run chmod 600 %s)",
			path, fi.Mode().Perm(), err, path)
	}
	return nil
}

// kind names what a file that is not a regular file is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}
