package main

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// errOutputGone is what a write to stdout or stderr returns once their
// reader has gone (orch run ... | head -1, a pager quit early). A command
// that only prints, such as orch events --follow, ends on it quietly, with
// exit 0; orch run goes on to the end of its run without printing.
var errOutputGone = errors.New("the output's reader has gone")

// gonePipeWriter is stdout or stderr: after the first write that fails
// with EPIPE it drops everything, without another system call.
type gonePipeWriter struct {
	f    *os.File
	gone atomic.Bool
}

func (w *gonePipeWriter) Write(b []byte) (int, error) {
	if w.gone.Load() {
		return 0, errOutputGone
	}
	n, err := w.f.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		w.gone.Store(true)
		return n, errOutputGone
	}
	return n, err
}

// outputGone says whether w is stdout or stderr and its reader has gone.
func outputGone(w io.Writer) bool {
	g, ok := w.(*gonePipeWriter)
	return ok && g.gone.Load()
}

// survivePipes makes a write to a closed pipe an error (EPIPE) rather than
// the death of orch: Go's runtime kills a program with SIGPIPE when such a
// write is to fd 1 or 2, unless SIGPIPE is notified. A notified signal is
// reset to its default in the processes orch starts (where ignoring it
// would be inherited), so agents die of a closed pipe as usual.
func survivePipes(out, errOut *os.File) (io.Writer, io.Writer) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	return &gonePipeWriter{f: out}, &gonePipeWriter{f: errOut}
}
