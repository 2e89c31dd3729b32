package protocols

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// New returns a message carrying body, with its type set from the body and a
// fresh id.
func New(body Body) Message {
	return Message{Type: body.MessageType(), ID: NewID(), Body: body}
}

// Reply returns a message carrying body that answers to: a fresh id, and
// in_reply_to set to to's id.
func Reply(to Message, body Body) Message {
	m := New(body)
	m.InReplyTo = to.ID
	return m
}

// NewID returns a fresh message id: 12 random hex digits. 48 random bits make
// a collision within one run (thousands of messages) vanishingly unlikely,
// and keep the ids short enough to read in a log.
func NewID() string {
	var b [6]byte
	rand.Read(b[:]) // never fails (crypto/rand panics if the OS source is broken)
	return hex.EncodeToString(b[:])
}

// cueID returns the cue a body is about, or "" if it names none. For coord.go
// the task's cue counts when the message itself leaves cue_id out.
func cueID(b Body) string {
	switch b := deref(b).(type) {
	case CoordWarning:
		return b.CueID
	case CoordStandby:
		return b.CueID
	case CoordGo:
		if b.CueID == "" {
			return b.Task.CueID
		}
		return b.CueID
	case CoordStop:
		return b.CueID
	case AckWarning:
		return b.CueID
	case AckStandby:
		return b.CueID
	case TaskComplete:
		return b.CueID
	case TaskFailed:
		return b.CueID
	}
	return ""
}

// deref turns a pointer to a body into the body, so that type switches need
// only the value cases. A nil pointer stays as it is.
func deref(b Body) Body {
	v := reflect.ValueOf(b)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		if d, ok := v.Elem().Interface().(Body); ok {
			return d
		}
	}
	return b
}

// bodyType is b's message type, or "" for a nil body or a nil pointer to one
// (whose value-receiver MessageType would panic).
func bodyType(b Body) string {
	if b == nil {
		return ""
	}
	if v := reflect.ValueOf(b); v.Kind() == reflect.Pointer && v.IsNil() {
		return ""
	}
	return b.MessageType()
}

// CheckReply reports whether reply is an acceptable answer to request:
//   - its type is one of ExpectedReplies(request's type);
//   - its in_reply_to is the request's id;
//   - when both name a cue (ack.warning, ack.standby, task.complete,
//     task.failed against coord.*), a task (handoff.result against
//     task.handoff) or a key (blackboard.ack, blackboard.value, memory.ack),
//     they name the same one. A reply that leaves the name out is accepted:
//     the schema makes it optional, and in_reply_to already ties the two.
//
// The error says what was wrong, in terms a person reading a run's log can act
// on; the runner records it as a malfunction of the agent that replied.
func CheckReply(request, reply Message) error {
	reqType := typeOf(request)
	repType := typeOf(reply)
	want := ExpectedReplies(reqType)
	if want == nil {
		return fmt.Errorf("%s expects no reply, got %s", orUnknown(reqType), orUnknown(repType))
	}
	if !slices.Contains(want, repType) {
		return fmt.Errorf("expected %s in reply to %s, got %s", strings.Join(want, " or "), reqType, orUnknown(repType))
	}
	switch {
	case reply.InReplyTo == "":
		return fmt.Errorf("%s has no in_reply_to (it should be %q, the id of the %s)", repType, request.ID, reqType)
	case reply.InReplyTo != request.ID:
		return fmt.Errorf("%s is in reply to %q, but the %s has id %q", repType, reply.InReplyTo, reqType, request.ID)
	}
	if bodyType(reply.Body) == "" || bodyType(request.Body) == "" {
		return nil // nothing more to compare
	}
	if got, want := cueID(reply.Body), cueID(request.Body); got != "" && want != "" && got != want {
		return fmt.Errorf("%s: reply for cue %s, but this is cue %s", repType, got, want)
	}
	if got, want := taskID(reply.Body), taskID(request.Body); got != "" && want != "" && got != want {
		return fmt.Errorf("%s: reply for task %s, but this is task %s", repType, got, want)
	}
	if got, want := keyOf(reply.Body), keyOf(request.Body); got != "" && want != "" && got != want {
		return fmt.Errorf("%s: reply for key %q, but the request was for key %q", repType, got, want)
	}
	return nil
}

// typeOf is a message's type, from the envelope or else from the body.
func typeOf(m Message) string {
	if m.Type == "" {
		return bodyType(m.Body)
	}
	return m.Type
}

func orUnknown(t string) string {
	if t == "" {
		return "a message without a type"
	}
	return t
}

// taskID is the task a handoff or its result is about.
func taskID(b Body) string {
	switch b := deref(b).(type) {
	case TaskHandoff:
		return b.TaskID
	case HandoffResult:
		return b.TaskID
	}
	return ""
}

// keyOf is the blackboard or memory key a request or its answer is about.
func keyOf(b Body) string {
	switch b := deref(b).(type) {
	case BlackboardWrite:
		return b.Key
	case BlackboardAck:
		return b.Key
	case BlackboardRead:
		return b.Key
	case BlackboardValue:
		return b.Key
	case MemoryWrite:
		return b.Key
	case MemoryAck:
		return b.Key
	}
	return ""
}
