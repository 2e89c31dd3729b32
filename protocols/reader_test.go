package protocols

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// step is what one Next call should return: a message type, or an error kind.
type step struct{ typ, kind string }

func readAll(t *testing.T, r *Reader) []step {
	t.Helper()
	var got []step
	for range 100 {
		m, raw, err := r.Next()
		if err == io.EOF {
			return got
		}
		var de *DecodeError
		switch {
		case errors.As(err, &de):
			got = append(got, step{kind: de.Kind})
			if len(raw) == 0 {
				t.Errorf("%s error without the raw line", de.Kind)
			}
		case err != nil:
			t.Fatalf("Next: %v", err)
		default:
			got = append(got, step{typ: m.Type})
			if _, err := Decode(raw); err != nil {
				t.Errorf("raw line %q does not decode: %v", raw, err)
			}
		}
	}
	t.Fatal("Next never returned io.EOF")
	return nil
}

func TestReader(t *testing.T) {
	ack := samples[TypeAckWarning]
	long := `{"message_type":"status.update","id":"a","state":"` + strings.Repeat("x", 300) + `"}`
	for _, tc := range []struct {
		name  string
		input string
		max   int
		want  []step
	}{
		{"one line", ack + "\n", 0, []step{{typ: TypeAckWarning}}},
		{"no final newline", ack + "\n" + ack, 0, []step{{typ: TypeAckWarning}, {typ: TypeAckWarning}}},
		{"CRLF and blank lines", "\n\r\n" + ack + "\r\n  \n" + ack + "\n\n", 0, []step{{typ: TypeAckWarning}, {typ: TypeAckWarning}}},
		{"garbage in between", ack + "\nhello\n[1]\n" + ack + "\n", 0,
			[]step{{typ: TypeAckWarning}, {kind: KindNotJSON}, {kind: KindNotObject}, {typ: TypeAckWarning}}},
		{"too long, then fine", long + "\n" + ack + "\n", 100, []step{{kind: KindTooLong}, {typ: TypeAckWarning}}},
		{"too long at the end", ack + "\n" + long, 100, []step{{typ: TypeAckWarning}, {kind: KindTooLong}}},
		{"too long by the newline only", ack + "\n", len(ack) - 1, []step{{kind: KindTooLong}}},
		{"exactly the cap", ack + "\n" + ack, len(ack), []step{{typ: TypeAckWarning}, {typ: TypeAckWarning}}},
		{"two long lines in a row", long + "\n" + long + "\n" + ack, 100, []step{{kind: KindTooLong}, {kind: KindTooLong}, {typ: TypeAckWarning}}},
		{"empty input", "", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, wrap := range []func(io.Reader) io.Reader{
				func(r io.Reader) io.Reader { return r },
				iotest.OneByteReader, // lines arrive in pieces, as from a pipe
				iotest.HalfReader,
			} {
				got := readAll(t, NewReader(wrap(strings.NewReader(tc.input)), tc.max))
				if len(got) != len(tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("step %d: got %v, want %v", i, got[i], tc.want[i])
					}
				}
			}
		})
	}
}

// endless is a reader of one line that never ends.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += len(p)
	return len(p), nil
}

// TestReaderDoesNotBufferALongLine: the too-long error comes as soon as the
// cap is passed, after reading little more than the cap, even if the line
// never ends.
func TestReaderDoesNotBufferALongLine(t *testing.T) {
	src := &endless{}
	r := NewReader(src, 1<<20)
	_, raw, err := r.Next()
	var de *DecodeError
	if !errors.As(err, &de) || de.Kind != KindTooLong {
		t.Fatalf("got %v, want a too-long error", err)
	}
	if src.n > 1<<20+128<<10 {
		t.Errorf("read %d bytes for a 1 MiB cap", src.n)
	}
	if len(raw) != lineSnippet || !strings.Contains(err.Error(), "line longer than 1048576 bytes") {
		t.Errorf("raw %d bytes, error %v", len(raw), err)
	}
}

func TestReaderQuotesTheBadLine(t *testing.T) {
	bad := `{"message_type":"task.failed","id":"a","note":"` + strings.Repeat("y", 500) + `"}`
	_, raw, err := NewReader(strings.NewReader(bad), 0).Next()
	if string(raw) != bad {
		t.Errorf("raw line not returned whole")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, `task.failed: unknown field "note"; line: "{\"message_type\"`) || len(msg) > 400 {
		t.Errorf("error: %s", msg)
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader(samples[TypeAckWarning]+"\n"), iotest.ErrReader(boom)), 0)
	if m, _, err := r.Next(); err != nil || m.Type != TypeAckWarning {
		t.Fatalf("first line: %v", err)
	}
	if _, _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("got %v, want the read error", err)
	}
}

// countingWriter records each Write call, to check one call per message.
type countingWriter struct {
	mu    sync.Mutex
	calls [][]byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, bytes.Clone(p))
	return len(p), nil
}

func TestWriterConcurrent(t *testing.T) {
	cw := &countingWriter{}
	w := NewWriter(cw)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			body := StatusUpdate{State: "working", Detail: strings.Repeat("d", i*100)}
			if err := w.Send(New(body)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(cw.calls) != 50 {
		t.Fatalf("%d Write calls for 50 messages", len(cw.calls))
	}
	all := bytes.Join(cw.calls, nil)
	if got := readAll(t, NewReader(bytes.NewReader(all), 0)); len(got) != 50 {
		t.Errorf("read back %d messages", len(got))
	}
	if err := w.Send(Message{ID: "a", Body: QuestionAsk{Question: "?", Complexity: "maybe"}}); err == nil || len(cw.calls) != 50 {
		t.Errorf("an invalid message was written (err %v)", err)
	}
}
