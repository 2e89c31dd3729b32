package proc

import (
	"os"
	"syscall"
)

// pipeFDs makes a pipe whose ends are closed on exec and returns orch's end,
// non-blocking, and the child's, blocking; toChild says which way the data
// goes. macOS has no pipe2: the descriptors are marked close-on-exec after
// pipe, holding ForkLock for reading, as the syscall package does for its
// own descriptors: a fork holds it for writing, so no process started in
// between inherits them.
func pipeFDs(toChild bool) (mine, child int, err error) {
	var fds [2]int // read end, write end
	syscall.ForkLock.RLock()
	err = syscall.Pipe(fds[:])
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, -1, os.NewSyscallError("pipe", err)
	}
	mine, child = fds[0], fds[1]
	if toChild {
		mine, child = child, mine
	}
	if err := syscall.SetNonblock(mine, true); err != nil {
		_ = syscall.Close(mine)
		_ = syscall.Close(child)
		return -1, -1, os.NewSyscallError("fcntl", err)
	}
	return mine, child, nil
}
