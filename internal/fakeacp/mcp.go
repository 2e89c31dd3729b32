//go:build unix

package fakeacp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// MCPServer is an entry of session/new's mcpServers, as ACP sends it: a
// stdio server (Command) or, with Type "http", an HTTP one.
type MCPServer struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []pair   `json:"env"`
	URL     string   `json:"url"`
	Headers []pair   `json:"headers"`
}

type pair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MCPClient is the least MCP client an agent needs to call tools, on the
// standard library only: initialize, then tools/call, over streamable
// HTTP (a JSON or an SSE answer) or a stdio server it starts.
type MCPClient struct {
	call    func(body []byte) ([]byte, error)
	close   func()
	next    int
	mu      sync.Mutex
	session string
}

// DialMCP connects to s and initializes the session.
func DialMCP(s MCPServer) (*MCPClient, error) {
	c := &MCPClient{close: func() {}}
	if s.Type == "http" {
		c.call = func(body []byte) ([]byte, error) { return c.post(s, body) }
	} else if err := c.start(s); err != nil {
		return nil, err
	}
	if _, err := c.Request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "fake-acp", "version": "1"}}); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.call([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close ends the session (a stdio server: its process).
func (c *MCPClient) Close() { c.close() }

// CallTool calls a tool; it returns the result's text and whether it is
// an error result.
func (c *MCPClient) CallTool(name string, args any) (text string, isError bool, err error) {
	raw, err := c.Request("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", false, err
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return "", false, err
	}
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, " "), res.IsError, nil
}

// Request sends a request and returns its result.
func (c *MCPClient) Request(method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	out, err := c.call(body)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", method, err, out)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("%s: %s", method, resp.Error.Message)
	}
	return resp.Result, nil
}

// post sends one message over streamable HTTP and returns the response
// to it (the last data line of an SSE answer; nothing for a notification).
func (c *MCPClient) post(s MCPServer, body []byte) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range s.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	c.mu.Lock()
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	c.mu.Unlock()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.mu.Lock()
		c.session = id
		c.mu.Unlock()
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return io.ReadAll(resp.Body)
	}
	var last []byte
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = []byte(data)
			if bytes.Contains(last, []byte(`"id"`)) && !bytes.Contains(last, []byte(`"method"`)) {
				return last, nil // the response: progress notifications come before it
			}
		}
	}
	return last, sc.Err()
}

// start starts a stdio server (orch mcp agent) and speaks to it by lines.
func (c *MCPClient) start(s MCPServer) error {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = os.Environ()
	for _, e := range s.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 1<<20), 16<<20)
	c.close = func() { in.Close(); _ = cmd.Wait() }
	c.call = func(body []byte) ([]byte, error) {
		if _, err := in.Write(append(body, '\n')); err != nil {
			return nil, err
		}
		if !bytes.Contains(body, []byte(`"id"`)) {
			return nil, nil // a notification: no answer
		}
		for lines.Scan() { // skip notifications (progress) to the answer
			if !bytes.Contains(lines.Bytes(), []byte(`"method"`)) {
				return append([]byte(nil), lines.Bytes()...), nil
			}
		}
		return nil, errors.Join(errors.New("the stdio server ended"), lines.Err())
	}
	return nil
}

// mcpTurn calls the tools of the session's server named orch, one per
// argument ("TOOL {JSON arguments}"), and reports each result in the reply.
func (a *agent) mcpTurn(session string) string {
	a.mu.Lock()
	servers := a.mcp[session]
	a.mu.Unlock()
	var orch *MCPServer
	var names []string
	for i, s := range servers {
		names = append(names, s.Name+"("+or(s.Type, "stdio")+")")
		if s.Name == "orch" {
			orch = &servers[i]
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "servers: %s\n", strings.Join(names, " "))
	if orch == nil {
		return b.String() + "no server named orch\n"
	}
	c, err := DialMCP(*orch)
	if err != nil {
		return b.String() + "connect: " + err.Error() + "\n"
	}
	defer c.Close()
	for _, call := range a.args {
		tool, args, _ := strings.Cut(call, " ")
		var v any = map[string]any{}
		if args != "" {
			_ = json.Unmarshal([]byte(args), &v)
		}
		text, isError, err := c.CallTool(tool, v)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "%s: failed: %v\n", tool, err)
		case isError:
			fmt.Fprintf(&b, "%s: error: %s\n", tool, text)
		default:
			fmt.Fprintf(&b, "%s: %s\n", tool, text)
		}
	}
	return b.String()
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}
