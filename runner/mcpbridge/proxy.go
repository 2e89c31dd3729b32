package mcpbridge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The variables that tell an agent's process where its attempt's endpoint
// is: orch sets them for every agent, and `orch mcp agent` reads them.
const (
	URLVar   = "ORCH_MCP_URL"
	TokenVar = "ORCH_MCP_TOKEN"
)

// Proxy serves MCP on stdio (in, out) for an agent that takes only stdio
// servers, relaying every message, both ways, to the endpoint at url as
// the attempt of token: the agent sees orch's server as if it ran in the
// process it started. It returns when in ends (nil), ctx ends, or the
// endpoint refuses the attempt (it ended) or is gone.
//
// Each message from the agent is sent on its own (a call waiting for an
// answer does not hold up the next one, or its cancellation); a call the
// endpoint refuses (the attempt ended: 401) is answered with a JSON-RPC
// error saying why.
func Proxy(ctx context.Context, in io.ReadCloser, out io.WriteCloser, url, token string) error {
	if url == "" || token == "" {
		return ErrNoEndpoint
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	local, err := (&mcp.IOTransport{Reader: in, Writer: out}).Connect(ctx)
	if err != nil {
		return err
	}
	defer local.Close()
	remote, err := (&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: Bearer(token, http.DefaultTransport)}}).Connect(ctx)
	if err != nil {
		return err
	}
	defer remote.Close()

	done := make(chan error, 2)
	go func() { // the endpoint's answers and notices, to the agent
		for {
			msg, err := remote.Read(ctx)
			if err == nil {
				err = local.Write(ctx, msg)
			}
			if err != nil {
				done <- errors.New(refusal(err))
				return
			}
		}
	}()
	go func() { // the agent's requests, to the endpoint
		for {
			msg, err := local.Read(ctx)
			if err != nil {
				done <- err
				return
			}
			go func() {
				if err := remote.Write(ctx, msg); err != nil {
					if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
						_ = local.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: refusal(err)}})
					}
				}
			}()
		}
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if errors.Is(err, io.EOF) {
		return nil // the agent closed its end: it is done with the server
	}
	return err
}

// refusal says why the endpoint refused a message, in the agent's words.
func refusal(err error) string {
	if strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "Unauthorized") {
		return "orch's endpoint refused the call: this attempt has ended (its token is no longer valid)"
	}
	return "orch's endpoint: " + err.Error()
}

// Bearer returns a transport that adds the attempt's token to every
// request.
func Bearer(token string, base http.RoundTripper) http.RoundTripper {
	return bearerTransport{token: token, base: base}
}

type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}
