package protocols

import (
	"strings"
	"testing"
)

// The later board and memory messages' sample lines (see samples).
func init() {
	samples[TypeBlackboardWatch] = `{"message_type":"blackboard.watch","id":"w1","cue_id":"CUE-1","keys":["plan","design"],"prefix":"review/"}`
	samples[TypeBlackboardWatching] = `{"message_type":"blackboard.watching","id":"w2","in_reply_to":"w1","keys":["plan","design"],"prefix":"review/"}`
	samples[TypeBlackboardChanged] = `{"message_type":"blackboard.changed","id":"w3","cue_id":"CUE-1","key":"plan","version":2,"author":"researcher","value":{"steps":3}}`
	samples[TypeBlackboardConflict] = `{"message_type":"blackboard.conflict","id":"c2","in_reply_to":"c1","key":"plan","current_version":3,"author":"researcher"}`
	samples[TypeMemoryDelete] = `{"message_type":"memory.delete","id":"d1","key":"lesson"}`
}

// expected_version is optional, and 0 is a value of its own (the key must
// not exist yet), not an absent field.
func TestExpectedVersion(t *testing.T) {
	m, err := Decode([]byte(`{"message_type":"blackboard.write","id":"b1","key":"k","value":1,"expected_version":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev := m.Body.(BlackboardWrite).ExpectedVersion; ev == nil || *ev != 0 {
		t.Fatalf("expected_version 0 decoded as %v", ev)
	}
	line, err := Encode(m)
	if err != nil || !strings.Contains(string(line), `"expected_version":0`) {
		t.Fatalf("encoded %s, %v", line, err)
	}
	m, err = Decode([]byte(`{"message_type":"blackboard.write","id":"b1","key":"k","value":1}`))
	if err != nil || m.Body.(BlackboardWrite).ExpectedVersion != nil {
		t.Fatalf("no expected_version: %+v, %v", m.Body, err)
	}
	for line, want := range map[string]string{
		`{"message_type":"blackboard.write","id":"b1","key":"k","value":1,"expected_version":-1}`:   "must be at least 0",
		`{"message_type":"blackboard.write","id":"b1","key":"k","value":1,"expected_version":null}`: "want an integer",
		`{"message_type":"blackboard.write","id":"b1","key":"k","value":1,"expected_version":"2"}`:  "want an integer",
	} {
		if _, err := Decode([]byte(line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
	bad := int64(-2)
	if _, err := Encode(New(BlackboardWrite{Key: "k", ExpectedVersion: &bad})); err == nil {
		t.Error("Encode wrote a negative expected_version")
	}
}
