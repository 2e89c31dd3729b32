package protocols

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSamplesCoverEveryType(t *testing.T) {
	for _, typ := range Types() {
		if _, ok := samples[typ]; !ok {
			t.Errorf("no sample line for %s", typ)
		}
	}
	if len(samples) != len(Types()) {
		t.Errorf("%d samples for %d types", len(samples), len(Types()))
	}
}

// TestDecodeEncodeSamples: every sample decodes to its type's struct, and
// encodes back to exactly the same line.
func TestDecodeEncodeSamples(t *testing.T) {
	for typ, line := range samples {
		t.Run(typ, func(t *testing.T) {
			m, err := Decode([]byte(line))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if m.Type != typ || m.Body == nil || m.Body.MessageType() != typ {
				t.Fatalf("decoded type %q, body %T", m.Type, m.Body)
			}
			if reflect.TypeOf(m.Body) != registry().byType[typ].typ {
				t.Errorf("body is a %T, want a value of %s", m.Body, registry().byType[typ].typ)
			}
			out, err := Encode(m)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if string(out) != line+"\n" {
				t.Errorf("round trip changed the line:\n got %s\nwant %s", out, line)
			}
		})
	}
}

func TestDecodeFields(t *testing.T) {
	m, err := Decode([]byte(samples[TypeCoordGo] + " \r\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := CoordGo{RunID: "r1", CueID: "CUE-100", TargetAgents: []string{"a"}, Task: Task{
		RunID: "r1", CueID: "CUE-100", AgentID: "a", Attempt: 1,
		Inputs: map[string]any{"name": "Ada"}, Blackboard: map[string]any{}, Tools: []string{"blackboard"},
	}}
	if m.ID != "m3" || m.InReplyTo != "" || !reflect.DeepEqual(m.Body, want) {
		t.Errorf("got %+v\nwant %+v", m, want)
	}

	m, err = Decode([]byte(samples[TypeBlackboardValue]))
	if err != nil {
		t.Fatal(err)
	}
	if b := m.Body.(BlackboardValue); m.InReplyTo != "b3" || !b.Found || b.Value != "v" || b.Version != 7 || b.Author != "a" {
		t.Errorf("got %+v", m)
	}
}

