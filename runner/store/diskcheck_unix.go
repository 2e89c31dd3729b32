//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fullBelow is the free space under which a failed write is taken for a
// full disk: SQLite says "disk I/O error", not "full", when it cannot even
// size its -shm file (32 KiB).
const fullBelow = 256 << 10

// whyUnwritable looks at the database's files and their disk, without
// opening any (closing a descriptor of a file would drop the locks this
// process's SQLite holds on it), for why SQLite could not write them: the
// disk full, or a file or the file system read-only. It returns how the
// error should say it, with the file it found so, or "" when it sees
// nothing wrong.
func whyUnwritable(path string) (problem, detail string) {
	dir := filepath.Dir(path)
	for _, p := range []string{path, path + "-wal", path + "-shm", dir} {
		err := unix.Access(p, unix.W_OK)
		switch {
		case errors.Is(err, unix.EROFS):
			return "read-only", fmt.Sprintf("%s is on a read-only file system", p)
		case errors.Is(err, unix.EPERM):
			return "read-only", fmt.Sprintf("%s cannot be changed: %v (an immutable file?)", p, err)
		case errors.Is(err, unix.EACCES):
			return "read-only", fmt.Sprintf("%s is not writable by this user", p)
		}
	}
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil {
		free := uint64(st.Bavail)
		if os.Geteuid() == 0 {
			free = uint64(st.Bfree) // root may use the blocks kept for it
		}
		if free*uint64(st.Bsize) < fullBelow {
			return "full", fmt.Sprintf("%d KiB free", free*uint64(st.Bsize)>>10)
		}
	}
	return "", ""
}
