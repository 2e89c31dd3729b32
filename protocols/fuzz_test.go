package protocols

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, line := range samples {
		f.Add([]byte(line))
	}
	for _, line := range edgeLines {
		f.Add([]byte(line))
	}
}

// FuzzDecode: Decode never panics, fails only with a *DecodeError of a known
// kind, and whatever it accepts Encode writes as one line that decodes to the
// same message and encodes to the same line again.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := Decode(line)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
			}
			switch de.Kind {
			case KindNotJSON, KindNotObject, KindUnknownType, KindInvalid:
			default:
				t.Fatalf("unknown kind %q", de.Kind)
			}
			return
		}
		enc, err := Encode(m)
		if err != nil {
			t.Fatalf("Encode of a decoded message: %v\nline: %q", err, line)
		}
		if bytes.IndexByte(enc, '\n') != len(enc)-1 {
			t.Fatalf("Encode wrote more than one line: %q", enc)
		}
		m2, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode of Encode's output: %v\nline: %q", err, enc)
		}
		if m2.Type != m.Type || m2.ID != m.ID || m2.InReplyTo != m.InReplyTo {
			t.Fatalf("envelope changed: %+v -> %+v", m, m2)
		}
		enc2, err := Encode(m2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("not a fixed point (%v):\n%s%s", err, enc, enc2)
		}
	})
}

// FuzzReader: reading any stream with a small cap never panics, always ends
// with io.EOF, returns no line longer than the cap, and reports every line it
// could not decode with the line itself.
func FuzzReader(f *testing.F) {
	addSeeds(f)
	f.Add([]byte(samples[TypeAckWarning] + "\n\n" + samples[TypeTaskComplete] + "\r\nxx\n"))
	f.Add(bytes.Repeat([]byte("x"), 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxLine = 128
		r := NewReader(bytes.NewReader(data), maxLine)
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("more calls to Next than bytes in the input")
			}
			m, raw, err := r.Next()
			if err == io.EOF {
				return
			}
			var de *DecodeError
			tooLong := errors.As(err, &de) && de.Kind == KindTooLong
			if len(raw) > maxLine && !(tooLong && len(raw) <= lineSnippet) {
				t.Fatalf("returned a line of %d bytes, over the cap", len(raw))
			}
			switch {
			case tooLong:
			case de != nil:
				if len(raw) == 0 {
					t.Fatalf("%v without its line", err)
				}
			case err != nil:
				t.Fatalf("Next: %v", err)
			case m.Body == nil:
				t.Fatalf("message without a body from %q", raw)
			}
		}
	})
}

// benchGo is a typical coord.go: a task with a handful of inputs and a small
// blackboard snapshot.
func benchGo() Message {
	inputs := map[string]any{"release": "1.4", "topic": "release notes", "audience": "developers"}
	for i := range 5 {
		inputs[fmt.Sprintf("finding_%d", i)] = map[string]any{"claim": "something true", "source": fmt.Sprintf("S%d", i)}
	}
	return Message{Type: TypeCoordGo, ID: "3f9a0c1b2d4e", Body: CoordGo{RunID: "r-20260120-1", CueID: "CUE-100",
		TargetAgents: []string{"research-writer"}, Task: Task{
			RunID: "r-20260120-1", CueID: "CUE-100", AgentID: "research-writer", Attempt: 1,
			Inputs: inputs, Blackboard: map[string]any{"tests_passed": true, "build_artifact": "dist/app-1.4.tar.gz"},
			Tools: []string{"blackboard", "handoff", "fs.read"},
		}}}
}

// benchComplete is a typical task.complete: a few string and structured outputs.
func benchComplete() Message {
	return Message{Type: TypeTaskComplete, ID: "a81c4f00e2b7", InReplyTo: "3f9a0c1b2d4e", Body: TaskComplete{
		CueID: "CUE-100", Outputs: map[string]any{
			"draft":   "A short, cited brief about the release: three findings, two sources.",
			"sources": []any{map[string]any{"id": "S1", "title": "Notes"}, map[string]any{"id": "S2", "title": "Log"}},
			"words":   42.0,
		}}}
}

func benchEncode(b *testing.B, m Message) {
	line, err := Encode(m)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(m); err != nil {
			b.Fatal(err)
		}
	}
}

func benchDecode(b *testing.B, m Message) {
	line, err := Encode(m)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCoordGo(b *testing.B)      { benchEncode(b, benchGo()) }
func BenchmarkDecodeCoordGo(b *testing.B)      { benchDecode(b, benchGo()) }
func BenchmarkEncodeTaskComplete(b *testing.B) { benchEncode(b, benchComplete()) }
func BenchmarkDecodeTaskComplete(b *testing.B) { benchDecode(b, benchComplete()) }
