package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// A database file deleted under a live run (rm .orch/orch.db, rm -r .orch)
// still takes every commit: SQLite writes on into the unlinked file, and the
// run would end "completed" with nothing of it left, while every other orch
// command finds no runs. So the writing handle keeps the identity of the
// file it opened and checks, every fileCheckEvery and at every Flush, that
// the path still names it: when it does not, that is the handle's fault
// (fault.go), and every later write, Flush and Close return it.

// fileCheckEvery is how often a writing handle looks at its file's path.
const fileCheckEvery = 250 * time.Millisecond

// ErrGone is matched (errors.Is) by the fault of a handle whose database
// file was deleted or replaced while it was open.
var ErrGone = errors.New("the database file is gone")

// GoneError says that the database file a handle writes to was deleted, or
// replaced by another file, while the handle was open: what it wrote since
// is in no file anyone can open.
type GoneError struct {
	Path     string
	Replaced bool // another file has the path now
}

func (e *GoneError) Error() string {
	how := "was deleted"
	if e.Replaced {
		how = "was replaced by another file"
	}
	return fmt.Sprintf("the database %s %s while orch was writing to it: what this process recorded went with it", e.Path, how)
}

// Is makes errors.Is(err, ErrGone) hold.
func (e *GoneError) Is(target error) bool { return target == ErrGone }

// TruncatedError is the fault of a handle whose database file was cut
// below SQLite's header while it was open (SQLite itself notices only when a
// checkpoint reads a page that is gone, which may take a long while).
type TruncatedError struct {
	Path string
	Size int64
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("the database %s is damaged: it was truncated to %d bytes while orch was writing to it", e.Path, e.Size)
}

// Is makes errors.Is(err, ErrDamaged) hold.
func (e *TruncatedError) Is(target error) bool { return target == ErrDamaged }

// headerSize is the size of SQLite's database header: a file that had one
// and is shorter now was truncated.
const headerSize = 100

// checkFile makes the handle's fault a *GoneError when its path no longer
// names the file it opened, a *TruncatedError when the file lost its
// header; it returns the handle's fault.
func (d *DB) checkFile() error {
	if d.file == nil {
		return d.faulted()
	}
	st, err := os.Stat(d.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.setFault(&GoneError{Path: d.path})
	case err != nil:
	case !os.SameFile(st, d.file):
		d.setFault(&GoneError{Path: d.path, Replaced: true})
	case st.Size() >= headerSize:
		d.hadHeader.Store(true)
	case d.hadHeader.Load():
		d.setFault(&TruncatedError{Path: d.path, Size: st.Size()})
	}
	return d.faulted()
}
