package mcpbridge

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one raw JSON-RPC request, as a client of any language would.
func post(t *testing.T, url, token, host, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

func TestEndpointOnLoopback(t *testing.T) {
	e := startEndpoint(t)
	if !strings.HasPrefix(e.URL(), "http://127.0.0.1:") || !strings.HasSuffix(e.URL(), "/mcp") || strings.HasSuffix(e.URL(), ":0/mcp") {
		t.Fatalf("URL %s: want http://127.0.0.1:PORT/mcp on an ephemeral port", e.URL())
	}
}

// A token works while its attempt is registered; after, 401, and the
// session it opened is closed.
func TestTokenDiesWithItsAttempt(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("coder")
	token, unregister := e.Register("build/1", task)
	other, _ := e.Register("review/1", newFakeTask("reviewer"))
	if code := post(t, e.URL(), token, "", initialize).StatusCode; code != http.StatusOK {
		t.Fatalf("a live token: %d", code)
	}
	cs := connect(t, e, token, nil)
	ok(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "k", "value": 1}))

	unregister()
	unregister() // twice is harmless
	if code := post(t, e.URL(), token, "", initialize).StatusCode; code != http.StatusUnauthorized {
		t.Errorf("the token of an ended attempt: %d, want 401", code)
	}
	if _, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "blackboard_read", Arguments: map[string]any{"key": "k"}}); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("the session of an ended attempt: %v, want 401 Unauthorized", err)
	}
	if n := len(task.callList()); n != 1 {
		t.Errorf("%d calls reached the task, want the one before the end", n)
	}
	for _, bad := range []string{"", "not-a-token", token + "0"} {
		if code := post(t, e.URL(), bad, "", initialize).StatusCode; code != http.StatusUnauthorized {
			t.Errorf("token %q: %d, want 401", bad, code)
		}
	}
	if code := post(t, e.URL(), other, "", initialize).StatusCode; code != http.StatusOK {
		t.Errorf("another attempt's token after the first ended: %d", code)
	}
}

// A session belongs to the token that opened it: another attempt's token
// cannot act as it.
func TestSessionBoundToItsToken(t *testing.T) {
	e := startEndpoint(t)
	coder, _ := e.Register("build/1", newFakeTask("coder"))
	reviewer, _ := e.Register("review/1", newFakeTask("reviewer"))
	resp := post(t, e.URL(), coder, "", initialize)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("no session id")
	}
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, e.URL(),
		strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+reviewer)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	got, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = got.Body.Close()
	if got.StatusCode == http.StatusOK {
		t.Fatalf("another attempt's token used the coder's session: %d", got.StatusCode)
	}
}

// DNS rebinding: a page in a browser that resolves its own name to
// 127.0.0.1 cannot reach the endpoint (the SDK's protection, on).
func TestDNSRebindingRefused(t *testing.T) {
	e := startEndpoint(t)
	token, _ := e.Register("build/1", newFakeTask("coder"))
	if code := post(t, e.URL(), token, "evil.example:80", initialize).StatusCode; code != http.StatusForbidden {
		t.Errorf("a foreign Host: %d, want 403", code)
	}
}

func TestBodyTooLarge(t *testing.T) {
	e := startEndpoint(t)
	token, _ := e.Register("build/1", newFakeTask("coder"))
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("x", maxBody) + `"}}`
	if code := post(t, e.URL(), token, "", body).StatusCode; code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over %d bytes: %d, want 413", maxBody, code)
	}
}

// An agent that opens 1,000 connections and sends nothing, or floods the
// endpoint with calls, or never reads its responses, does not stall
// another agent's calls.
func TestMisbehavingClientsDoNotStall(t *testing.T) {
	e := startEndpoint(t)
	hog := newFakeTask("hog")
	hogToken, _ := e.Register("hog/1", hog)
	task := newFakeTask("coder")
	token, _ := e.Register("build/1", task)
	addr := strings.TrimSuffix(strings.TrimPrefix(e.URL(), "http://"), "/mcp")

	var idle []net.Conn
	t.Cleanup(func() {
		for _, c := range idle {
			_ = c.Close()
		}
	})
	for i := 0; i < 1000; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		idle = append(idle, c)
	}

	// A reader that never reads: pipelined reads of a 1 MiB value fill its
	// socket, the server's writes to it block.
	hs := connect(t, e, hogToken, nil)
	ok(t, "blackboard_write", callTool(t, hs, "blackboard_write", map[string]any{"key": "big", "value": strings.Repeat("y", MaxValue-100)}))
	session := hs.ID()
	stuck, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stuck.Close() })
	var pipelined bytes.Buffer
	for i := 0; i < 20; i++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"blackboard_read","arguments":{"key":"big"}}}`, i+10)
		fmt.Fprintf(&pipelined, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n"+
			"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", addr, hogToken, session, len(body), body)
	}
	if _, err := stuck.Write(pipelined.Bytes()); err != nil {
		t.Fatal(err)
	}

	// A flood: more calls in flight than an attempt may have, each waiting
	// until the test releases it.
	hog.release = make(chan struct{})
	codes := make(chan int, 3*MaxCalls)
	for i := 0; i < 3*MaxCalls; i++ {
		go func() {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"inbox","arguments":{"wait_seconds":300}}}`, 1000+i)
			codes <- post(t, e.URL(), hogToken, "", body, "Mcp-Session-Id", session, "Mcp-Protocol-Version", "2025-06-18").StatusCode
		}()
	}
	for code := range codes { // the first answers are the refused ones: the rest wait
		if code != http.StatusTooManyRequests {
			t.Fatalf("a call of the flood ended before its release: %d", code)
		}
		break
	}

	// Meanwhile another agent's calls are served (were they not, the test
	// would end at its deadline).
	cs := connect(t, e, token, nil)
	for i := 0; i < 20; i++ {
		ok(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": fmt.Sprint(i), "value": i}))
	}
	close(hog.release)
	n429 := 1
	for i := 1; i < 3*MaxCalls; i++ {
		if <-codes == http.StatusTooManyRequests {
			n429++
		}
	}
	if n429 < MaxCalls { // 192 calls, at most 64 in flight (the hog's own stream and stuck reads hold some)
		t.Errorf("%d of %d calls refused with 429, want at least %d", n429, 3*MaxCalls, MaxCalls)
	}
}