func TestDecodeAccepts(t *testing.T) {
	for _, tc := range []struct{ name, line string }{
		{"escaped member name", `{"message_type":"ack.warning","\u0069d":"a"}`},
		{"escaped type", `{"message_type":"ack\u002ewarning","id":"a"}`},
		{"envelope last", `{"cue_id":"C","id":"a","message_type":"ack.warning"}`},
		{"whitespace everywhere", " \t{ \"message_type\" : \"ack.warning\" , \"id\" : \"a\" } \r\n"},
		{"null for an any field", `{"message_type":"blackboard.write","id":"a","key":"k","value":null}`},
		{"empty in_reply_to", `{"message_type":"ack.warning","id":"a","in_reply_to":""}`},
		{"extra task field (the schema allows it)", `{"message_type":"coord.go","id":"a","cue_id":"C","task":{"cue_id":"C","future":1}}`},
		{"huge integer in any", `{"message_type":"task.complete","id":"a","outputs":{"n":123456789012345678901234567890}}`},
		{"nesting at the limit", `{"message_type":"task.complete","id":"a","outputs":{"a":` + strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2) + `}}`},
		{"id of 256 characters", `{"message_type":"ack.warning","id":"` + strings.Repeat("é", MaxIDLength) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode([]byte(tc.line)); err != nil {
				t.Errorf("Decode(%s): %v", tc.line, err)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	deep := func(n int) string {
		return `{"message_type":"task.complete","id":"a","outputs":{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
	}
	for _, tc := range []struct {
		name, line, kind, msg string
	}{
		{"empty", "  ", KindNotJSON, "empty line"},
		{"text", "hello", KindNotJSON, "not JSON: invalid character 'h'"},
		{"two objects", `{"message_type":"ack.warning","id":"a"} {}`, KindNotJSON, "something follows it at byte"},
		{"truncated", `{"message_type":"ack.warning","id":"a"`, KindNotJSON, "ends in the middle"},
		{"array", `[1,2]`, KindNotObject, "not a JSON object: got an array"},
		{"string", `"ack.warning"`, KindNotObject, "got a string"},
		{"null", `null`, KindNotObject, "got null"},
		{"no type", `{"id":"a"}`, KindInvalid, "missing field message_type"},
		{"type not a string", `{"message_type":5,"id":"a"}`, KindInvalid, "message_type must be a string, got a number"},
		{"empty type", `{"message_type":"","id":"a"}`, KindUnknownType, "message_type is empty"},
		{"typo", `{"message_type":"task.compelte","id":"a"}`, KindUnknownType, `unknown message type "task.compelte" (did you mean "task.complete"?)`},
		{"wrong case", `{"message_type":"Task.Complete","id":"a"}`, KindUnknownType, `(did you mean "task.complete"?)`},
		{"unknown", `{"message_type":"launch.missiles","id":"a"}`, KindUnknownType, `unknown message type "launch.missiles"`},
		{"no id", `{"message_type":"ack.warning"}`, KindInvalid, "ack.warning: missing field id"},
		{"empty id", `{"message_type":"ack.warning","id":""}`, KindInvalid, "ack.warning: id must not be empty"},
		{"numeric id", `{"message_type":"ack.warning","id":7}`, KindInvalid, "ack.warning: id must be a string, got a number"},
		{"long id", `{"message_type":"ack.warning","id":"` + strings.Repeat("x", MaxIDLength+1) + `"}`, KindInvalid, "more than 256"},
		{"in_reply_to not a string", `{"message_type":"ack.warning","id":"a","in_reply_to":null}`, KindInvalid, "in_reply_to must be a string, got null"},
		{"duplicate envelope", `{"message_type":"ack.warning","id":"a","id":"b"}`, KindInvalid, "duplicate field id"},
		{"duplicate field", `{"message_type":"ack.warning","id":"a","cue_id":"C","cue_id":"D"}`, KindInvalid, "ack.warning: duplicate field cue_id"},
		{"unknown field", `{"message_type":"task.complete","id":"a","Outputs":{}}`, KindInvalid, `task.complete: unknown field "Outputs" (did you mean "outputs"?)`},
		{"field typo", `{"message_type":"task.failed","id":"a","eror":"x"}`, KindInvalid, `unknown field "eror" (did you mean "error"?)`},
		{"missing field", `{"message_type":"task.failed","id":"a"}`, KindInvalid, "task.failed: missing field error"},
		{"missing fields", `{"message_type":"task.handoff","id":"a","to_agent":"b"}`, KindInvalid, "task.handoff: missing fields task_id, handoff_context"},
		{"null string", `{"message_type":"task.failed","id":"a","error":null}`, KindInvalid, "task.failed: field error: want a string, got null"},
		{"string for object", `{"message_type":"task.complete","id":"a","outputs":"done"}`, KindInvalid, "field outputs: want an object, got a string"},
		{"string for bool", `{"message_type":"task.failed","id":"a","error":"x","retriable":"yes"}`, KindInvalid, "field retriable: want a boolean, got a string"},
		{"object for array", `{"message_type":"memory.write","id":"a","key":"k","text":"t","tags":{}}`, KindInvalid, "field tags: want an array, got an object"},
		{"wrong element", `{"message_type":"memory.write","id":"a","key":"k","text":"t","tags":["a",1]}`, KindInvalid, "field tags: want a string, got a number"},
		{"fraction for integer", `{"message_type":"blackboard.ack","id":"a","key":"k","version":1.5}`, KindInvalid, "field version: 1.5 is not an integer in range"},
		{"integer overflow", `{"message_type":"blackboard.ack","id":"a","key":"k","version":99999999999999999999}`, KindInvalid, "not an integer in range"},
		{"huge number", `{"message_type":"status.usage","id":"a","credits":1e400}`, KindInvalid, "field credits: number 1e400 is out of range"},
		{"wrong task field", `{"message_type":"coord.go","id":"a","cue_id":"C","task":{"attempt":"1"}}`, KindInvalid, "coord.go: field task.attempt: want an integer, got a string"},
		{"huge nested number", `{"message_type":"task.complete","id":"a","outputs":{"x":1e400}}`, KindInvalid, "number 1e400 is out of range"},
		{"bad enum", `{"message_type":"question.ask","id":"a","question":"q","complexity":"hard"}`, KindInvalid, "field complexity must be one of quick, deep, got \"hard\""},
		{"enum typo", `{"message_type":"handoff.result","id":"a","status":"complete"}`, KindInvalid, `(did you mean "completed"?)`},
		{"empty question", `{"message_type":"question.ask","id":"a","question":"","complexity":"deep"}`, KindInvalid, "field question must not be empty"},
		{"negative credits", `{"message_type":"status.usage","id":"a","credits":-1}`, KindInvalid, "field credits must be at least 0, got -1"},
		{"attempt zero", `{"message_type":"coord.warning","id":"a","cue_id":"C","attempt":0}`, KindInvalid, "field attempt must be at least 1"},
		{"too deep", deep(MaxDepth - 1), KindInvalid, "nested more than 64 levels deep"},
		{"far too deep", deep(20000), KindNotJSON, "not JSON"},
		{"invalid UTF-8 in a string", "{\"message_type\":\"task.complete\",\"id\":\"a\",\"outputs\":{\"note\":\"caf\xe9\"}}", KindNotJSON, "invalid UTF-8 at byte offset 63 (0xe9)"},
		{"truncated UTF-8 sequence", "{\"message_type\":\"task.failed\",\"id\":\"a\",\"error\":\"\xe2\x82\"}", KindNotJSON, "invalid UTF-8 at byte offset 48 (0xe2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.line))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Decode(%.80s) = %+v, %v; want a *DecodeError", tc.line, m, err)
			}
			if de.Kind != tc.kind || !strings.Contains(de.Error(), tc.msg) {
				t.Errorf("Decode(%.80s):\n got %s: %v\nwant %s: ...%s...", tc.line, de.Kind, de, tc.kind, tc.msg)
			}
		})
	}
}

// samples holds one valid line per message type, written exactly as Encode
// writes it (envelope first, body fields in struct order, map keys sorted, no
// HTML escaping), so that decoding and re-encoding each must give it back byte
// for byte. They also seed the fuzz targets.
var samples = map[string]string{
	TypeCoordWarning:       `{"message_type":"coord.warning","id":"m1","run_id":"r1","cue_id":"CUE-100","cue_group":"deploy","target_agents":["a","b"],"estimated_go_time":"2026-01-20T14:00:00Z","preparation_required":["check"],"attempt":1}`,
	TypeCoordStandby:       `{"message_type":"coord.standby","id":"m2","run_id":"r1","cue_id":"CUE-100","target_agents":["a"],"ready_check":["ready?"]}`,
	TypeCoordGo:            `{"message_type":"coord.go","id":"m3","run_id":"r1","cue_id":"CUE-100","target_agents":["a"],"task":{"run_id":"r1","cue_id":"CUE-100","agent_id":"a","attempt":1,"inputs":{"name":"Ada"},"blackboard":{},"tools":["blackboard"]}}`,
	TypeCoordStop:          `{"message_type":"coord.stop","id":"m4","run_id":"r1","reason":"interrupted"}`,
	TypeAckWarning:         `{"message_type":"ack.warning","id":"a1","in_reply_to":"m1","cue_id":"CUE-100"}`,
	TypeAckStandby:         `{"message_type":"ack.standby","id":"a2","in_reply_to":"m2","cue_id":"CUE-100"}`,
	TypeTaskComplete:       `{"message_type":"task.complete","id":"a3","in_reply_to":"m3","cue_id":"CUE-100","outputs":{"greeting":"hello Ada"}}`,
	TypeTaskFailed:         `{"message_type":"task.failed","id":"a4","in_reply_to":"m3","cue_id":"CUE-100","error":"disk full","retriable":true}`,
	TypeTaskHandoff:        `{"message_type":"task.handoff","id":"h1","from_agent":"a","to_agent":"b","task_id":"T-1","handoff_context":{"next_steps":["test"],"task_description":"do it"}}`,
	TypeHandoffResult:      `{"message_type":"handoff.result","id":"h2","in_reply_to":"h1","task_id":"T-1","status":"completed","outputs":{"report":"ok"}}`,
	TypeTaskSpawn:          `{"message_type":"task.spawn","id":"s1","agent":"b","inputs":{"n":3}}`,
	TypeSpawnAccepted:      `{"message_type":"spawn.accepted","id":"s2","in_reply_to":"s1","task_id":"T-2"}`,
	TypeTaskAnnounce:       `{"message_type":"task.announce","id":"s3","task_id":"T-2","agent":"b","status":"failed","reason":"exit 1"}`,
	TypeBlackboardWrite:    `{"message_type":"blackboard.write","id":"b1","key":"k","value":{"x":[1,2.5,null,true]}}`,
	TypeBlackboardAck:      `{"message_type":"blackboard.ack","id":"b2","in_reply_to":"b1","key":"k","version":7}`,
	TypeBlackboardRead:     `{"message_type":"blackboard.read","id":"b3","key":"k"}`,
	TypeBlackboardValue:    `{"message_type":"blackboard.value","id":"b4","in_reply_to":"b3","key":"k","found":true,"value":"v","version":7,"author":"a"}`,
	TypeQuestionAsk:        `{"message_type":"question.ask","id":"q1","question":"Which region?","complexity":"quick"}`,
	TypeQuestionAnswer:     `{"message_type":"question.answer","id":"q2","in_reply_to":"q1","question_id":"Q-1","answer":"eu-west"}`,
	TypeMessageSend:        `{"message_type":"message.send","id":"x1","to":"b","body":{"hello":"there"}}`,
	TypeMessageSent:        `{"message_type":"message.sent","id":"x2","in_reply_to":"x1","to":"b"}`,
	TypeMessageUser:        `{"message_type":"message.user","id":"x3","body":"FYI: done <soon> & more"}`,
	TypeMessageNotice:      `{"message_type":"message.notice","id":"x4","from":"a","to":"b","kind":"message.send","body":"hi"}`,
	TypeMessageReceived:    `{"message_type":"message.received","id":"x5","from":"a","body":[1,"two"]}`,
	TypeDeliveryFailed:     `{"message_type":"delivery.failed","id":"x6","in_reply_to":"x1","reason":"b has ended"}`,
	TypeDiscoveryReport:    `{"message_type":"discovery.report","id":"d1","summary":"found a flaky test","body":{"test":"TestX"}}`,
	TypeMemoryWrite:        `{"message_type":"memory.write","id":"y1","key":"lesson","text":"retry the db","tags":["db","ops"]}`,
	TypeMemoryAck:          `{"message_type":"memory.ack","id":"y2","in_reply_to":"y1","key":"lesson"}`,
	TypeMemorySearch:       `{"message_type":"memory.search","id":"y3","query":"db","limit":5}`,
	TypeMemoryResults:      `{"message_type":"memory.results","id":"y4","in_reply_to":"y3","items":[{"key":"lesson","text":"retry the db"}]}`,
	TypeStatusUpdate:       `{"message_type":"status.update","id":"z1","state":"blocked","detail":"waiting for db"}`,
	TypeStatusUsage:        `{"message_type":"status.usage","id":"z2","credits":12.5}`,
	TypeEscalationConflict: `{"message_type":"escalation.conflict","id":"e1","conflict_type":"resource","cues_involved":["C1","C2"],"agents_involved":["a","b"],"resource_in_question":"db-pool","proposed_resolution":"priority-based","winner":"a","suggested_winner":"a","reason":"higher priority"}`,
	TypeEscalationError:    `{"message_type":"escalation.error","id":"e2","error":"cannot reach db","detail":{"host":"db1"}}`,
	TypeGuardWarning:       `{"message_type":"guard.warning","id":"g1","in_reply_to":"z1","reason":"same message 10 times","count":10}`,
	TypeProtocolError:      `{"message_type":"protocol.error","id":"p1","in_reply_to":"x9","reason":"coord.go is not sent by agents"}`,
	TypeAgentsList:         `{"message_type":"agents.list","id":"l1"}`,
	TypeAgentsListed:       `{"message_type":"agents.listed","id":"l2","in_reply_to":"l1","agents":[{"id":"a","task_id":"C","cue_id":"C","state":"working","provides":["x"],"accepts_handoff":true}]}`,
	TypeBroadcastSend:      `{"message_type":"broadcast.send","id":"b1","body":{"schema":"v2"}}`,
	TypeBroadcastSent:      `{"message_type":"broadcast.sent","id":"b2","in_reply_to":"b1","recipients":["C","D/1"]}`,
	TypeBroadcastNotice:    `{"message_type":"broadcast.notice","id":"b3","cue_id":"D/1","from":"a","body":"hi"}`,
	TypeStatusRequest:      `{"message_type":"status.request","id":"s1","cue_id":"C"}`,
	TypeStatusReport:       `{"message_type":"status.report","id":"s2","in_reply_to":"s1","state":"blocked","progress":0.4,"detail":"waiting for the db"}`,
	TypeNotifyMode:         `{"message_type":"notify.mode","id":"n1","mode":"summary"}`,
	TypeNotifyAck:          `{"message_type":"notify.ack","id":"n2","in_reply_to":"n1","mode":"summary"}`,
}

// edgeLines are broken or unusual lines, to seed the fuzz targets.
var edgeLines = []string{
	``,
	`hello`,
	`{"message_type":"ack.warning","id":"a"} {}`,
	`{"message_type":"ack.warning","id":"a"`,
	`[1,2]`,
	`null`,
	`{}`,
	`{"message_type":5,"id":"a"}`,
	`{"message_type":"task.compelte","id":"a"}`,
	`{"message_type":"ack.warning"}`,
	`{"message_type":"ack.warning","id":""}`,
	`{"message_type":"ack.warning","id":"a","id":"b"}`,
	`{"message_type":"task.complete","id":"a","Outputs":{}}`,
	`{"message_type":"task.failed","id":"a","error":null}`,
	`{"message_type":"blackboard.ack","id":"a","key":"k","version":1.5}`,
	`{"message_type":"status.usage","id":"a","credits":1e400}`,
	`{"message_type":"question.ask","id":"a","question":"q","complexity":"hard"}`,
	`{"message_type":"task.complete","id":"a","outputs":{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}`,
	"{\"message_type\":\"ack.warning\",\"id\":\"a\xff\"}",
}
