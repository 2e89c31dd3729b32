package mcpbridge

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startEndpoint starts an endpoint closed when the test ends.
func startEndpoint(t testing.TB) *Endpoint {
	t.Helper()
	e, err := Start(Options{Progress: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// testCtx bounds a test's waits: a broken bridge fails the test instead of
// hanging it.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect opens an MCP session with the SDK's client, as token's attempt.
func connect(t testing.TB, e *Endpoint, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := dial(testCtx(t), e.URL(), token, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func dial(ctx context.Context, url, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: Bearer(token, http.DefaultTransport)}}
	return client.Connect(ctx, tr, nil)
}

// callTool calls a tool and fails the test on a protocol error.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: a protocol error, not a tool result: %v", name, err)
	}
	return res
}

// ok checks a result is not an error and returns its structured content.
func ok(t testing.TB, name string, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: error result %q", name, text(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	return m
}

// failed checks a result is an error whose text holds every one of want.
func failed(t testing.TB, name string, res *mcp.CallToolResult, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s: want an error result, got %q", name, text(res))
	}
	for _, w := range want {
		if !strings.Contains(text(res), w) {
			t.Errorf("%s: error %q does not say %q", name, text(res), w)
		}
	}
}

func text(res *mcp.CallToolResult) string { return resultText(res) }
