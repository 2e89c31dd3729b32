package runner

import (
	"io"
	"sync"
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
