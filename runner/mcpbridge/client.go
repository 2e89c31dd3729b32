package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client calls the tools as an attempt, from a shell agent's commands
// (orch ask, orch msg, orch inbox): one session per call.
type Client struct {
	URL, Token string
}

// ErrNoEndpoint says a command that acts as an attempt runs outside one.
var ErrNoEndpoint = errors.New("not inside an agent orch started: " + URLVar + " and " + TokenVar + " are set for the agents of a run")

// ClientFromEnv is the attempt's client, from the variables orch sets.
func ClientFromEnv() (Client, error) {
	c := Client{URL: os.Getenv(URLVar), Token: os.Getenv(TokenVar)}
	if c.URL == "" || c.Token == "" {
		return c, ErrNoEndpoint
	}
	return c, nil
}

// ToolError is a tool's error result: the text says why.
type ToolError struct{ Tool, Text string }

func (e *ToolError) Error() string { return e.Tool + ": " + e.Text }

// Call calls tool with args and decodes its structured result into out
// (nil: ignored). A tool's error result is a *ToolError; a refused token
// says the attempt has ended.
func (c Client) Call(ctx context.Context, tool string, args, out any) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "orch", Version: "cli"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.URL, MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: Bearer(c.Token, http.DefaultTransport)}}, nil)
	if err != nil {
		return errors.New(refusal(err))
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return errors.New(refusal(err))
	}
	if res.IsError {
		return &ToolError{Tool: tool, Text: resultText(res)}
	}
	if out == nil {
		return nil
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		return fmt.Errorf("%s: an unexpected result: %v", tool, err)
	}
	return nil
}
