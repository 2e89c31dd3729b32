//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/mcpbridge"
)

// boardTask is an attempt that only uses the blackboard (the other
// methods of the embedded nil Task are never called here).
type boardTask struct {
	mcpbridge.Task
	value any
}

func (*boardTask) Denied(string) string   { return "" }
func (*boardTask) Refused(string, string) {}
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
	if code != 1 || !strings.Contains(stderr, "ORCH_MCP_URL and ORCH_MCP_TOKEN are set by orch for the agents it starts") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runOrch(t, "", "mcp", "agent", "extra"); code != 2 {
		t.Errorf("an argument: exit %d, want 2", code)
	}
}
