//go:build unix

package fakeacp

import (
	"context"
	"strings"
	"testing"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/mcpbridge"
)

// boardTask is an attempt with a one-key blackboard (the other methods of
// the embedded nil Task are never called here).
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
	return protocols.BlackboardValue{Key: r.Key, Found: b.value != nil, Value: b.value, Version: 1, Author: "coder"}, nil
}

// The stand-in agent's MCP client, standard library only, against orch's
// endpoint as ACP's session/new gives it (an http entry with its token).
func TestMCPClientOverHTTP(t *testing.T) {
	e, err := mcpbridge.Start(mcpbridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	token, unregister := e.Register("build/1", &boardTask{})
	orch := MCPServer{Type: "http", Name: "orch", URL: e.URL(), Headers: []pair{{"Authorization", "Bearer " + token}}}
	c, err := DialMCP(orch)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if text, isErr, err := c.CallTool("blackboard_write", map[string]any{"key": "k", "value": "from acp"}); err != nil || isErr || !strings.Contains(text, `"version":1`) {
		t.Errorf("blackboard_write: %q %v %v", text, isErr, err)
	}
	if text, isErr, err := c.CallTool("blackboard_read", map[string]any{"key": "k"}); err != nil || isErr || !strings.Contains(text, `"value":"from acp"`) {
		t.Errorf("blackboard_read: %q %v %v", text, isErr, err)
	}
	if text, isErr, err := c.CallTool("blackboard_read", map[string]any{}); err != nil || !isErr || !strings.Contains(text, "key") {
		t.Errorf("blackboard_read without key: %q %v %v", text, isErr, err)
	}
	unregister()
	if _, _, err := c.CallTool("blackboard_read", map[string]any{"key": "k"}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("after the attempt ended: %v", err)
	}
}
