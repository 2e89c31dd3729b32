package driver

import (
	"bytes"
	"io"
	"strings"
	"sync"

	"github.com/orch-cli/orch/runner/attempt"
)

// readBufs are the read buffers of logLines, kept between processes: each
// process has two streams, and a fresh 32 KiB buffer for each was two thirds
// of the memory orch allocated on a run of 1,000 short processes.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// logLines is a read function for proc.Process.ReadOutput that logs the
// stream line by line. A read error (the deadline) ends the stream as end of file does.
func logLines(w *lineWriter) func(io.Reader) {
	return func(r io.Reader) {
		buf := readBufs.Get().(*[]byte)
		defer readBufs.Put(buf)
		// Only the Reader: *os.File's WriteTo would copy through a buffer
		// of its own.
		_, _ = io.CopyBuffer(w, struct{ io.Reader }{r}, *buf)
		w.flush()
	}
}

// lineWriter turns an output stream into log lines. A line longer than
// MaxLine is read on for secretSlack more bytes (the rest is dropped, with a
// marker), so that the log can mask it, then cut it at MaxLine (see
// CutMarker): a secret straddling the cut is masked whole.
type lineWriter struct {
	mu   sync.Mutex
	emit func(string)
	buf  []byte
	cut  bool
}

// secretSlack is how far past MaxLine a line is kept until it is masked: a
// secret up to that long straddling MaxLine is masked, not cut in two.
const secretSlack = 64 << 10

// CutMarker ends a line that was cut (the log masks it, then cuts it).
const CutMarker = " [line cut at 1 MiB]"

// logWriter logs an attempt's output stream line by line.
func logWriter(a *Attempt, stream string) *lineWriter {
	return &lineWriter{emit: func(s string) { a.Host.Log(stream, s) }}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	const limit = attempt.MaxLine + secretSlack
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if len(w.buf)+len(chunk) > limit {
			w.cut = true
		}
		if room := limit - len(w.buf); room > 0 {
			w.buf = append(w.buf, chunk[:min(len(chunk), room)]...)
		}
		if i < 0 {
			break
		}
		w.line()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) line() {
	s := strings.TrimRight(string(w.buf), "\r")
	if w.cut {
		s += CutMarker
	}
	w.emit(s)
	w.buf, w.cut = w.buf[:0], false
}

// flush emits a last line without a newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 || w.cut {
		w.line()
	}
}

// Lines is a read function for proc.Process.ReadOutput that gives emit the
// stream line by line, as an attempt's output is logged (a line past
// MaxLine cut, see CutMarker).
func Lines(emit func(line string)) func(io.Reader) { return logLines(&lineWriter{emit: emit}) }
