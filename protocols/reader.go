package protocols

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxLine is the line cap orch uses for an agent's stdout.
const DefaultMaxLine = 1 << 20

// Reader reads messages, one per line, from an agent's stdout (or, in an
// agent, from its stdin). It never holds more than the line cap in memory: a
// longer line is reported as soon as the cap is passed, and the rest of it is
// skipped by the next call, so one runaway print cannot exhaust orch's memory
// nor desynchronise the stream. A Reader is not safe for concurrent use.
type Reader struct {
	br       *bufio.Reader
	max      int
	buf      []byte // the line being read; reused, so Next copies what it returns
	skipping bool   // the rest of a too-long line is still to be discarded
}

// NewReader returns a Reader of r whose lines may be at most maxLine bytes
// long, not counting the '\n' (DefaultMaxLine if maxLine <= 0).
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	// The bufio buffer only has to be large enough to read efficiently; lines
	// longer than it are assembled in buf, up to the cap.
	size := min(max(maxLine+1, 16), 64<<10)
	return &Reader{br: bufio.NewReaderSize(r, size), max: maxLine}
}

// Next reads the next non-blank line and decodes it. It returns the message
// and the raw line (a copy, without the '\n'; the caller may keep it).
//
// A line that is not a valid message gives a *DecodeError (with the line's
// start quoted in it) along with the raw line; a line longer than the cap
// gives a *DecodeError of Kind KindTooLong along with the line's first bytes.
// In both cases the next call reads the following line. A last line without
// '\n' is still a line. At the end of the input Next returns io.EOF; other
// read errors are returned as they are.
func (r *Reader) Next() (Message, []byte, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return Message{}, line, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines are harmless: an agent's print() of nothing
		}
		raw := bytes.Clone(line)
		m, err := Decode(raw)
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				de.Line = snippet(raw)
			}
			return Message{}, raw, err
		}
		return m, raw, nil
	}
}

// readLine returns the next line without its '\n'. The result aliases r.buf
// except for the too-long error, whose line is a fresh snippet.
func (r *Reader) readLine() ([]byte, error) {
	if r.skipping {
		if err := r.skipLine(); err != nil {
			return nil, err
		}
	}
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		content := len(r.buf) + len(chunk)
		if err == nil {
			content-- // the '\n' does not count
		}
		if content > r.max {
			start := make([]byte, 0, lineSnippet)
			start = append(start, r.buf[:min(len(r.buf), lineSnippet)]...)
			start = append(start, chunk[:min(len(chunk), lineSnippet-len(start))]...)
			start = bytes.TrimSuffix(start, []byte("\n"))
			// The rest of the line, if any, is discarded by the next call,
			// not now: the caller learns of the runaway line at once.
			r.skipping = err == bufio.ErrBufferFull
			r.buf = r.buf[:0]
			return start, &DecodeError{Kind: KindTooLong, Err: fmt.Errorf("line longer than %d bytes", r.max), Line: start}
		}
		r.buf = append(r.buf, chunk...)
		switch err {
		case nil:
			return r.buf[:len(r.buf)-1], nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(r.buf) > 0 {
				return r.buf, nil // a last line without '\n'
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// skipLine discards input up to and including the next '\n'.
func (r *Reader) skipLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		switch err {
		case nil:
			r.skipping = false
			return nil
		case bufio.ErrBufferFull:
			continue
		default:
			return err // io.EOF included: the long line was the last
		}
	}
}

// snippet returns a copy of at most lineSnippet bytes of the start of line.
func snippet(line []byte) []byte {
	return bytes.Clone(line[:min(len(line), lineSnippet)])
}

// Writer writes messages, one line each, to an agent's stdin (or, in an
// agent, to its stdout). It is safe for concurrent use: each message is
// encoded first and written with a single Write call under a lock, so lines
// from several goroutines never interleave.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer to w. w should not be buffered, or the caller
// must flush it: Send returns once the line has been handed to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Send encodes m and writes it. An encoding error means nothing was written.
func (w *Writer) Send(m Message) error {
	line, err := Encode(m)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(line)
	return err
}
