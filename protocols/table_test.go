// Tests of the protocol's tables: expected replies, reply checks, routing and
// who may send what.
package protocols

import (
	"slices"
	"strings"
	"testing"
)

func TestExpectedReplies(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want []string
	}{
		{TypeCoordWarning, []string{TypeAckWarning}},
		{TypeCoordStandby, []string{TypeAckStandby}},
		{TypeCoordGo, []string{TypeTaskComplete, TypeTaskFailed}},
		{TypeTaskHandoff, []string{TypeHandoffResult}},
		{TypeTaskSpawn, []string{TypeSpawnAccepted}},
		{TypeBlackboardWrite, []string{TypeBlackboardAck, TypeBlackboardConflict}},
		{TypeBlackboardWatch, []string{TypeBlackboardWatching}},
		{TypeMemoryDelete, []string{TypeMemoryAck}},
		{TypeBlackboardRead, []string{TypeBlackboardValue}},
		{TypeQuestionAsk, []string{TypeQuestionAnswer}},
		{TypeMessageSend, []string{TypeMessageSent, TypeDeliveryFailed}},
		{TypeMemoryWrite, []string{TypeMemoryAck}},
		{TypeMemorySearch, []string{TypeMemoryResults}},
		{TypeAgentsList, []string{TypeAgentsListed}},
		{TypeBroadcastSend, []string{TypeBroadcastSent}},
		{TypeStatusRequest, []string{TypeStatusReport}},
		{TypeNotifyMode, []string{TypeNotifyAck}},
		{TypeCoordStop, nil},
		{TypeTaskComplete, nil},
		{TypeMessageUser, nil},
		{TypeStatusUsage, nil},
		{"no.such", nil},
	} {
		if got := ExpectedReplies(tc.typ); !slices.Equal(got, tc.want) {
			t.Errorf("ExpectedReplies(%s) = %v, want %v", tc.typ, got, tc.want)
		}
	}
	// The result is the caller's to keep.
	ExpectedReplies(TypeCoordGo)[0] = "changed"
	if ExpectedReplies(TypeCoordGo)[0] != TypeTaskComplete {
		t.Error("ExpectedReplies returned the table itself")
	}
}

func TestCheckReply(t *testing.T) {
	warning := Message{Type: TypeCoordWarning, ID: "w1", Body: CoordWarning{CueID: "CUE-1"}}
	gomsg := Message{Type: TypeCoordGo, ID: "g1", Body: CoordGo{CueID: "CUE-1"}}
	handoff := Message{Type: TypeTaskHandoff, ID: "h1", Body: TaskHandoff{ToAgent: "b", TaskID: "T-1"}}
	write := Message{Type: TypeBlackboardWrite, ID: "b1", Body: BlackboardWrite{Key: "k"}}
	send := Message{Type: TypeMessageSend, ID: "s1", Body: MessageSend{To: "b"}}
	for _, tc := range []struct {
		name       string
		req, reply Message
		msg        string // "" for no error
	}{
		{"ack", warning, Reply(warning, AckWarning{CueID: "CUE-1"}), ""},
		{"ack without cue", warning, Reply(warning, AckWarning{}), ""},
		{"complete", gomsg, Reply(gomsg, TaskComplete{CueID: "CUE-1"}), ""},
		{"failed", gomsg, Reply(gomsg, TaskFailed{Error: "x"}), ""},
		{"delivery failed", send, Reply(send, DeliveryFailed{Reason: "gone"}), ""},
		{"pointer bodies", Message{ID: "w1", Body: &CoordWarning{CueID: "C"}}, Message{ID: "a", InReplyTo: "w1", Body: &AckWarning{CueID: "C"}}, ""},
		{"wrong type", warning, Reply(warning, TaskComplete{}), "expected ack.warning in reply to coord.warning, got task.complete"},
		{"wrong type for go", gomsg, Reply(gomsg, AckStandby{}), "expected task.complete or task.failed in reply to coord.go, got ack.standby"},
		{"no in_reply_to", warning, New(AckWarning{}), `ack.warning has no in_reply_to (it should be "w1"`},
		{"wrong in_reply_to", warning, Reply(Message{ID: "zz"}, AckWarning{}), `ack.warning is in reply to "zz", but the coord.warning has id "w1"`},
		{"wrong cue", warning, Reply(warning, AckWarning{CueID: "CUE-2"}), "reply for cue CUE-2, but this is cue CUE-1"},
		{"wrong cue at go", gomsg, Reply(gomsg, TaskFailed{CueID: "CUE-9", Error: "x"}), "reply for cue CUE-9, but this is cue CUE-1"},
		{"wrong task", handoff, Reply(handoff, HandoffResult{TaskID: "T-2", Status: "completed"}), "reply for task T-2, but this is task T-1"},
		{"wrong key", write, Reply(write, BlackboardAck{Key: "other"}), `reply for key "other", but the request was for key "k"`},
		{"no reply expected", New(CoordStop{}), New(AckWarning{}), "coord.stop expects no reply, got ack.warning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReply(tc.req, tc.reply)
			switch {
			case tc.msg == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)):
				t.Errorf("got %v, want an error with %q", err, tc.msg)
			}
		})
	}
}

