// The runnable examples of the documentation, and the test of the example
// Python agent in examples/protocol.
package protocols_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orch-cli/orch/protocols"
)

func ExampleEncode() {
	m := protocols.Message{Type: protocols.TypeAckWarning, ID: "a81c4f00e2b7", InReplyTo: "3f9a0c1b2d4e",
		Body: protocols.AckWarning{CueID: "CUE-100"}}
	line, err := protocols.Encode(m)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(line)
	// Output:
	// {"message_type":"ack.warning","id":"a81c4f00e2b7","in_reply_to":"3f9a0c1b2d4e","cue_id":"CUE-100"}
}

func ExampleDecode() {
	m, err := protocols.Decode([]byte(`{"message_type":"task.complete","id":"a1","in_reply_to":"g1","outputs":{"greeting":"hello"}}`))
	fmt.Println(m.Type, m.InReplyTo, m.Body.(protocols.TaskComplete).Outputs["greeting"], err)

	for _, bad := range []string{
		`{"message_type":"task.compelte","id":"a1"}`,
		`{"message_type":"task.failed","id":"a1"}`,
		`task.complete`,
	} {
		_, err := protocols.Decode([]byte(bad))
		fmt.Printf("%s: %v\n", err.(*protocols.DecodeError).Kind, err)
	}
	// Output:
	// task.complete g1 hello <nil>
	// unknown-type: unknown message type "task.compelte" (did you mean "task.complete"?)
	// invalid: task.failed: missing field error
	// not-json: not JSON: invalid character 'a' in literal true (expecting 'r') (at byte 2)
}

// The runner's loop over an agent's stdout: read, check the answer, route.
func ExampleReader() {
	warning := protocols.Message{Type: protocols.TypeCoordWarning, ID: "w1", Body: protocols.CoordWarning{CueID: "CUE-100"}}
	stdout := strings.NewReader(`{"message_type":"ack.warning","id":"a1","in_reply_to":"w1","cue_id":"CUE-100"}
{"message_type":"status.update","id":"a2","state":"preparing"}
Traceback (most recent call last):
`)
	r := protocols.NewReader(stdout, protocols.DefaultMaxLine)
	for {
		m, _, err := r.Next()
		if err != nil {
			fmt.Println("error:", err)
			if _, ok := err.(*protocols.DecodeError); ok {
				continue // a malfunction: record it, then go on reading
			}
			break
		}
		ch, _ := protocols.Route(m.Type)
		fmt.Printf("%s -> %s channel", m.Type, ch)
		if m.InReplyTo == warning.ID {
			fmt.Printf(", reply check: %v", protocols.CheckReply(warning, m))
		}
		fmt.Println()
	}
	// Output:
	// ack.warning -> cue channel, reply check: <nil>
	// status.update -> status channel
	// error: not JSON: invalid character 'T' looking for beginning of value (at byte 1); line: "Traceback (most recent call last):"
	// error: EOF
}

func ExampleCheckReply() {
	goMsg := protocols.New(protocols.CoordGo{CueID: "CUE-100"})
	fmt.Println(protocols.CheckReply(goMsg, protocols.Reply(goMsg, protocols.TaskComplete{CueID: "CUE-100"})))
	fmt.Println(protocols.CheckReply(goMsg, protocols.Reply(goMsg, protocols.AckStandby{})))
	fmt.Println(protocols.CheckReply(goMsg, protocols.Reply(goMsg, protocols.TaskFailed{CueID: "CUE-200", Error: "x"})))
	// Output:
	// <nil>
	// expected task.complete or task.failed in reply to coord.go, got ack.standby
	// task.failed: reply for cue CUE-200, but this is cue CUE-100
}

// TestPythonEchoAgent drives examples/protocol/agents/echo_agent.py through
// WARNING, STANDBY and GO as orch would, and checks each answer with
// CheckReply: the example in the documentation must speak the protocol.
func TestPythonEchoAgent(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	for _, ending := range []string{"coord.stop", "EOF"} {
		t.Run("ends at "+ending, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "python3", "examples/protocol/agents/echo_agent.py")
			cmd.Dir = ".." // the module root
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w, r := protocols.NewWriter(stdin), protocols.NewReader(stdout, protocols.DefaultMaxLine)

			// One request at a time, as orch does: the answer must come before
			// the next request is sent, so a buffered stdout would hang here
			// (until the timeout kills the agent).
			exchange := func(body protocols.Body) protocols.Message {
				t.Helper()
				req := protocols.New(body)
				if err := w.Send(req); err != nil {
					t.Fatalf("send %s: %v", req.Type, err)
				}
				reply, raw, err := r.Next()
				if err != nil {
					t.Fatalf("answer to %s: %v (%q)\nstderr:\n%s", req.Type, err, raw, stderr.String())
				}
				if err := protocols.CheckReply(req, reply); err != nil {
					t.Fatalf("%v\nline: %s", err, raw)
				}
				return reply
			}
			exchange(protocols.CoordWarning{RunID: "r1", CueID: "ECHO-100", Attempt: 1})
			exchange(protocols.CoordStandby{RunID: "r1", CueID: "ECHO-100"})
			reply := exchange(protocols.CoordGo{RunID: "r1", CueID: "ECHO-100", Task: protocols.Task{
				RunID: "r1", CueID: "ECHO-100", AgentID: "protocol-echo", Attempt: 1,
				Inputs: map[string]any{"greeting_name": "Ada", "n": 2.0, "tags": []any{"a"}},
			}})
			done, ok := reply.Body.(protocols.TaskComplete)
			want := map[string]any{"greeting_name": "Ada", "n": 2.0, "tags": []any{"a"}, "input_keys": []any{"greeting_name", "n", "tags"}}
			if !ok || done.CueID != "ECHO-100" || !reflect.DeepEqual(done.Outputs, want) {
				t.Errorf("got %+v\nwant outputs %v", reply.Body, want)
			}

			if ending == "coord.stop" {
				if err := w.Send(protocols.New(protocols.CoordStop{RunID: "r1", Reason: "test over"})); err != nil {
					t.Fatal(err)
				}
			} else {
				stdin.Close()
			}
			if m, raw, err := r.Next(); err == nil || len(raw) > 0 {
				t.Errorf("unexpected output after the GO: %+v %q %v", m, raw, err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("the agent did not exit cleanly: %v\nstderr:\n%s", err, stderr.String())
			}
		})
	}
}
