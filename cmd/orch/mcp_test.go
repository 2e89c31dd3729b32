//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/mcpbridge"
)

// boardTask is an attempt that uses the blackboard, asks and messages
// (the other methods of the embedded nil Task are never called here).
type boardTask struct {
	mcpbridge.Task
	value    any
	answer   string // "": the question closes unanswered
	asked    mcpbridge.Question
	sent     []protocols.MessageSend
	refusals []string
}

func (b *boardTask) Ask(_ context.Context, q mcpbridge.Question) (protocols.QuestionAnswer, error) {
	b.asked = q
	if b.answer == "" {
		return protocols.QuestionAnswer{}, errors.New("question q-1 closed unanswered after question_timeout 30m")
	}
	return protocols.QuestionAnswer{Answer: b.answer}, nil
}
func (b *boardTask) SendMessage(_ context.Context, m protocols.MessageSend) (protocols.MessageSent, error) {
	if m.To == "gone" {
		return protocols.MessageSent{}, errors.New("message to gone not delivered: gone has ended")
	}
	b.sent = append(b.sent, m)
	return protocols.MessageSent{To: m.To}, nil
}
func (b *boardTask) Inbox(context.Context, time.Duration) ([]mcpbridge.Notice, error) {
	return []mcpbridge.Notice{{Type: protocols.TypeMessageReceived, Body: protocols.MessageReceived{From: "reviewer", Body: "looks good"}}}, nil
}

func (*boardTask) Denied(string) string       { return "" }
func (b *boardTask) Refused(tool, why string) { b.refusals = append(b.refusals, tool+": "+why) }
func (b *boardTask) BlackboardWrite(_ context.Context, w protocols.BlackboardWrite) (protocols.BlackboardAck, error) {
	b.value = w.Value
	return protocols.BlackboardAck{Key: w.Key, Version: 1}, nil
}
func (b *boardTask) BlackboardRead(_ context.Context, r protocols.BlackboardRead) (protocols.BlackboardValue, error) {
	return protocols.BlackboardValue{Key: r.Key, Found: true, Value: b.value, Version: 1, Author: "coder"}, nil
}

// orch mcp agent, through the command line, between an agent's stdio MCP
// client and a run's endpoint: the calls act as the attempt of
// ORCH_MCP_TOKEN; when the attempt ends, the shim ends with exit 1.
func TestMCPAgentShim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := mcpbridge.Start(mcpbridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	token, unregister := e.Register("build/1", &boardTask{})
	t.Setenv(mcpbridge.URLVar, e.URL())
	t.Setenv(mcpbridge.TokenVar, token)

	agentOut, shimIn := io.Pipe()
	shimOut, agentIn := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"mcp", "agent"}, &streams{in: agentOut, out: agentIn, err: &stderr})
		_ = agentIn.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: shimOut, Writer: shimIn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "blackboard_write", Arguments: map[string]any{"key": "k", "value": "through orch mcp agent"}})
	if err != nil || res.IsError {
		t.Fatalf("blackboard_write: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "blackboard_read", Arguments: map[string]any{"key": "k"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "through orch mcp agent") {
		t.Fatalf("blackboard_read: %v %+v", err, res)
	}

	unregister()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "blackboard_read", Arguments: map[string]any{"key": "k"}}); err == nil {
		t.Error("a call after the attempt ended succeeded")
	}
	select {
	case c := <-code:
		if c != 1 || !strings.Contains(stderr.String(), "this attempt has ended") {
			t.Errorf("exit %d, stderr %q; want 1 and why", c, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("orch mcp agent did not end with its attempt")
	}
}

func TestMCPAgentOutsideARun(t *testing.T) {
	t.Setenv(mcpbridge.URLVar, "")
	t.Setenv(mcpbridge.TokenVar, "")
	code, _, stderr := runOrch(t, "", "mcp", "agent")
	if code != 1 || !strings.Contains(stderr, "ORCH_MCP_URL and ORCH_MCP_TOKEN are set for the agents of a run") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runOrch(t, "", "mcp", "agent", "extra"); code != 2 {
		t.Errorf("an argument: exit %d, want 2", code)
	}
}

// orch ask, orch msg and orch inbox inside an agent: the tools of its
// attempt, through the command line.
func TestShellAgentCommands(t *testing.T) {
	e, err := mcpbridge.Start(mcpbridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	task := &boardTask{answer: "sqlite"}
	token, unregister := e.Register("build/1", task)
	t.Setenv(mcpbridge.URLVar, e.URL())
	t.Setenv(mcpbridge.TokenVar, token)

	code, out, stderr := runOrch(t, "", "ask", "--complexity", "deep", "--option", "sqlite", "--option", "postgres", "Which database?")
	if code != 0 || out != "sqlite\n" {
		t.Errorf("orch ask: exit %d, %q %q", code, out, stderr)
	}
	if q := task.asked; q.Question != "Which database?" || q.Complexity != "deep" || len(q.Options) != 2 {
		t.Errorf("the question reached the attempt as %+v", q)
	}
	if code, _, _ := runOrch(t, "", "ask", "--complexity", "hard", "?"); code != exitUsage {
		t.Errorf("orch ask --complexity hard: exit %d, want %d", code, exitUsage)
	}

	code, out, stderr = runOrch(t, "", "msg", "reviewer", `{"file": "api.go"}`)
	if code != 0 || out != "" || len(task.sent) != 1 || !reflect.DeepEqual(task.sent[0].Body, map[string]any{"file": "api.go"}) {
		t.Errorf("orch msg: exit %d, %q %q, sent %+v", code, out, stderr, task.sent)
	}
	code, _, stderr = runOrch(t, "", "msg", "gone", "hello")
	if code != 1 || !strings.Contains(stderr, "not delivered: gone has ended") {
		t.Errorf("orch msg to an ended task: exit %d, %q", code, stderr)
	}

	code, out, _ = runOrch(t, "", "inbox")
	if code != 0 || out != `message.received {"body":"looks good","from":"reviewer"}`+"\n" {
		t.Errorf("orch inbox: exit %d, %q", code, out)
	}
	code, out, _ = runOrch(t, "", "inbox", "--output", "json", "--wait", "1")
	if code != 0 || !strings.Contains(out, `"type": "message.received"`) {
		t.Errorf("orch inbox --output json: exit %d, %q", code, out)
	}
	if code, _, _ := runOrch(t, "", "inbox", "--wait", "301"); code != exitUsage {
		t.Errorf("orch inbox --wait 301: exit %d", code)
	}

	task.answer = ""
	code, out, stderr = runOrch(t, "", "ask", "Still there?")
	if code != 1 || out != "" || !strings.Contains(stderr, "closed unanswered") {
		t.Errorf("orch ask, closed unanswered: exit %d, %q %q", code, out, stderr)
	}
	unregister()
	code, _, stderr = runOrch(t, "", "ask", "Still there?")
	if code != 1 || !strings.Contains(stderr, "this attempt has ended") {
		t.Errorf("orch ask after the attempt ended: exit %d, %q", code, stderr)
	}
	t.Setenv(mcpbridge.TokenVar, "")
	code, _, stderr = runOrch(t, "", "inbox")
	if code != 1 || !strings.Contains(stderr, "not inside an agent orch started") {
		t.Errorf("orch inbox outside an agent: exit %d, %q", code, stderr)
	}
}