func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want Channel
	}{
		{TypeCoordWarning, ChannelCue},
		{TypeAckStandby, ChannelCue},
		{TypeTaskComplete, ChannelTask},
		{TypeHandoffResult, ChannelTask},
		{TypeSpawnAccepted, ChannelTask},
		{TypeStatusUsage, ChannelStatus},
		{"status.heartbeat", ChannelStatus}, // by prefix, like the seed
		{TypeEscalationConflict, ChannelEscalation},
		{TypeBlackboardRead, ChannelBlackboard},
		{TypeQuestionAsk, ChannelQuestion},
		{TypeMessageUser, ChannelMessage},
		{TypeDiscoveryReport, ChannelMessage},
		{TypeDeliveryFailed, ChannelMessage},
		{TypeMemorySearch, ChannelMemory},
		{TypeGuardWarning, ChannelGuard},
		{TypeProtocolError, ChannelProtocol},
	} {
		if got, err := Route(tc.typ); err != nil || got != tc.want {
			t.Errorf("Route(%s) = %q, %v; want %q", tc.typ, got, err, tc.want)
		}
	}
	for _, typ := range Types() {
		if _, err := Route(typ); err != nil {
			t.Errorf("Route(%s): %v", typ, err)
		}
	}
	for _, tc := range []struct{ typ, msg string }{
		{"shout.all", `unknown prefix "shout"`},
		{"status", "want prefix.name"},
		{"status.", "want prefix.name"},
		{".update", "want prefix.name"},
		{"", "want prefix.name"},
		{strings.Repeat("x", 1000) + ".y", "..."},
	} {
		if ch, err := Route(tc.typ); err == nil || !strings.Contains(err.Error(), tc.msg) || len(err.Error()) > 200 {
			t.Errorf("Route(%.20s) = %q, %v; want an error with %q", tc.typ, ch, err, tc.msg)
		}
	}
}

func TestFromAgent(t *testing.T) {
	fromAgent := map[string]bool{
		TypeAckWarning: true, TypeAckStandby: true, TypeTaskComplete: true, TypeTaskFailed: true,
		TypeQuestionAnswer: true, TypeTaskHandoff: true, TypeTaskSpawn: true,
		TypeBlackboardWrite: true, TypeBlackboardRead: true, TypeQuestionAsk: true,
		TypeMessageSend: true, TypeMessageUser: true, TypeDiscoveryReport: true,
		TypeMemoryWrite: true, TypeMemorySearch: true, TypeStatusUpdate: true, TypeStatusUsage: true,
		TypeEscalationConflict: true, TypeEscalationError: true,
		TypeAgentsList: true, TypeBroadcastSend: true, TypeStatusReport: true, TypeNotifyMode: true,
		TypeBlackboardWatch: true, TypeMemoryDelete: true,
	}
	for _, typ := range Types() {
		if got := FromAgent(typ); got != fromAgent[typ] {
			t.Errorf("FromAgent(%s) = %v, want %v", typ, got, fromAgent[typ])
		}
	}
	if FromAgent("no.such") || Known("no.such") || !Known(TypeCoordGo) {
		t.Error("unknown types")
	}
	// Whatever expects a reply from orch is something an agent sends, and
	// every reply to an agent's request is something only orch sends.
	for _, typ := range Types() {
		for _, r := range ExpectedReplies(typ) {
			if FromAgent(typ) == FromAgent(r) && r != TypeQuestionAnswer {
				t.Errorf("%s (from agent: %v) is answered by %s (from agent: %v)", typ, FromAgent(typ), r, FromAgent(r))
			}
		}
	}
}
