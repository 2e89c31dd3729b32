package mcpbridge

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// proxied starts Proxy between an SDK client (the agent, on pipes as on
// stdio) and the endpoint; it returns the agent's session and Proxy's
// outcome.
func proxied(t *testing.T, e *Endpoint, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, <-chan error) {
	t.Helper()
	agentOut, proxyIn := io.Pipe()
	proxyOut, agentIn := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Proxy(testCtx(t), agentOut, agentIn, e.URL(), token) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, opts)
	cs, err := client.Connect(testCtx(t), &mcp.IOTransport{Reader: proxyOut, Writer: proxyIn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, done
}

func TestProxyRelaysEverything(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("coder")
	task.denied["memory"] = "tools.deny"
	token, unregister := e.Register("build/1", task)
	var progress atomic.Int32
	cs, done := proxied(t, e, token, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		if progress.Add(1) == 2 {
			task.answers <- "through the shim"
		}
	}})

	if got := listed(t, cs); len(got) != len(wantTools)-2 {
		t.Errorf("tools through the shim: %v", got)
	}
	ok(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "k", "value": "v"}))
	if r := ok(t, "blackboard_read", callTool(t, cs, "blackboard_read", map[string]any{"key": "k"})); r["value"] != "v" || r["author"] != "coder" {
		t.Errorf("blackboard_read: %v", r)
	}
	failed(t, "memory_write", callTool(t, cs, "memory_write", map[string]any{"key": "k", "text": "t"}), "tools.deny")

	// An ask waits, with progress, while other calls go on.
	params := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "?"}}
	params.SetProgressToken(7)
	res, err := cs.CallTool(testCtx(t), params)
	if err != nil {
		t.Fatal(err)
	}
	if a := ok(t, "ask", res); a["answer"] != "through the shim" {
		t.Errorf("ask: %v", a)
	}

	// The attempt ends: a call says so.
	unregister()
	_, err = cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "inbox"})
	if err == nil || !strings.Contains(err.Error(), "this attempt has ended") {
		t.Errorf("a call after the attempt ended: %v", err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "this attempt has ended") {
		t.Errorf("Proxy after its attempt ended: %v", err)
	}
}

// The agent closing its end (stdin) ends the shim without an error.
func TestProxyEndsWithItsAgent(t *testing.T) {
	e := startEndpoint(t)
	token, _ := e.Register("build/1", newFakeTask("coder"))
	cs, done := proxied(t, e, token, nil)
	ok(t, "list_agents", callTool(t, cs, "list_agents", nil))
	_ = cs.Close()
	if err := <-done; err != nil {
		t.Errorf("Proxy after the agent closed stdin: %v", err)
	}
}

func TestProxyWithoutEndpoint(t *testing.T) {
	err := Proxy(context.Background(), io.NopCloser(strings.NewReader("")), nopWriteCloser{io.Discard}, "", "")
	if err == nil || !strings.Contains(err.Error(), "ORCH_MCP_URL and ORCH_MCP_TOKEN are set for the agents of a run") {
		t.Errorf("Proxy without its variables: %v", err)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