// 50 agents at once, 100 calls each: nothing lost, no error.
func TestManyAgentsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 calls")
	}
	e := startEndpoint(t)
	const agents, calls = 50, 100
	task := newFakeTask("shared") // one board, as a run's
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for a := 0; a < agents; a++ {
		token, _ := e.Register(fmt.Sprintf("agent%d/1", a), task)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := dial(testCtx(t), e.URL(), token, nil)
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for i := 0; i < calls; i++ {
				res, err := callWrite(cs, fmt.Sprintf("a%d", a), i)
				if err != nil || res.IsError {
					errs <- fmt.Errorf("agent %d call %d: %v %s", a, i, err, text(res))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for a := 0; a < agents; a++ {
		if e := task.board[fmt.Sprintf("a%d", a)]; e.Version != calls || e.Value != float64(calls-1) {
			t.Errorf("agent %d's key: %+v, want version %d", a, e, calls)
		}
	}
}

// Attempts denied the same tools share a server, never a task: each call
// acts as the attempt whose token made it.
func TestEachCallActsAsItsAttempt(t *testing.T) {
	e := startEndpoint(t)
	coder, reviewer, denied := newFakeTask("coder"), newFakeTask("reviewer"), newFakeTask("guest")
	denied.denied["blackboard"] = "tools.deny"
	ct, _ := e.Register("build/1", coder)
	rt, _ := e.Register("review/1", reviewer)
	dt, _ := e.Register("guest/1", denied)
	cs, rs, ds := connect(t, e, ct, nil), connect(t, e, rt, nil), connect(t, e, dt, nil)
	ok(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "k", "value": "from coder"}))
	if r := ok(t, "blackboard_read", callTool(t, rs, "blackboard_read", map[string]any{"key": "k"})); r["found"] != false {
		t.Errorf("the reviewer's call acted as the coder: %v", r)
	}
	if len(coder.callList()) != 1 || len(reviewer.callList()) != 1 {
		t.Errorf("calls: coder %v, reviewer %v", coder.callList(), reviewer.callList())
	}
	if got := listed(t, ds); slices.Contains(got, "blackboard_read") {
		t.Errorf("the guest is offered a denied tool: %v", got)
	}
	if got := listed(t, cs); !slices.Contains(got, "blackboard_read") {
		t.Errorf("the coder is not offered the blackboard: %v", got)
	}
	if len(e.servers) != 2 {
		t.Errorf("%d servers for two policies", len(e.servers))
	}
}

func TestSessionsPerAttemptBounded(t *testing.T) {
	e := startEndpoint(t)
	hog, _ := e.Register("hog/1", newFakeTask("hog"))
	other, _ := e.Register("build/1", newFakeTask("coder"))
	for i := 0; i < MaxSessions; i++ {
		if code := post(t, e.URL(), hog, "", initialize).StatusCode; code != http.StatusOK {
			t.Fatalf("session %d: %d", i, code)
		}
	}
	if code := post(t, e.URL(), hog, "", initialize).StatusCode; code != http.StatusTooManyRequests {
		t.Errorf("session %d of one attempt: %d, want 429", MaxSessions+1, code)
	}
	if code := post(t, e.URL(), other, "", initialize).StatusCode; code != http.StatusOK {
		t.Errorf("another attempt's session: %d", code)
	}
}

// Closing the endpoint ends its sessions: nothing is left to wait for its
// idle timeout (a long orch process runs many runs).
func TestCloseEndsSessions(t *testing.T) {
	e, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := e.Register("build/1", newFakeTask("coder"))
	connect(t, e, token, nil)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, srv := range e.servers {
		for range srv.Sessions() {
			t.Fatal("a session outlived its endpoint")
		}
	}
}

// A server (its tools' schemas, the costly part of an endpoint) is made by
// the first request that needs it, not when an attempt registers: most
// attempts never call a tool.
func TestServerMadeAtFirstRequest(t *testing.T) {
	e := startEndpoint(t)
	token, _ := e.Register("build/1", newFakeTask("coder"))
	other, _ := e.Register("build/2", newFakeTask("coder"))
	e.mu.Lock()
	made := len(e.servers)
	e.mu.Unlock()
	if made != 0 {
		t.Fatalf("%d servers made for attempts that called nothing, want 0", made)
	}
	if got := listed(t, connect(t, e, token, nil)); !slices.Contains(got, "blackboard_read") {
		t.Errorf("the first attempt to call is not offered the blackboard: %v", got)
	}
	ok(t, "blackboard_write", callTool(t, connect(t, e, other, nil), "blackboard_write", map[string]any{"key": "k", "value": 1}))
	if len(e.servers) != 1 {
		t.Errorf("%d servers for one policy", len(e.servers))
	}
}
