//go:build unix

package proc

import "os"

// newPipe returns orch's end of a new pipe, in Go's poller, and the child's
// end, blocking; toChild says which way the data goes.
func newPipe(toChild bool) (mine, child *os.File, err error) {
	m, c, err := pipeFDs(toChild)
	if err != nil {
		return nil, nil, err
	}
	// os.NewFile puts a non-blocking descriptor in the poller and leaves a
	// blocking one alone.
	return os.NewFile(uintptr(m), "|orch"), os.NewFile(uintptr(c), "|child"), nil
}
