//go:build unix

package proc

import (
	"syscall"
	"testing"
)

// TestPipeEnds: orch's end of each pipe is non-blocking (it goes in Go's
// poller, so reads and writes take deadlines), the child's is blocking (as
// programs expect), and both are closed on exec, whichever way the data
// goes.
func TestPipeEnds(t *testing.T) {
	for _, toChild := range []bool{false, true} {
		mine, child, err := pipeFDs(toChild)
		if err != nil {
			t.Fatal(err)
		}
		for _, end := range []struct {
			name        string
			fd          int
			nonblocking bool
		}{{"orch's", mine, true}, {"the child's", child, false}} {
			fl, err := fcntl(end.fd, syscall.F_GETFL)
			if err != nil {
				t.Fatal(err)
			}
			if got := fl&syscall.O_NONBLOCK != 0; got != end.nonblocking {
				t.Errorf("toChild %v: %s end non-blocking %v, want %v", toChild, end.name, got, end.nonblocking)
			}
			fd, err := fcntl(end.fd, syscall.F_GETFD)
			if err != nil {
				t.Fatal(err)
			}
			if fd&syscall.FD_CLOEXEC == 0 {
				t.Errorf("toChild %v: %s end is not closed on exec", toChild, end.name)
			}
		}
		// The data goes from orch to the child or back.
		w, r := child, mine
		if toChild {
			w, r = mine, child
		}
		if _, err := syscall.Write(w, []byte("x")); err != nil {
			t.Fatalf("toChild %v: write: %v", toChild, err)
		}
		if n, err := syscall.Read(r, make([]byte, 1)); n != 1 || err != nil {
			t.Fatalf("toChild %v: read %d, %v", toChild, n, err)
		}
		syscall.Close(mine)
		syscall.Close(child)
	}
}

func fcntl(fd, cmd int) (int, error) {
	v, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), 0)
	if e != 0 {
		return 0, e
	}
	return int(v), nil
}
