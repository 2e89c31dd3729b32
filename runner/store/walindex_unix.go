//go:build unix

package store

import "syscall"

// walIndexFile is the -shm file, open to read its header.
type walIndexFile struct{ fd int }

func openWalIndex(path string) *walIndexFile {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return &walIndexFile{fd: fd}
}

// read fills b from the start of the file: a pread sees what SQLite writes
// through its mapping of the file (one page cache).
func (w *walIndexFile) read(b []byte) bool {
	n, err := syscall.Pread(w.fd, b, 0)
	return err == nil && n == len(b)
}

func (w *walIndexFile) close() {
	if w != nil {
		_ = syscall.Close(w.fd)
	}
}
