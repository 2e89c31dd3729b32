package driver

import (
	"fmt"
	"unicode/utf8"

	"github.com/orch-cli/orch/runner/record"
)

// tailText keeps the end of a text written in pieces: at most max bytes of
// it, in at most twice that much memory, in time linear in what is
// written. An ACP agent's reply has no bound of its own; what is kept is
// its output text (its end: where the reply concludes and the JSON object
// orch asks for is), while the whole reply is in the attempt's log.
type tailText struct {
	max   int
	buf   []byte
	total int64 // bytes written in all
}

func (t *tailText) WriteString(s string) {
	t.total += int64(len(s))
	if len(s) >= t.max {
		t.buf = append(t.buf[:0], s[len(s)-t.max:]...)
		return
	}
	if len(t.buf)+len(s) > 2*t.max {
		keep := t.buf[len(t.buf)-(t.max-len(s)):]
		t.buf = append(t.buf[:copy(t.buf, keep)], s...)
		return
	}
	t.buf = append(t.buf, s...)
}

// String is the text kept: all of it, or its last max bytes (from a
// character's start) after a line saying how much was cut.
func (t *tailText) String() string {
	if t.total <= int64(t.max) {
		return string(t.buf)
	}
	tail := t.buf[max(len(t.buf)-t.max, 0):]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return fmt.Sprintf("[… the first %s of the reply are cut here: see orch logs]\n", record.HumanBytes(t.total-int64(len(tail)))) + string(tail)
}
