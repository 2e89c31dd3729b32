//go:build unix

package store

import (
	"sync"
	"syscall"
)

// The -shm file is read through a descriptor of orch's own, outside SQLite's
// VFS, and closing any descriptor of a file drops every POSIX lock the
// process holds on it — SQLite's too (its unix VFS keeps its descriptors
// open for that reason). A connection whose locks went could see another
// process reset the WAL index under it. So the process opens one descriptor
// per -shm file, shared by all its handles on that database, and closes it
// only once none of them is open: after the last one has closed its SQLite
// connections.
var shmFiles = struct {
	sync.Mutex
	byPath map[string]*shmFile
}{byPath: map[string]*shmFile{}}

// shmFile is one -shm file's descriptor and the handles using it.
type shmFile struct {
	path  string
	fd    int // -1 until a board read opens it
	ino   uint64
	users int
}

// walIndexFile is a handle's use of its database's -shm file.
type walIndexFile struct{ f *shmFile }

// useWalIndex registers a handle on the database whose -shm file is path
// (absolute). A database deleted and made again at the path has another
// -shm file: a handle on it does not share the old one's descriptor.
func useWalIndex(path string) *walIndexFile {
	shmFiles.Lock()
	defer shmFiles.Unlock()
	f := shmFiles.byPath[path]
	if f != nil && f.fd >= 0 {
		var st syscall.Stat_t
		if syscall.Stat(path, &st) != nil || uint64(st.Ino) != f.ino {
			f = nil
		}
	}
	if f == nil {
		f = &shmFile{path: path, fd: -1}
		shmFiles.byPath[path] = f
	}
	f.users++
	return &walIndexFile{f: f}
}

// read fills b from the start of the file: a pread sees what SQLite writes
// through its mapping of the file (one page cache).
func (w *walIndexFile) read(b []byte) bool {
	if w == nil || w.f == nil {
		return false
	}
	fd := w.fd()
	if fd < 0 {
		return false
	}
	n, err := syscall.Pread(fd, b, 0)
	return err == nil && n == len(b)
}

// fd opens the file on first use.
func (w *walIndexFile) fd() int {
	shmFiles.Lock()
	defer shmFiles.Unlock()
	f := w.f
	if f.fd < 0 {
		fd, err := syscall.Open(f.path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return -1
		}
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil {
			_ = syscall.Close(fd)
			return -1
		}
		f.fd, f.ino = fd, uint64(st.Ino)
	}
	return f.fd
}

// close ends the handle's use, after it has closed its SQLite connections;
// the last one closes the descriptor.
func (w *walIndexFile) close() {
	shmFiles.Lock()
	defer shmFiles.Unlock()
	if w == nil || w.f == nil { // none, or closed already
		return
	}
	f := w.f
	w.f = nil
	if f.users--; f.users > 0 {
		return
	}
	if f.fd >= 0 {
		_ = syscall.Close(f.fd)
	}
	if shmFiles.byPath[f.path] == f {
		delete(shmFiles.byPath, f.path)
	}
}

// opened reports whether the file is open (a board was read).
func (w *walIndexFile) opened() bool {
	shmFiles.Lock()
	defer shmFiles.Unlock()
	return w != nil && w.f != nil && w.f.fd >= 0
}
