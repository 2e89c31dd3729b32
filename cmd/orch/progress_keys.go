package main

import (
	"io"
	"unicode/utf8"
)

// keyReader reads the terminal's input in one goroutine for the life of the
// display and hands it to prompts as it comes: a key at a time when the
// terminal is in cbreak mode, a line at a time otherwise.
type keyReader struct {
	chunks chan []byte // closed when the input ends
}

func newKeyReader(in io.Reader) *keyReader {
	k := &keyReader{chunks: make(chan []byte, 16)}
	go func() {
		defer close(k.chunks)
		buf := make([]byte, 256)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				k.chunks <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	return k
}

// drain drops what was typed while no prompt was showing: a stray "y" and
// Enter must not answer a GO that was not on the screen yet.
func (k *keyReader) drain() {
	for {
		select {
		case _, ok := <-k.chunks:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// lineEditor is the answer being typed in a prompt: printable characters,
// Backspace, Ctrl-U (clear), Enter (done), Ctrl-D on an empty line (no
// answer); escape sequences (arrow keys) and other control keys are ignored.
type lineEditor struct {
	text    []rune
	pending []byte // the start of a character split between two reads
	inEsc   bool   // within an escape sequence
	escLen  int
	done    bool
	eof     bool
	rest    []byte // input after the line's end, for the next prompt
}

// feed takes typed input; it returns true once the line is done.
func (e *lineEditor) feed(b []byte) bool {
	b = append(e.pending, b...)
	e.pending = nil
	for i := 0; i < len(b); {
		c := b[i]
		if e.inEsc {
			e.escLen++
			i++
			// ESC [ params final, or ESC O x, or ESC x
			if (e.escLen > 1 && c >= 0x40 && c <= 0x7e) || (e.escLen == 1 && c != '[' && c != 'O') {
				e.inEsc = false
			}
			continue
		}
		switch {
		case c == 0x1b:
			e.inEsc, e.escLen = true, 0
		case c == '\r' || c == '\n':
			e.done, e.rest = true, append([]byte(nil), b[i+1:]...)
			return true
		case c == 0x7f || c == 0x08:
			if len(e.text) > 0 {
				e.text = e.text[:len(e.text)-1]
			}
		case c == 0x15: // Ctrl-U
			e.text = e.text[:0]
		case c == 0x04: // Ctrl-D
			if len(e.text) == 0 {
				e.done, e.eof = true, true
				e.rest = append([]byte(nil), b[i+1:]...)
				return true
			}
		case c < 0x20:
		default:
			if !utf8.FullRune(b[i:]) {
				e.pending = append([]byte(nil), b[i:]...)
				return false
			}
			r, size := utf8.DecodeRune(b[i:])
			if r != utf8.RuneError {
				e.text = append(e.text, r)
			}
			i += size
			continue
		}
		i++
	}
	return false
}
