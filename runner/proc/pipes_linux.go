package proc

import (
	"os"
	"syscall"
)

// pipeCloexec makes a pipe whose ends are closed on exec, in one system call.
func pipeCloexec(fds *[2]int) error {
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return os.NewSyscallError("pipe2", err)
	}
	return nil
}
