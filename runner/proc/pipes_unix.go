//go:build unix

package proc

import (
	"os"
	"syscall"
)

// newPipe returns orch's end of a new pipe, in Go's poller, and the child's
// end, blocking; toChild says which way the data goes.
func newPipe(toChild bool) (mine, child *os.File, err error) {
	var fds [2]int // read end, write end
	if err := pipeCloexec(&fds); err != nil {
		return nil, nil, err
	}
	m, c := fds[0], fds[1]
	if toChild {
		m, c = c, m
	}
	if err := syscall.SetNonblock(m, true); err != nil {
		_ = syscall.Close(m)
		_ = syscall.Close(c)
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	// os.NewFile puts a non-blocking descriptor in the poller and leaves a
	// blocking one alone.
	return os.NewFile(uintptr(m), "|orch"), os.NewFile(uintptr(c), "|child"), nil
}
