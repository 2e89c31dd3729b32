package proc

import (
	"os"
	"syscall"
)

// pipeCloexec makes a pipe whose ends are closed on exec. macOS has no
// pipe2: the descriptors are marked close-on-exec after pipe, holding
// ForkLock for reading, as the syscall package does for its own
// descriptors: a fork holds it for writing, so no process started in
// between inherits them.
func pipeCloexec(fds *[2]int) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := syscall.Pipe(fds[:]); err != nil {
		return os.NewSyscallError("pipe", err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return nil
}
