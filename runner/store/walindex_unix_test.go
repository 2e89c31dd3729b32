//go:build unix

package store

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestWalIndexClosedAfterTheLastHandle: the -shm file's descriptor a
// handle reads the WAL index through is the process's, and stays open while
// any handle of the process is open on the database: closing it drops every
// POSIX lock the process holds on the file, the SQLite connections' of
// another handle too. Before, the handle that opened it closed it at its
// own Close, before even its own connections.
func TestWalIndexClosedAfterTheLastHandle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orch.db")
	writer, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := writer.walHeader(); !ok {
		t.Fatal("the WAL index's header cannot be read")
	}
	fd := writer.walIndex.f.fd
	if fd < 0 {
		t.Fatal("no descriptor of the -shm file")
	}
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	if !fdOpen(fd) {
		t.Fatal("the -shm file's descriptor was closed while another handle of the process is open on the database")
	}
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	if fdOpen(fd) {
		t.Error("the -shm file's descriptor is still open after the last handle closed")
	}
	shmFiles.Lock()
	defer shmFiles.Unlock()
	if f := shmFiles.byPath[path+"-shm"]; f != nil {
		t.Errorf("the -shm file is still registered after the last handle closed: %+v", f)
	}
}

func fdOpen(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil
}
