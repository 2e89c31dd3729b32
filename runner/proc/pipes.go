package proc

import (
	"io"
	"os"
)

// An agent process's standard streams are pipes orch makes itself rather
// than os/exec's. The child's ends are blocking, as programs expect, and
// never enter Go's poller; os/exec makes its pipes non-blocking, registers
// them with the poller, then switches the child's ends back, a dozen system
// calls more per process. Orch's ends are non-blocking in the poller, so a
// read or a write can be given a deadline. And no os/exec goroutine copies
// the output: orch reads it where it is wanted, and an exited process is
// waited for without waiting for its output to be read to the end.

// Stdio is one process's streams: the child's ends, handed to it when it
// starts and then closed in orch, and orch's ends, kept. Make them before
// the process is needed (NewStdio): Start takes them over.
type Stdio struct {
	childIn, childOut, childErr *os.File
	in                          *os.File // orch writes the child's stdin here; nil: the child's stdin is /dev/null
	out, err                    *os.File // orch reads the child's stdout and stderr here
}

// NewStdio makes the pipes of one process; withStdin: a pipe for its stdin
// too (else the child reads /dev/null).
func NewStdio(withStdin bool) (*Stdio, error) {
	s := &Stdio{}
	var err error
	if s.out, s.childOut, err = newPipe(false); err != nil {
		return nil, err
	}
	if s.err, s.childErr, err = newPipe(false); err != nil {
		s.Close()
		return nil, err
	}
	if withStdin {
		if s.in, s.childIn, err = newPipe(true); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// closeChild closes the child's ends in orch: the child has its own copies,
// and the output pipes reach end of file only when every writer is gone.
func (s *Stdio) closeChild() {
	for _, f := range []*os.File{s.childIn, s.childOut, s.childErr} {
		if f != nil {
			_ = f.Close()
		}
	}
	s.childIn, s.childOut, s.childErr = nil, nil, nil
}

// Close closes every end still open: for streams whose process never ran.
func (s *Stdio) Close() {
	s.closeChild()
	for _, f := range []*os.File{s.in, s.out, s.err} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// readAll gives r's stream to read until end of file (or the deadline set
// when the process has exited), then reads and drops whatever is left, so
// a writer never blocks on a full pipe, and closes it. A stream read to its
// end is not read again: one system call fewer per stream.
func readAll(f *os.File, read func(io.Reader)) {
	defer f.Close()
	r := &eofReader{f: f}
	read(r)
	if !r.eof {
		_, _ = io.Copy(io.Discard, r)
	}
}

// eofReader notes that its file reached end of file.
type eofReader struct {
	f   *os.File
	eof bool
}

func (r *eofReader) Read(b []byte) (int, error) {
	n, err := r.f.Read(b)
	if err == io.EOF {
		r.eof = true
	}
	return n, err
}
