package protocols

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestNewAndReply(t *testing.T) {
	req := New(CoordWarning{CueID: "C"})
	if req.Type != TypeCoordWarning || req.InReplyTo != "" {
		t.Errorf("New: %+v", req)
	}
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(req.ID) {
		t.Errorf("id %q is not 12 hex digits", req.ID)
	}
	rep := Reply(req, AckWarning{CueID: "C"})
	if rep.Type != TypeAckWarning || rep.InReplyTo != req.ID || rep.ID == req.ID {
		t.Errorf("Reply: %+v", rep)
	}
	seen := map[string]bool{}
	for range 10000 {
		id := NewID()
		if seen[id] {
			t.Fatalf("NewID repeated %s", id)
		}
		seen[id] = true
	}
}

func TestEncodeShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Message
		want string
	}{
		{"envelope first", Message{Type: TypeAckWarning, ID: "a", InReplyTo: "m", Body: AckWarning{CueID: "C"}},
			`{"message_type":"ack.warning","id":"a","in_reply_to":"m","cue_id":"C"}`},
		{"type from the body", Message{ID: "a", Body: AckWarning{}}, `{"message_type":"ack.warning","id":"a"}`},
		{"pointer body", Message{ID: "a", Body: &TaskFailed{Error: "x"}}, `{"message_type":"task.failed","id":"a","error":"x"}`},
		{"nil outputs are {}", Message{ID: "a", Body: TaskComplete{}}, `{"message_type":"task.complete","id":"a","outputs":{}}`},
		{"nil items are []", Message{ID: "a", Body: MemoryResults{}}, `{"message_type":"memory.results","id":"a","items":[]}`},
		{"nil task maps", Message{ID: "a", Body: CoordGo{CueID: "C"}},
			`{"message_type":"coord.go","id":"a","cue_id":"C","task":{"run_id":"","cue_id":"","agent_id":"","attempt":0,"inputs":{},"blackboard":{},"tools":[]}}`},
		{"newlines escaped, HTML kept", Message{ID: "a\nb", Body: StatusUpdate{State: "x", Detail: "<a>\n&"}},
			`{"message_type":"status.update","id":"a\nb","state":"x","detail":"<a>\n&"}`},
		{"null value kept", Message{ID: "a", Body: BlackboardWrite{Key: "k"}}, `{"message_type":"blackboard.write","id":"a","key":"k","value":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Encode(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if bytes.Count(got, []byte("\n")) != 1 {
				t.Errorf("not exactly one line: %q", got)
			}
			if _, err := Decode(got); err != nil {
				t.Errorf("Decode of Encode's output: %v", err)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	deep := any(map[string]any{})
	for range MaxDepth {
		deep = []any{deep}
	}
	for _, tc := range []struct {
		name string
		m    Message
		msg  string
	}{
		{"no body", Message{ID: "a"}, "no body"},
		{"nil pointer", Message{ID: "a", Body: (*AckWarning)(nil)}, "no body"},
		{"no id", New(AckWarning{}), ""}, // replaced below
		{"type mismatch", Message{Type: TypeAckStandby, ID: "a", Body: AckWarning{}}, `message type "ack.standby" does not match`},
		{"foreign body", Message{ID: "a", Body: fakeBody{}}, "not the body of ack.warning"},
		{"bad enum", Message{ID: "a", Body: QuestionAsk{Question: "q", Complexity: "hard"}}, "field complexity must be one of quick, deep"},
		{"empty required string", Message{ID: "a", Body: MemorySearch{}}, "field query must not be empty"},
		{"NaN", Message{ID: "a", Body: StatusUsage{Credits: math.NaN()}}, "unsupported value"},
		{"too deep", Message{ID: "a", Body: TaskComplete{Outputs: map[string]any{"x": deep}}}, "nested more than 64"},
		{"id too long", Message{ID: strings.Repeat("x", 257), Body: AckWarning{}}, "more than 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			if tc.name == "no id" {
				m.ID, tc.msg = "", "id must not be empty"
			}
			out, err := Encode(m)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Encode = %s, %v; want an error with %q", out, err, tc.msg)
			}
		})
	}
}

// fakeBody claims to be an ack.warning without being one.
type fakeBody struct{ X int }

func (fakeBody) MessageType() string { return TypeAckWarning }
