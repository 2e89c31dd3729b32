package proc

import (
	"os"
	"syscall"
)

// pipeFDs makes a pipe whose ends are closed on exec and returns orch's end,
// non-blocking, and the child's, blocking; toChild says which way the data
// goes. Both ends are made non-blocking by pipe2 itself, then the child's is
// set back: two system calls, where setting orch's end afterwards takes three
// (fcntl to read its flags, then to write them).
func pipeFDs(toChild bool) (mine, child int, err error) {
	var fds [2]int // read end, write end
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return -1, -1, os.NewSyscallError("pipe2", err)
	}
	mine, child = fds[0], fds[1]
	if toChild {
		mine, child = child, mine
	}
	// A pipe end has no other status flag F_SETFL could change.
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(child), syscall.F_SETFL, 0); e != 0 {
		_ = syscall.Close(mine)
		_ = syscall.Close(child)
		return -1, -1, os.NewSyscallError("fcntl", e)
	}
	return mine, child, nil
}
